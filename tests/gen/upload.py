#!/usr/bin/env python3
"""Uploads a directory tree to the test S3 (boto3) or Azure Blob (tests/azclient.py)
server, so that suites can run on object stores with data vdsql did not write.
    upload.py s3 DIR PREFIX   env: AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY S3_BUCKET
    upload.py az DIR PREFIX   env: AZURE_BLOB_ENDPOINT AZURE_STORAGE_ACCOUNT AZURE_STORAGE_KEY AZURE_CONTAINER
Keys are PREFIX/relative path; extended attributes user.<key> become user metadata
(what the file backend keeps), so chunk metadata survives the trip. Eight uploads run at
once; prints the number of objects."""
import concurrent.futures
import os
import sys
import types
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def files(root):
    for d, _, names in os.walk(root):
        for n in sorted(names):
            p = os.path.join(d, n)
            if os.path.isfile(p) and not os.path.islink(p):
                yield p, os.path.relpath(p, root)


def xattrs(p):
    try:
        return {k[5:]: os.getxattr(p, k).decode() for k in os.listxattr(p) if k.startswith("user.")}
    except OSError:
        return {}


def main():
    kind, root, prefix = sys.argv[1], sys.argv[2], sys.argv[3].strip("/")
    e = os.environ
    if kind == "s3":
        import boto3
        c = boto3.client("s3", endpoint_url=e["AWS_ENDPOINT_URL"], aws_access_key_id=e["AWS_ACCESS_KEY_ID"],
                         aws_secret_access_key=e["AWS_SECRET_ACCESS_KEY"], region_name=e.get("AWS_REGION", "us-east-1"))

        def put(p, rel):
            with open(p, "rb") as f:
                c.put_object(Bucket=e["S3_BUCKET"], Key=prefix + "/" + rel, Body=f.read(), Metadata=xattrs(p))
    elif kind == "az":
        from azclient import Az
        srv = types.SimpleNamespace(endpoint=e["AZURE_BLOB_ENDPOINT"], account=e["AZURE_STORAGE_ACCOUNT"],
                                    key=e["AZURE_STORAGE_KEY"], container=e["AZURE_CONTAINER"])
        az = Az(srv)

        def put(p, rel):
            with open(p, "rb") as f:
                body = f.read()
            hdrs = {"x-ms-blob-type": "BlockBlob"}
            hdrs.update({"x-ms-meta-" + k: v for k, v in xattrs(p).items()})
            path = "%s/%s/%s" % (az.base, srv.container, urllib.parse.quote(prefix + "/" + rel))
            st, _, text = az("PUT", path, headers=hdrs, body=body)
            if st != 201:
                raise RuntimeError("%s: HTTP %d %s" % (rel, st, text[:200]))
    else:
        sys.exit("upload.py: kind is s3 or az")
    todo = list(files(root))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for f in [pool.submit(put, p, rel) for p, rel in todo]:
            f.result()
    print(len(todo))


if __name__ == "__main__":
    main()
