#!/usr/bin/env python3
"""An HTTP/1.1 relay for tests/openvds/uploads.t (stdlib asyncio only) that sees how an
OpenVDS writer's uploads are pipelined, exactly and without timing.

  putgate.py UPSTREAM_PORT [LIFETIME_S]

Listens on a free port of 127.0.0.1 (printed on the first line of stdout) and relays
every request, Host header and all, to 127.0.0.1:UPSTREAM_PORT (radosgw or Azurite: they
check the signatures), one upstream connection per client connection. A writer's chunk
PUTs (without a copy source) are of two kinds: staging PUTs, PUT
.../.vdsql/<layer>/<transaction>/<chunk>, and PUTs at a chunk's key, PUT
.../<layer>/<chunk> (a plain INSERT's direct upload, create-only). The ones it watches are
those of one kind, armed per run with the layer by a request to the relay itself, POST
/_gate/arm?mode=M&k=K&n=N&layer=L&watch=stage|key[&key=C] (answered 200; watch is stage
by default; GET /_gate/stats gives the counters as JSON). What it does with them:

  window  holds each watched PUT (before relaying it) until K are held, then lets the
          oldest go; after the N-th has arrived it lets every one go. A held PUT that
          waits STALL seconds with no new arrival is let go too, counted as a stall: the
          client had fewer than K in flight while it still had PUTs to send (after
          MAX_STALLS stalls everything goes, so a broken client fails fast).
  slow    holds the watched PUT of chunk C until every other of the N has been answered
          (or HOLD_MAX seconds passed: timed_out); counts those answered while it was held.
  fail    answers the watched PUT of chunk C with 403 AccessDenied itself (S3's XML and
          Azure's x-ms-error-code), relays the others, and counts those that arrive after
          that answer was sent.
  drop    the first watched PUT of chunk C that comes on a kept-alive connection (one
          that has carried a request before) is read whole, then the connection is
          closed without an answer: what a server whose idle timeout races the request
          does; the client must send it again (dropped says it happened).
  off     relays everything (the default).

Counters, of the watched PUTs: arrived (dropped ones too), answered, peak (the most
arrived and not yet answered at once), stalls, done_while_held, timed_out, after_fail,
chunks (the chunks in arrival order), dropped, expects (those that came with `Expect:
100-continue`), expect_waits (those whose body came WAIT seconds or more after their head:
a client waiting for a 100 Continue, which curl does for 1 s by default), create_only
(those that came with `If-None-Match: *`). And puts: every chunk PUT of either kind, in
the order answered, as [kind ("stage" or "key"), chunk, status, create-only (0/1)]; a
dropped one has status 0. A client's `Expect: 100-continue` is never
answered here, as a server is free not to, so a client that waits for it shows; the
upstream's own 100 is skipped; an upstream connection found closed (an idle timeout) is
opened again. Exits after LIFETIME_S seconds (default 600) whatever happens."""
import asyncio
import json
import os
import re
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpwire import close_both, exchange, header, read_body, read_chunked, read_head, serve_relay  # noqa: E402

UPSTREAM = int(sys.argv[1])
LIFETIME = float(sys.argv[2]) if len(sys.argv) > 2 else 600.0
STALL = 1.5
MAX_STALLS = 4
HOLD_MAX = 10.0
WAIT = 0.5
STAGED = re.compile(r"/\.vdsql/[^/]+/[0-9a-f]{16}/([0-9]+)$")


def chunk_put(path, layer):
    """(kind, chunk) of a chunk PUT's path, or None."""
    m = STAGED.search(path)
    if m:
        return "stage", int(m.group(1))
    m = re.search(r"/([^/]+)/([0-9]+)$", path)
    if m and layer and urllib.parse.unquote(m.group(1)) == layer and "/.vdsql/" not in path:
        return "key", int(m.group(2))
    return None


