#!/usr/bin/env python3
"""A misbehaving HTTP server for tests/http/*.t (stdlib only).

  badserver.py ROOT [LIFETIME]

Serves the files under ROOT on two loopback listeners (free ports, printed as
"PORT PORT2" on the first line of stdout) and exits after LIFETIME seconds (default
300) whatever happens. The first path component picks the behaviour; the rest names a
file under ROOT, e.g. /norange/lindi/small.lindi.tar:

  ok/           correct: single byte ranges (206 + Content-Range), 416 past the end
  norange/      ignores Range: 200 with the whole body (and its Content-Length)
  nocr/         206 with the asked-for bytes but no Content-Range
  crbad/        206 whose Content-Range is not a byte range
  crstart/      206 whose Content-Range (and body) start 512 bytes later than asked
  crshort/      206 for fewer bytes than asked (100 fewer), though the file goes on
  crlong/       206 for more bytes than asked (100 more)
  crtotal/      206 whose total is smaller than the range's end
  short206/     206 with the right Content-Range, no Content-Length, half the body, close
  huge/         200 (Range ignored), no Content-Length: the file then zeros, 64 MiB in all
  hugecl/       the same with Content-Length: 67108864
  huge206/      206 with the right Content-Range, no Content-Length, then 64 MiB more
  longer/       like ok/ but 1000 bytes beyond the Content-Length, in the same write
  notfound/     404 (its page quotes the request line, as some servers do)
  bad/          200 with bytes that are no document of any format
  fail503/      503
  redir-same/   302 to /ok/... (relative: same scheme, host and port)
  redir-abs/    302 to http://127.0.0.1:PORT/ok/... (absolute, same origin)
  redir-port/   302 to http://127.0.0.1:PORT2/ok/... (the second listener)
  redir-cred/   302 to http://u:s3cretLOC@127.0.0.1:PORT2/ok/... (credentials in the Location)
  redir-https/  302 to https://127.0.0.1:PORT/ok/... (another scheme)
  redir-file/   302 to file:///etc/passwd
  redir-noloc/  302 without a Location
  redir-loop/   302 to itself, forever
  chainN/       N redirects (chain3/x -> chain2/x -> ... -> ok/x)
  to-FAULT/     302 to /FAULT/... (same origin, relative)
  absto-FAULT/  302 to http://127.0.0.1:PORT/FAULT/... (same origin, absolute)
  port2-FAULT/  302 to http://127.0.0.1:PORT2/FAULT/...
  auth/         401 without "Authorization: Basic" for user:pw, else like ok/
  noauth/       400 when the request carries any Authorization, else like ok/
  slow/         headers, then one byte per second
  hang/         reads the request and never answers
  delay/        like ok/ after 0.25 s ($BADSERVER_DELAY seconds when set; the benchmarks
                use 0.025), each request's time span recorded, so that
  rounds/count  tells in how many rounds (groups of overlapping requests) the delay/
                requests came since rounds/reset: the client's round trips
  rounds/peak   the most delay/ requests in progress at once since rounds/reset
Redirects keep the request's query. nocr/ ... huge206/ answer 206 with their fault
even to a request without Range (the whole object as bytes 0-(size-1)). Redirects
apply to HEAD too; HEAD of the other paths answers like ok/.
"""
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.abspath(sys.argv[1])
LIFETIME = float(sys.argv[2]) if len(sys.argv) > 2 else 300.0
HUGE = 64 << 20
PORTS = [0, 0]
DELAY = float(os.environ.get("BADSERVER_DELAY", "0.25"))
SPANS = []  # (start, end) of delay/ requests
SPANS_LOCK = threading.Lock()


def rounds():
    """Groups of overlapping requests: a request that starts after every earlier one has
    ended begins a new round."""
    n, end = 0, -1.0
    with SPANS_LOCK:
        spans = sorted(SPANS)
    for a, b in spans:
        if a > end:
            n += 1
        end = max(end, b)
    return n
START = time.monotonic()


def peak():
    """The most delay/ requests whose spans overlapped at one moment."""
    with SPANS_LOCK:
        events = sorted([(a, 1) for a, _ in SPANS] + [(b, -1) for _, b in SPANS])
    n = top = 0
    for _, d in events:  # at a tie an end sorts first: touching spans do not overlap
        n += d
        top = max(top, n)
    return top


