#!/usr/bin/env python3
"""A latency-adding HTTP/1.1 proxy for benchmarks (stdlib asyncio only).

  delay_proxy.py UPSTREAM_PORT DELAY_MS [LIFETIME_S]

Listens on a free port of 127.0.0.1 (printed on the first line of stdout) and relays
each request, unchanged, to 127.0.0.1:UPSTREAM_PORT after DELAY_MS milliseconds: one
simulated round trip per request, as a distant server costs. Keep-alive connections
stay open (one upstream connection per client connection), so a client that sends its
requests one after another pays the delay once per request, and one with N requests in
flight on N connections pays it once per N. On loopback a sequential fetcher hides
behind the speed of the link; through this proxy it shows. Only what the benchmarks
send is handled: requests without a body or with a Content-Length (PUTs; a client's
`Expect: 100-continue` is answered here at once, then the whole request waits the
delay, and the upstream's own 100 is skipped), answers with a Content-Length or chunked
(S3 listings of radosgw).
Exits after LIFETIME_S seconds (default 600) whatever happens.
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from httpwire import close_both, header, read_chunked, read_head, serve_relay  # noqa: E402

UPSTREAM = int(sys.argv[1])
DELAY = float(sys.argv[2]) / 1000.0
LIFETIME = float(sys.argv[3]) if len(sys.argv) > 3 else 600.0


def expects_continue(head):
    return (header(head, b"expect") or b"").lower() == b"100-continue"


async def serve(creader, cwriter):
    ureader = uwriter = None
    try:
        ureader, uwriter = await asyncio.open_connection("127.0.0.1", UPSTREAM)
        while True:
            try:
                req = await read_head(creader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            req, rlen = req
            head_only = req.startswith(b"HEAD ")
            if rlen > 0:
                if expects_continue(req):
                    cwriter.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    await cwriter.drain()
                req += await creader.readexactly(rlen)
            await asyncio.sleep(DELAY)
            uwriter.write(req)
            await uwriter.drain()
            resp, length = await read_head(ureader)
            while resp.split(b" ", 2)[1] == b"100":
                resp, length = await read_head(ureader)
            if head_only or resp.split(b" ", 2)[1] in (b"204", b"304"):
                body = b""
            elif length < 0:
                body = await read_chunked(ureader)
            else:
                body = await ureader.readexactly(length)
            cwriter.write(resp + body)
            await cwriter.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        close_both([ureader, uwriter], cwriter)


if __name__ == "__main__":
    serve_relay(serve, LIFETIME)
