"""HTTP/1.1 framing for the test and bench relays (tests/openvds/putgate.py,
bench/delay_proxy.py), stdlib asyncio only: what they need to relay requests and
answers as they came, written once."""


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
