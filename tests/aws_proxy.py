#!/usr/bin/python3
"""A loopback stand-in for AWS S3's front door, for tests: it listens with TLS on
127.0.0.1, takes AWS's host names (<bucket>.s3.<region>.amazonaws.com, virtual-hosted
style; s3.<region>.amazonaws.com/<bucket>, path style) as a client reaches them through
curl's CONNECT_TO (vdsql_config('connect_to')), and answers as AWS does where a bucket
lives in another region than the request says:

- sent to another region's host: 301 PermanentRedirect, the bucket's region in the header
  x-amz-bucket-region (AWS's 301 names it there; the body has no <Region>);
- on the right host but signed for another region (the Credential scope of the
  Authorization header): 400 AuthorizationHeaderMalformed, the region in the body's
  <Region> (a HEAD, which has no body, gets the header instead).

Everything else is forwarded as it came, Host header and all, to radosgw (started with
RGW_DNS_NAME = s3.<home region>.amazonaws.com, so it reads the same host names and checks
the signature over them). A bucket listed with --elsewhere gets a 301 whose Location points
to another host and names no region (a client must not follow it); one listed with --flip
a 301 naming another region wherever it is asked (a client must not ask for ever).
Nothing here checks a signature: radosgw does.

  aws_proxy.py --upstream http://127.0.0.1:PORT --cert C --key K --home eu-west-1
               [--region BUCKET=REGION ...] [--elsewhere BUCKET ...] [--flip BUCKET ...] --log FILE
prints the port it listens on, then serves until killed. FILE gets one JSON line per
request: method, host, path (with query), signed (the region signed for), status."""
import argparse
import http.client
import http.server
import json
import re
import socketserver
import ssl
import sys
import threading
import urllib.parse

VHOST = re.compile(r"^(?P<bucket>.+)\.s3\.(?P<region>[a-z0-9-]+)\.amazonaws\.com$")
PHOST = re.compile(r"^s3\.(?P<region>[a-z0-9-]+)\.amazonaws\.com$")
SCOPE = re.compile(r"Credential=[^/,]*/[0-9]{8}/(?P<region>[^/,]*)/s3/aws4_request")
HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}


def error_xml(code, message, extra=""):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code><Message>%s</Message>%s'
            "<RequestId>0</RequestId><HostId>loopback</HostId></Error>" % (code, message, extra)).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as AWS: curl reuses its connections

    def log_message(self, *args):
        pass

    def record(self, signed, status):
        line = json.dumps({"method": self.command, "host": self.headers.get("Host", ""), "path": self.path,
                           "signed": signed, "status": status})
        with self.server.lock:
            with open(self.server.opts.log, "a") as f:
                f.write(line + "\n")

    def answer(self, status, reason, headers, body, signed):
        if self.command == "HEAD":
            body = b""
        self.record(signed, status)  # before the answer: a client that has it may look at the log at once
        self.send_response(status, reason)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def handle_any(self):
        o = self.server.opts
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        host = self.headers.get("Host", "").split(":")[0].lower()
        m = SCOPE.search(self.headers.get("Authorization", ""))
        signed = m.group("region") if m else None
        v, p = VHOST.match(host), PHOST.match(host)
        if v:
            bucket, at = v.group("bucket"), v.group("region")
        elif p:
            bucket = urllib.parse.unquote(self.path.lstrip("/").split("/")[0].split("?")[0])
            at = p.group("region")
        else:
            return self.answer(400, "Bad Request", [], error_xml("InvalidHost", "not an AWS S3 host: " + host), signed)
        home = o.regions.get(bucket, o.home)
        if bucket in o.elsewhere:
            # a redirect that names no region, to a host that is not the bucket's
            return self.answer(301, "Moved Permanently", [("Location", "https://elsewhere.example.net" + self.path)],
                               error_xml("PermanentRedirect", "elsewhere", "<Bucket>%s</Bucket>" % bucket), signed)
        if bucket in o.flip:
            # a bucket that names the other region wherever it is asked: a client asks once more, not for ever
            other = o.home if at != o.home else "us-east-1" if o.home != "us-east-1" else "us-west-2"
            return self.answer(301, "Moved Permanently", [("x-amz-bucket-region", other)],
                               error_xml("PermanentRedirect", "flip", "<Bucket>%s</Bucket>" % bucket), signed)
        if at != home:
            return self.answer(301, "Moved Permanently", [("x-amz-bucket-region", home), ("Content-Type", "application/xml")],
                               error_xml("PermanentRedirect", "The bucket you are attempting to access must be addressed "
                                         "using the specified endpoint.", "<Endpoint>%s.s3.%s.amazonaws.com</Endpoint>"
                                         "<Bucket>%s</Bucket>" % (bucket, home, bucket)), signed)
        if signed is not None and signed != home:
            hdr = [("x-amz-bucket-region", home)] if self.command == "HEAD" else []
            return self.answer(400, "Bad Request", hdr + [("Content-Type", "application/xml")],
                               error_xml("AuthorizationHeaderMalformed", "The authorization header is malformed; the "
                                         "region '%s' is wrong; expecting '%s'" % (signed, home),
                                         "<Region>%s</Region>" % home), signed)
        c = http.client.HTTPConnection(o.up.hostname, o.up.port, timeout=30)
        try:
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "expect"}
            c.request(self.command, self.path, body=body if (n or self.command in ("PUT", "POST")) else None,
                      headers=hdrs)
            r = c.getresponse()
            data = r.read()
            out = [(k, v) for k, v in r.getheaders() if k.lower() not in HOP and k.lower() != "content-length"]
            if self.command == "HEAD":  # the object's length, not the (empty) body's
                cl = r.getheader("Content-Length")
                self.record(signed, r.status)
                self.send_response(r.status, r.reason)
                for k, val in out:
                    self.send_header(k, val)
                if cl is not None:
                    self.send_header("Content-Length", cl)
                self.end_headers()
                return
            self.answer(r.status, r.reason, out, data, signed)
        finally:
            c.close()

    do_GET = do_HEAD = do_PUT = do_DELETE = do_POST = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--home", required=True, help="the region of every bucket not given with --region")
    ap.add_argument("--region", action="append", default=[], help="BUCKET=REGION")
    ap.add_argument("--elsewhere", action="append", default=[])
    ap.add_argument("--flip", action="append", default=[], help="a bucket that always names the region it is not asked in")
    ap.add_argument("--log", required=True)
    o = ap.parse_args()
    o.up = urllib.parse.urlparse(o.upstream)
    o.regions = dict(x.split("=", 1) for x in o.region)
    o.elsewhere, o.flip = set(o.elsewhere), set(o.flip)
    srv = Server(("127.0.0.1", 0), Handler)
    srv.opts, srv.lock = o, threading.Lock()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(o.cert, o.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
