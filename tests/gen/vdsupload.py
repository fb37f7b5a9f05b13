#!/usr/bin/python3
"""Uploads a dataset directory made by mkvds.py to an object store with clients that are
not vdsql (boto3 for S3; tests/azclient.py for Azure), user metadata taken from the
files' user.* extended attributes, as OpenVDS writes it (x-amz-meta-<key>, blob
metadata <key>). Many small objects go up through a thread pool. Used by the audit
tests and bench/vds_audit: an upload path independent of vdsql's store."""
import concurrent.futures
import os


def files(root):
    """(path, key relative to root, {metadata}) for every file under root."""
    out = []
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            meta = {}
            for a in os.listxattr(p):
                if a.startswith("user."):
                    meta[a[5:]] = os.getxattr(p, a).decode()
            out.append((p, os.path.relpath(p, root), meta))
    return sorted(out, key=lambda x: x[1])


def s3_client(endpoint, key, secret, region, pool=32):
    import boto3
    import botocore.config
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret,
                        region_name=region,
                        config=botocore.config.Config(s3={"addressing_style": "path"}, max_pool_connections=pool,
                                                      retries={"max_attempts": 3}))


def upload_s3(client, bucket, prefix, root, threads=16):
    """Returns the number of objects uploaded under prefix ('' or ending in '/')."""
    todo = files(root)

    def one(t):
        p, k, meta = t
        with open(p, "rb") as f:
            client.put_object(Bucket=bucket, Key=prefix + k, Body=f.read(), Metadata=meta)

    with concurrent.futures.ThreadPoolExecutor(threads) as ex:
        list(ex.map(one, todo))
    return len(todo)



def upload_az(srv, prefix, root, threads=16):
    """The same to Azure Blob (srv: a taplib.Azurite), through tests/azclient.py (Shared
    Key signed by hand with Python's hmac: no Azure SDK is among the project's deps):
    block blobs with x-ms-meta-* headers. Azure takes only identifier-like metadata
    names, so the legacy VDS-Chunk-Metadata key (hyphens) goes up as vdschunkmetadata,
    same value. Returns the number uploaded; raises on a failed upload."""
    import sys
    import urllib.parse
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from azclient import Az
    az = Az(srv)
    base = "/%s/%s/" % (srv.account, srv.container)
    todo = files(root)

    def one(t):
        p, k, meta = t
        h = {"x-ms-blob-type": "BlockBlob"}
        h.update({"x-ms-meta-" + ("vdschunkmetadata" if m.lower() == "vds-chunk-metadata" else m): v
                  for m, v in meta.items()})
        with open(p, "rb") as f:
            code = az("PUT", base + urllib.parse.quote(prefix + k), headers=h, body=f.read())[0]
        if code != 201:
            raise RuntimeError("PUT %s: HTTP %d" % (prefix + k, code))

    with concurrent.futures.ThreadPoolExecutor(threads) as ex:
        list(ex.map(one, todo))
    return len(todo)