def alive():
    return time.monotonic() - START < LIFETIME


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "badserver"
    sys_version = ""

    def log_message(self, *args):
        pass

    def send(self, status, headers, body=b"", close=False):
        """One write: status line, headers and body together."""
        lines = ["HTTP/1.1 %d %s" % (status, self.responses.get(status, ("",))[0])]
        lines += ["%s: %s" % kv for kv in headers]
        if close:
            lines.append("Connection: close")
            self.close_connection = True
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        self.wfile.write(data)
        self.wfile.flush()

    def stream(self, status, headers, chunks):
        self.send(status, headers, close=True)
        try:
            for c in chunks:
                if not alive():
                    break
                self.wfile.write(c)
        except OSError:
            pass  # the client gave up: what we want to see

    def file(self, rest):
        p = os.path.realpath(os.path.join(ROOT, rest))
        if not p.startswith(ROOT + os.sep) or not os.path.isfile(p):
            return None
        with open(p, "rb") as f:
            return f.read()

    def range(self, size):
        """(a, b) of a single 'bytes=a-b' / 'bytes=a-' Range, None without one."""
        h = self.headers.get("Range")
        if not h or not h.startswith("bytes=") or "," in h:
            return None
        a, _, b = h[6:].partition("-")
        a = int(a)
        b = int(b) if b else size - 1
        return a, min(b, size - 1)

    def redirect(self, loc, query=""):
        if loc and query:
            loc += "?" + query  # a presigned URL keeps its query across the redirect
        self.send(302, ([("Location", loc)] if loc else []) + [("Content-Length", "0")])

    def handle_one(self, head):
        fault, _, rest = self.path.lstrip("/").partition("/")
        rest, _, query = rest.partition("?")
        me = "http://127.0.0.1:%d" % PORTS[0]
        if fault == "redir-same":
            return self.redirect("/ok/" + rest, query)
        if fault == "redir-abs":
            return self.redirect(me + "/ok/" + rest, query)
        if fault == "redir-port":
            return self.redirect("http://127.0.0.1:%d/ok/%s" % (PORTS[1], rest), query)
        if fault == "redir-cred":
            return self.redirect("http://u:s3cretLOC@127.0.0.1:%d/ok/%s" % (PORTS[1], rest), query)
        if fault == "redir-https":
            return self.redirect("https://127.0.0.1:%d/ok/%s" % (PORTS[0], rest), query)
        if fault == "redir-file":
            return self.redirect("file:///etc/passwd")
        if fault == "redir-noloc":
            return self.redirect(None)
        if fault == "redir-loop":
            return self.redirect(self.path)
        if fault.startswith("to-"):
            return self.redirect("/%s/%s" % (fault[3:], rest), query)
        if fault.startswith("absto-"):
            return self.redirect("%s/%s/%s" % (me, fault[6:], rest), query)
        if fault.startswith("port2-"):
            return self.redirect("http://127.0.0.1:%d/%s/%s" % (PORTS[1], fault[6:], rest), query)
        if fault == "auth" and self.headers.get("Authorization") != "Basic dXNlcjpwdw==":  # user:pw
            return self.send(401, [("WWW-Authenticate", 'Basic realm="t"'), ("Content-Length", "0")])
        if fault == "noauth" and self.headers.get("Authorization"):
            return self.send(400, [("Content-Length", "0")])  # credentials reached a host they were not for
        if fault.startswith("chain") and fault[5:].isdigit():
            n = int(fault[5:])
            return self.redirect("/%s/%s" % ("chain%d" % (n - 1) if n > 1 else "ok", rest), query)
        if fault == "hang":
            conn = self.connection
            conn.settimeout(0.2)
            while alive():
                try:
                    if conn.recv(1) == b"":
                        break
                except socket.timeout:
                    continue
                except OSError:
                    break
            self.close_connection = True
            return
        if fault == "rounds":
            if rest == "reset":
                with SPANS_LOCK:
                    SPANS.clear()
            body = str(peak() if rest == "peak" else rounds()).encode()
            return self.send(200, [("Content-Length", str(len(body)))], b"" if head else body)
        if fault == "delay":
            t0 = time.monotonic()
            time.sleep(DELAY)
            # the span ends before the answer leaves: a request the client sends only after
            # reading this answer can then never look as if it overlapped it
            with SPANS_LOCK:
                SPANS.append((t0, time.monotonic()))
            self.path = "/ok/" + rest + ("?" + query if query else "")
            return self.handle_one(head)
        if fault == "fail503":
            return self.send(503, [("Content-Length", "0")])
        if fault == "notfound":
            page = ("<h1>Not Found</h1><p>%s</p>" % self.requestline).encode("latin-1", "replace")
            return self.send(404, [("Content-Type", "text/html"), ("Content-Length", str(len(page)))], b"" if head else page)
        data = self.file(rest)
        if data is None:
            return self.send(404, [("Content-Length", "0")])
        size = len(data)
        rng = self.range(size)
        if head or fault == "ok" or fault not in FAULTS:
            fault = "ok"
        if fault == "bad":
            body = b"\x00\x01this is no document {{{ [[[" * 8
            return self.send(200, [("Content-Length", str(len(body)))], b"" if head else body)
        if fault == "slow":
            self.send(200, [("Content-Length", str(size))])
            try:
                for i in range(size):
                    if not alive():
                        break
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
            self.close_connection = True
            return
        if fault in ("huge", "hugecl"):
            def chunks():
                yield data
                left = HUGE - size
                while left > 0:
                    n = min(left, 65536)
                    left -= n
                    yield bytes(n)
            hdr = [("Content-Length", str(HUGE))] if fault == "hugecl" else []
            return self.stream(200, hdr, chunks())
        if fault == "norange" or (rng is None and fault not in WHOLE_206):
            body = data + (bytes(1000) if fault == "longer" else b"")
            return self.send(200, [("Content-Length", str(size))], b"" if head else body)
        if rng is None and fault in WHOLE_206:
            rng = (0, size - 1)  # a 206 even to a request without Range
        a, b = rng
        if a >= size:
            return self.send(416, [("Content-Range", "bytes */%d" % size), ("Content-Length", "0")])
        cr = "bytes %d-%d/%d" % (a, b, size)
        body = data[a:b + 1]
        if fault == "nocr":
            return self.send(206, [("Content-Length", str(len(body)))], body)
        if fault == "crbad":
            return self.send(206, [("Content-Range", "bytes garbage"), ("Content-Length", str(len(body)))], body)
        if fault == "crstart":
            a2, b2 = min(a + 512, size - 1), min(b + 512, size - 1)
            body = data[a2:b2 + 1]
            return self.send(206, [("Content-Range", "bytes %d-%d/%d" % (a2, b2, size)), ("Content-Length", str(len(body)))], body)
        if fault == "crshort":
            b2 = max(a, b - 100)
            body = data[a:b2 + 1]
            return self.send(206, [("Content-Range", "bytes %d-%d/%d" % (a, b2, size)), ("Content-Length", str(len(body)))], body)
        if fault == "crlong":
            b2 = min(b + 100, size - 1)
            body = data[a:b2 + 1]
            return self.send(206, [("Content-Range", "bytes %d-%d/%d" % (a, b2, size)), ("Content-Length", str(len(body)))], body)
        if fault == "crtotal":
            return self.send(206, [("Content-Range", "bytes %d-%d/%d" % (a, b, b)), ("Content-Length", str(len(body)))], body)
        if fault == "short206":
            return self.send(206, [("Content-Range", cr)], body[:len(body) // 2], close=True)
        if fault == "huge206":
            def chunks():
                yield body
                for _ in range(HUGE // 65536):
                    yield bytes(65536)
            return self.stream(206, [("Content-Range", cr)], chunks())
        if fault == "longer":
            return self.send(206, [("Content-Range", cr), ("Content-Length", str(len(body)))], body + bytes(1000))
        return self.send(206, [("Content-Range", cr), ("Content-Length", str(len(body)))], body)

    def do_GET(self):
        self.handle_one(False)

    def do_HEAD(self):
        self.handle_one(True)


FAULTS = {"ok", "norange", "nocr", "crbad", "crstart", "crshort", "crlong", "crtotal", "short206", "huge", "hugecl",
          "huge206", "longer", "bad", "slow"}


# faults that answer 206 (with their fault) even when no Range was asked for
WHOLE_206 = {"nocr", "crbad", "crstart", "crshort", "crtotal", "short206", "huge206"}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # clients open 16 connections at once: a backlog of 5 drops SYNs (1 s resend)

    def handle_error(self, request, client_address):
        pass  # clients that give up mid-answer are what these tests are about


def main():
    timer = threading.Timer(LIFETIME, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    servers = [Server(("127.0.0.1", 0), Handler) for _ in range(2)]
    for i, s in enumerate(servers):
        PORTS[i] = s.server_address[1]
    print("%d %d" % tuple(PORTS), flush=True)
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        servers[0].serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
