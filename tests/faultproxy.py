#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 relay for tests/store/faults.t (stdlib asyncio only), put on
127.0.0.1 in front of nginx, radosgw or Azurite.

  faultproxy.py UPSTREAM_PORT [LIFETIME_S]

Listens on a free port of 127.0.0.1 (printed on the first line of stdout) and relays every
request, Host header and all (so radosgw's SigV4 and Azurite's Shared Key still verify), to
127.0.0.1:UPSTREAM_PORT, one upstream connection per client connection. It answers a
client's `Expect: 100-continue` itself at once. Until armed it relays everything.

Armed by a request to the relay itself (answered 200):

  POST /_fault/arm?rate=0.2&seed=7&kinds=reset,500,...&methods=GET,PUT&url=RE&body=RE
                  &skip=0&count=-1&stall=2
  POST /_fault/off          relays everything again
  GET  /_fault/stats        JSON: requests, matched, faults {kind: {method: n}}, not_applied
                            {kind: n}, log (the last 500 faults: [method, path, kind])

A request matches when its method is in `methods` (any by default), the regular expression
`url` is found in its path and query, and `body` in its body (read as latin-1). Of the
matching requests, the first `skip` go through; each later one draws from a
random.Random(seed): with probability `rate` it gets a fault, one of `kinds` drawn from the
same generator, until `count` faults were given (-1: no limit). The draws come in arrival
order, so with requests in parallel the same seed may aim them at other requests. Kinds:

  reset      the connection is reset (SO_LINGER 0) before anything is relayed
  500, 503   answered here, never relayed: S3's XML error (InternalError, SlowDown), or
             Azure's (x-ms-error-code InternalError, ServerBusy) when the request has
             x-ms-version
  stall      the answer is held `stall` seconds (below vdsql's http_timeout), then relayed
  truncate   the answer's head and half its body are relayed, then the connection closed
             (an answer without a body: half its head)
  bad_range  a 206 answer's Content-Range moved one byte (start and end, when the total
             allows; else the start alone), the body kept: it names bytes not asked for
  full200    a 206 answer turned into a 200 with the whole object: the bytes relayed put at
             their offset, the rest a filler pattern (this relay cannot sign a request for
             the whole object), so a client keeping other bytes than the range reads filler
  drop       the request is relayed and its whole answer read (the write DID happen), then
             the client's connection is closed without an answer

