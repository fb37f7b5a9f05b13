"""HTTP/1.1 framing for the test and bench relays (tests/openvds/putgate.py,
tests/faultproxy.py, bench/delay_proxy.py), stdlib asyncio only: what they need to relay
requests and answers as they came, written once."""
import asyncio


def header(head, name):
    """The value of header `name` (lowercase bytes) in a request or answer head, or None."""
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == name:
            return v.strip()
    return None


async def read_head(reader):
    """(head, body length): -1 for a chunked body, 0 when no length is given."""
    head = await reader.readuntil(b"\r\n\r\n")
    te = header(head, b"transfer-encoding")
    length = -1 if te and te.lower() == b"chunked" else int(header(head, b"content-length") or 0)
    return head, length


async def read_chunked(reader):
    """A chunked body, relayed as it came (sizes, data, the last chunk and trailers)."""
    out = b""
    while True:
        line = await reader.readuntil(b"\r\n")
        out += line
        n = int(line.split(b";")[0].strip(), 16)
        if n == 0:
            while True:
                t = await reader.readuntil(b"\r\n")
                out += t
                if t == b"\r\n":
                    return out
        out += await reader.readexactly(n + 2)


async def read_body(reader, method, status, length):
    """An answer's body as it came: none for HEAD, 1xx, 204 and 304."""
    if method == b"HEAD" or status in (b"204", b"304") or status.startswith(b"1"):
        return b""
    if length < 0:
        return await read_chunked(reader)
    return await reader.readexactly(length)


async def exchange(up, port, head, body):
    """Sends a request to 127.0.0.1:port on the kept connection up ([reader, writer], opened
    again when the upstream closed it while idle) and reads its final answer's head, any
    100 Continue skipped: (head, body length)."""
    for attempt in (0, 1):
        try:
            if up[1] is None:
                up[:] = await asyncio.open_connection("127.0.0.1", port)
            up[1].write(head + body)
            await up[1].drain()
            while True:
                resp, rlen = await read_head(up[0])
                if resp.split(b" ", 2)[1] != b"100":
                    return resp, rlen
        except (asyncio.IncompleteReadError, ConnectionError):
            if attempt:
                raise
            up[1].close()
            up[:] = [None, None]


def close_both(up, cwriter):
    """A relay's end of a client connection: its upstream connection and the client's."""
    for w in (up[1] if up else None, cwriter):
        if w:
            w.close()


def serve_relay(serve, lifetime, background=None):
    """Runs a relay: serve(reader, writer) per client connection on a free port of 127.0.0.1
    (printed on the first line of stdout), background() as a task beside it, for lifetime
    seconds whatever happens."""
    async def main():
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        if background:
            asyncio.get_running_loop().create_task(background())
        async with server:
            await asyncio.sleep(lifetime)
    asyncio.run(main())