class Gate:
    def __init__(self):
        self.arm("off", 0, 0, -1)

    def arm(self, mode, k, n, key, layer="", watch="stage"):
        self.mode, self.k, self.n, self.key = mode, k, n, key
        self.layer, self.watch = layer, watch
        self.create_only = 0
        self.puts = []
        self.arrived = self.answered = self.inflight = self.peak = self.stalls = 0
        self.done_while_held = self.after_fail = 0
        self.expects = self.expect_waits = 0
        self.timed_out = False
        self.failed_sent = False
        self.held = []  # (chunk, future) in arrival order
        self.free_all = False
        self.last = time.monotonic()
        self.slow_wait = None
        self.chunks = []
        self.dropped = False

    def stats(self):
        return {k: getattr(self, k) for k in ("mode", "k", "n", "arrived", "answered", "peak", "stalls",
                                             "done_while_held", "timed_out", "after_fail", "chunks", "dropped", "expects",
                                             "expect_waits", "create_only", "puts", "watch", "layer")}

    def release_oldest(self):
        _, f = self.held.pop(0)
        if not f.done():
            f.set_result(None)

    def release_all(self):
        self.free_all = True
        while self.held:
            self.release_oldest()

    async def enter(self, chunk):
        """None to relay the request, or a status to answer with."""
        self.arrived += 1
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        self.chunks.append(chunk)
        self.last = time.monotonic()
        if self.failed_sent:
            self.after_fail += 1
        if self.mode == "window" and not self.free_all:
            f = asyncio.get_running_loop().create_future()
            self.held.append((chunk, f))
            if self.arrived >= self.n:
                self.release_all()
            elif len(self.held) >= self.k:
                self.release_oldest()
            await f
        elif self.mode == "slow" and chunk == self.key:
            at = self.answered
            self.slow_wait = asyncio.get_running_loop().create_future()
            try:
                await asyncio.wait_for(asyncio.shield(self.slow_wait), HOLD_MAX)
            except asyncio.TimeoutError:
                self.timed_out = True
            self.done_while_held = self.answered - at
            self.slow_wait = None
        elif self.mode == "fail" and chunk == self.key:
            return 403
        return None

    def leave(self, chunk, status):
        self.inflight -= 1
        self.answered += 1
        if status == 403 and self.mode == "fail" and chunk == self.key:
            self.failed_sent = True
        if self.slow_wait and not self.slow_wait.done() and self.answered >= self.n - 1:
            self.slow_wait.set_result(None)

    async def watchdog(self):
        while True:
            await asyncio.sleep(0.05)
            if self.mode == "window" and self.held and not self.free_all and time.monotonic() - self.last > STALL:
                self.stalls += 1
                self.last = time.monotonic()
                if self.stalls >= MAX_STALLS:
                    self.release_all()
                else:
                    self.release_oldest()


GATE = Gate()


def answer(status, body, extra=b""):
    reason = {200: b"OK", 403: b"Forbidden"}[status]
    return (b"HTTP/1.1 %d %s\r\nContent-Length: %d\r\n%s\r\n" % (status, reason, len(body), extra)) + body


async def control(path, cwriter):
    u = urllib.parse.urlsplit(path)
    if u.path == "/_gate/arm":
        a = dict(urllib.parse.parse_qsl(u.query))
        GATE.arm(a.get("mode", "off"), int(a.get("k", 0)), int(a.get("n", 0)), int(a.get("key", -1)),
                 a.get("layer", ""), a.get("watch", "stage"))
        body = b"armed"
    else:
        body = json.dumps(GATE.stats()).encode()
    cwriter.write(answer(200, body))
    await cwriter.drain()


async def serve(creader, cwriter):
    up = [None, None]
    served = 0
    try:
        while True:
            try:
                head, length = await read_head(creader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            method, path = head.split(b" ", 2)[:2]
            path = path.decode()
            expect = (header(head, b"expect") or b"").lower() == b"100-continue"
            t0 = time.monotonic()
            body = await read_chunked(creader) if length < 0 else await creader.readexactly(length)
            waited = time.monotonic() - t0 >= WAIT
            if path.startswith("/_gate/"):
                await control(path, cwriter)
                continue
            seen = None
            if method == b"PUT" and not header(head, b"x-amz-copy-source") and not header(head, b"x-ms-copy-source"):
                seen = chunk_put(urllib.parse.urlsplit(path).path, GATE.layer)
            create_only = int(header(head, b"if-none-match") == b"*")
            chunk = seen[1] if seen and seen[0] == GATE.watch else None  # a watched PUT's chunk
            if chunk is not None and GATE.mode == "drop" and chunk == GATE.key and served and not GATE.dropped:
                GATE.dropped = True
                GATE.arrived += 1
                GATE.chunks.append(chunk)
                GATE.puts.append([seen[0], chunk, 0, create_only])
                return  # closed, no answer
            served += 1
            if chunk is not None:
                GATE.create_only += create_only
            if chunk is not None and expect:
                GATE.expects += 1
                GATE.expect_waits += waited
            status = await GATE.enter(chunk) if chunk is not None else None
            if status == 403:
                xml = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
                       b"<Message>refused by putgate</Message></Error>")
                GATE.puts.append([seen[0], chunk, 403, create_only])
                GATE.leave(chunk, 403)
                cwriter.write(answer(403, xml, b"x-ms-error-code: AuthorizationFailure\r\n"
                                               b"Content-Type: application/xml\r\n"))
                await cwriter.drain()
                continue
            resp, rlen = await exchange(up, UPSTREAM, head, body)
            code = resp.split(b" ", 2)[1]
            rbody = await read_body(up[0], method, code, rlen)
            if seen:
                GATE.puts.append([seen[0], seen[1], int(code), create_only])
            if chunk is not None:  # before the client can see the answer and send its next PUT
                GATE.leave(chunk, int(code))
            cwriter.write(resp + rbody)
            await cwriter.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        close_both(up, cwriter)


if __name__ == "__main__":
    serve_relay(serve, LIFETIME, GATE.watchdog)
