"""An Azure Blob client for the tests that is not vdsql: requests signed with Shared Key
by hand (spec section 2.1) with Python's hmac (no Azure SDK is in Debian's bookworm),
and service SAS tokens (spec 2.2). Written from the spec, not from vdsql's C signer, so
that the suites check vdsql against an independent reader and writer."""
import base64
import datetime
import hashlib
import hmac
import http.client
import urllib.parse


class Az:
    """Azure Blob requests signed with Shared Key by hand (spec section 2.1), with
    Python's hmac: no Azure SDK is in Debian's bookworm, and this is the string vdsql will
    build in C, so it is written here from the spec, not from vdsql."""

    VERSION = "2021-08-06"

    def __init__(self, srv):
        u = urllib.parse.urlsplit(srv.endpoint)
        self.srv, self.host, self.port, self.base = srv, u.hostname, u.port, u.path  # base = /ACCOUNT

    def sign(self, method, path, params, hdrs, key):
        std = ["Content-Encoding", "Content-Language", "Content-Length", "Content-MD5", "Content-Type", "Date",
               "If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range"]
        low = {k.lower(): v for k, v in hdrs.items()}
        vals = [low.get(s.lower(), "") for s in std]
        if vals[2] == "0":
            vals[2] = ""  # Content-Length is empty for an empty body
        xms = sorted((k, v.strip()) for k, v in low.items() if k.startswith("x-ms-"))
        res = "/" + self.srv.account + path  # path style: the account twice (it starts path)
        for k in sorted(params, key=str.lower):
            res += "\n%s:%s" % (k.lower(), params[k])
        sts = "\n".join([method] + vals + ["%s:%s" % kv for kv in xms] + [res])
        mac = hmac.new(base64.b64decode(key), sts.encode(), hashlib.sha256).digest()
        return "SharedKey %s:%s" % (self.srv.account, base64.b64encode(mac).decode())

    def __call__(self, method, path, params=None, headers=None, body=None, key=None):
        """path is /ACCOUNT/container/blob, already URL-encoded; params unencoded."""
        params = dict(params or {})
        hdrs = {"x-ms-date": datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT"),
                "x-ms-version": self.VERSION}
        hdrs.update(headers or {})
        if body is not None:
            hdrs.setdefault("Content-Type", "application/octet-stream")
            hdrs["Content-Length"] = str(len(body))
        elif method == "PUT":
            hdrs["Content-Length"] = "0"
        # Shared Key signs the decoded query values; the URL carries them encoded
        hdrs["Authorization"] = self.sign(method, path, params, hdrs, key or self.srv.key)
        url = path + ("?" + urllib.parse.urlencode(sorted(params.items()), quote_via=urllib.parse.quote) if params else "")
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)  # Azurite pauses (its GC) under long runs
        try:
            conn.putrequest(method, url, skip_accept_encoding=True)
            for k, v in hdrs.items():
                conn.putheader(k, v)
            conn.endheaders(body)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()


def sas_container(srv, perms, expiry_minutes=60):
    """A service SAS for the container (spec 2.2: 16 fields for sv 2021-08-06, no trailing newline)."""
    sv, se = Az.VERSION, (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=expiry_minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fields = [perms, "", se, "/blob/%s/%s" % (srv.account, srv.container), "", "", "https,http", sv, "c", "", "", "", "", "", "", ""]
    sig = base64.b64encode(hmac.new(base64.b64decode(srv.key), "\n".join(fields).encode(), hashlib.sha256).digest()).decode()
    return urllib.parse.urlencode([("sv", sv), ("spr", "https,http"), ("se", se), ("sr", "c"), ("sp", perms), ("sig", sig)],
                                  quote_via=urllib.parse.quote)