bad_range and full200 apply only to a 206 answer: to others nothing is done, counted in
not_applied. Exits after LIFETIME_S seconds (default 600) whatever happens."""
import asyncio
import json
import os
import random
import re
import socket
import struct
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from httpwire import close_both, exchange, header, read_body, read_chunked, read_head, serve_relay  # noqa: E402

UPSTREAM = int(sys.argv[1])
LIFETIME = float(sys.argv[2]) if len(sys.argv) > 2 else 600.0
KINDS = ("reset", "500", "503", "stall", "truncate", "bad_range", "full200", "drop")
FILLER = b"faultproxy filler, not the object. "
MAX_WHOLE = 64 << 20  # full200: the largest whole object made up here
ERRORS = {"500": (b"Internal Server Error", b"InternalError", b"We encountered an internal error. Please try again."),
          "503": (b"Service Unavailable", b"SlowDown", b"Please reduce your request rate."),
          "503az": (b"Service Unavailable", b"ServerBusy", b"The server is currently unable to receive requests.")}


class Plan:
    def __init__(self):
        self.arm({})

    def arm(self, a):
        self.rate = float(a.get("rate", 0))
        self.rng = random.Random(int(a.get("seed", 0)))
        self.kinds = [k for k in a.get("kinds", ",".join(KINDS)).split(",") if k]
        bad = [k for k in self.kinds if k not in KINDS]
        if bad:
            raise ValueError("unknown kinds %s (known: %s)" % (bad, ", ".join(KINDS)))
        self.methods = [m.encode() for m in a.get("methods", "").split(",") if m]
        self.url = re.compile(a.get("url", ""))
        self.body = re.compile(a.get("body", ""), re.S)
        self.skip = int(a.get("skip", 0))
        self.count = int(a.get("count", -1))
        self.stall = float(a.get("stall", 2))
        self.requests = self.matched = 0
        self.faults, self.not_applied, self.log = {}, {}, []

    def choose(self, method, path, body):
        """The fault for this request, or None."""
        self.requests += 1
        if self.rate <= 0 or (self.methods and method not in self.methods) or not self.url.search(path) \
                or not self.body.search(body.decode("latin-1")):
            return None
        self.matched += 1
        if self.skip > 0:
            self.skip -= 1
            return None
        hit, pick = self.rng.random() < self.rate, self.rng.choice(self.kinds)
        if not hit or self.count == 0:
            return None
        self.count -= 1
        return pick

    def given(self, method, path, kind):
        m = self.faults.setdefault(kind, {})
        m[method.decode()] = m.get(method.decode(), 0) + 1
        self.log = (self.log + [[method.decode(), path, kind]])[-500:]

    def stats(self):
        return {"requests": self.requests, "matched": self.matched, "faults": self.faults,
                "not_applied": self.not_applied, "log": self.log}


PLAN = Plan()


def answer(status, reason, body, extra=b"", head_only=False):
    h = b"HTTP/1.1 %d %s\r\nContent-Length: %d\r\n%s\r\n" % (status, reason, len(body), extra)
    return h if head_only else h + body


def error_answer(kind, req, head_only):
    az = header(req, b"x-ms-version") is not None
    reason, code, msg = ERRORS[kind + "az" if az and kind + "az" in ERRORS else kind]
    xml = b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code><Message>%s</Message>' \
          b"<RequestId>faultproxy</RequestId></Error>" % (code, msg)
    extra = b"Content-Type: application/xml\r\n" + (b"x-ms-error-code: %s\r\n" % code if az else b"")
    return answer(int(kind), reason, xml, extra, head_only)


def set_header(head, name, value):
    """head with header `name` (lowercase bytes) set to value, or dropped when value is None."""
    lines = [x for x in head[:-4].split(b"\r\n") if x.split(b":", 1)[0].strip().lower() != name]
    if value is not None:
        lines.append(name + b": " + value)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def content_range(resp):
    m = re.match(rb"bytes ([0-9]+)-([0-9]+)/([0-9]+)$", header(resp, b"content-range") or b"")
    return tuple(int(x) for x in m.groups()) if m else None


def bad_range(resp):
    a, b, t = content_range(resp)
    d = 1 if b + 1 < t else -1
    if a + d < 0:
        return set_header(resp, b"content-range", b"bytes %d-%d/%d" % (a + 1, b, t))
    return set_header(resp, b"content-range", b"bytes %d-%d/%d" % (a + d, b + d, t))


def full200(resp, body):
    """The 200 a server ignoring Range sends, or None when the object is too large to make up."""
    a, b, t = content_range(resp)
    if t > MAX_WHOLE:
        return None
    pad = FILLER * (t // len(FILLER) + 1)
    whole = pad[:a] + body + pad[a + len(body):t]
    head = b"HTTP/1.1 200 OK\r\n" + resp.split(b"\r\n", 1)[1]
    head = set_header(set_header(head, b"content-range", None), b"content-length", b"%d" % len(whole))
    return head + whole


async def control(path, cwriter):
    u = urllib.parse.urlsplit(path)
    status, body = 200, b""
    try:
        if u.path == "/_fault/arm":
            PLAN.arm(dict(urllib.parse.parse_qsl(u.query)))
            body = b"armed"
        elif u.path == "/_fault/off":
            PLAN.arm({})
            body = b"off"
        else:
            body = json.dumps(PLAN.stats()).encode()
    except (ValueError, re.error) as e:
        status, body = 400, str(e).encode()
    cwriter.write(answer(status, b"OK" if status == 200 else b"Bad Request", body))
    await cwriter.drain()


def reset(cwriter):
    sock = cwriter.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    cwriter.transport.abort()


async def serve(creader, cwriter):
    up = [None, None]
    try:
        while True:
            try:
                head, length = await read_head(creader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            method, path = head.split(b" ", 2)[:2]
            path = path.decode("latin-1")
            if length != 0 and (header(head, b"expect") or b"").lower() == b"100-continue":
                cwriter.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                await cwriter.drain()
            body = await read_chunked(creader) if length < 0 else await creader.readexactly(length)
            if path.startswith("/_fault/"):
                await control(path, cwriter)
                continue
            kind = PLAN.choose(method, path, body)
            if kind in ("500", "503"):
                PLAN.given(method, path, kind)
                cwriter.write(error_answer(kind, head, method == b"HEAD"))
                await cwriter.drain()
                continue
            if kind == "reset":
                PLAN.given(method, path, kind)
                reset(cwriter)
                return
            resp, rlen = await exchange(up, UPSTREAM, head, body)
            code = resp.split(b" ", 2)[1]
            rbody = await read_body(up[0], method, code, rlen)
            if (header(resp, b"connection") or b"").lower() == b"close":
                up[1].close()
                up[:] = [None, None]
            out = resp + rbody
            if kind in ("bad_range", "full200"):
                made = None
                if code == b"206" and content_range(resp):
                    made = bad_range(resp) + rbody if kind == "bad_range" else full200(resp, rbody)
                if made is None:
                    PLAN.not_applied[kind] = PLAN.not_applied.get(kind, 0) + 1
                    kind = None
                else:
                    out = made
            if kind:
                PLAN.given(method, path, kind)
            if kind == "drop":
                return
            if kind == "truncate":
                cwriter.write(resp + rbody[:len(rbody) // 2] if len(rbody) > 1 else resp[:len(resp) // 2])
                await cwriter.drain()
                return
            if kind == "stall":
                await asyncio.sleep(PLAN.stall)
            cwriter.write(out)
            await cwriter.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        close_both(up, cwriter)


if __name__ == "__main__":
    serve_relay(serve, LIFETIME)
