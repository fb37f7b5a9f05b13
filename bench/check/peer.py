#!/usr/bin/python3
"""The peer of bench/check/run: what a user without vdsql writes to audit the OpenVDS
datasets of a bucket with boto3, one request after the other: list the bucket's top
level, and for each folder GET its VolumeDataLayout and LayerStatus (json), then per
layer list its objects, GET every page the directory lists and HEAD every chunk object
(the chunk metadata is in the object's user metadata, which a listing does not carry).
It judges only what is cheap to judge (a document or page that does not parse, a page
not whole entries, a page or chunk object missing); it prints the datasets, the findings
and its requests (counted by botocore's events) as JSON.
   bench/check/peer.py BUCKET    (AWS_* from the environment)"""
import json
import os
import sys

import boto3
import botocore.config
import botocore.exceptions


def main(bucket):
    s3 = boto3.client("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL"), config=botocore.config.Config(s3={"addressing_style": "path"}))
    n = {"requests": 0}

    def count(**kw):
        n["requests"] += 1
    s3.meta.events.register("before-send.s3", count)

    def get(key):
        try:
            return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except botocore.exceptions.ClientError:
            return None

    datasets, findings = 0, 0
    folders = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Delimiter="/"):
        folders += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    for f in folders:
        layout = get(f + "VolumeDataLayout")
        try:
            json.loads(layout)
        except (TypeError, ValueError):
            findings += 1
            continue
        datasets += 1
        try:
            status = json.loads(get(f + "LayerStatus"))
        except (TypeError, ValueError):
            findings += 1
            continue
        for layer in status:
            name, count_ = layer["layerName"], layer["chunkCount"]
            keys = set()
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f + name + "/"):
                keys |= {o["Key"][len(f + name + "/"):] for o in page.get("Contents", [])}
            for p in layer["pageDirectory"]:
                if p < 0:
                    continue
                body = get("%s%s/ChunkMetadata/%d" % (f, name, p))
                if body is None or len(body) % layer["chunkMetadataByteSize"]:
                    findings += 1
            for k in keys:
                if k.isdigit() and str(int(k)) == k and int(k) < count_:
                    s3.head_object(Bucket=bucket, Key=f + name + "/" + k)
    print(json.dumps({"datasets": datasets, "findings": findings, "requests": n["requests"]}))


if __name__ == "__main__":
    main(sys.argv[1])
