#!/usr/bin/env python3
"""LINDI archives whose index disagrees with their tar headers, in each way lindi's own
writer (which never syncs) can leave one, for lindi_repair (tests/lindi/repair.t).
Written with mklindi.py's spec-only writer and Python's stdlib, never vdsql.

  mkrepair_lindi.py catalog DIR   builds DIR/*.lindi.tar (and a plain tar, a
                                  .lindi.json) and prints the record: per dataset
                                  {name, format, error, faults:[{part, item,
                                  verdict, audit}]}, as tests/gen/mkbroken.py's

Each fault is one lindi write cut short:
  appended      a member appended (header, data, end blocks), the index not rewritten
  stale_entry   the index outgrew its padding: the old one trashed (dashed), a new one
                appended, .tar_entry.json not rewritten (it names the dashed copy)
  index_trashed the index outgrew its padding: the old one trashed (renamed, dashed), the
                new one never appended: no live .tar_index.json header at all
  truncated     a member appended and indexed, then the file cut inside its data (its
                pages never reached the disk)
  replaced      a member replaced: the new copy appended, the old header trashed, the
                index still naming the old copy
  duplicate     the same, with the old header not yet renamed (two headers, one name)
  healthy       nothing wrong: the repair must write nothing
"""
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mklindi import Archive, dumps  # noqa: E402


def base(path, n=6):
    a = Archive(path)
    for i in range(n):
        a.append("blobs/m%d" % i, bytes([65 + i]) * (300 + 100 * i))
    a.write_index()
    return a


def fault(part, item, verdict, audit):
    return {"part": part, "item": item, "verdict": verdict, "audit": audit}


def build(d):
    os.makedirs(d, exist_ok=True)
    rec = []

    a = base(os.path.join(d, "healthy.lindi.tar"))
    a.close()
    rec.append({"name": "healthy.lindi.tar", "format": "lindi", "error": None, "faults": []})

    a = base(os.path.join(d, "appended.lindi.tar"))
    e = a.append("blobs/late", b"L" * 777)           # header, data, end blocks: no index rewrite
    a.f.close()
    rec.append({"name": "appended.lindi.tar", "format": "lindi", "error": None,
                "faults": [fault("blobs/late", str(e["o"]), "orphan", "listed")]})

    a = base(os.path.join(d, "stale_entry.lindi.tar"))
    a.f.seek(512)
    old_entry = a.f.read(1024)
    for i in range(120):                              # outgrows the 8 KiB index
        a.append("blobs/grow/%03d" % i, b"g" * 10)
    a.write_index()
    a.f.seek(512)
    a.f.write(old_entry)                              # the entry write never landed
    a.f.close()
    rec.append({"name": "stale_entry.lindi.tar", "format": "lindi", "error": None,
                "faults": [fault(".tar_index.json", "", "unreadable", "unreadable")]})

    a = base(os.path.join(d, "index_trashed.lindi.tar"))
    a.trash(".tar_index.json")                        # the grown copy was never appended
    a.files.append({"n": ".tar_index.json", "o": 1536, "d": 2048, "s": 8192})
    a.f.close()
    rec.append({"name": "index_trashed.lindi.tar", "format": "lindi", "error": None,
                "faults": [fault(".tar_index.json", "", "unreadable", "unreadable")]})

    a = base(os.path.join(d, "truncated.lindi.tar"))
    e = a.append("blobs/torn", b"T" * 5000)
    a.write_index()
    a.f.truncate(e["d"] + 1000)                       # its pages never reached the disk
    a.f.close()
    rec.append({"name": "truncated.lindi.tar", "format": "lindi", "error": None,
                "faults": [fault("blobs/torn", str(e["o"]), "short", "unlisted")]})

    a = base(os.path.join(d, "replaced.lindi.tar"))
    old = a.find("blobs/m2")
    a.trash("blobs/m2")
    a.files.append(old)                               # the index still names the old copy
    e = a.append("blobs/m2", b"N" * 640)
    a.files.remove(e)
    a.f.close()
    rec.append({"name": "replaced.lindi.tar", "format": "lindi", "error": None,
                "faults": [fault("blobs/m2", str(old["o"]), "mismatch", "relisted")]})

    a = base(os.path.join(d, "duplicate.lindi.tar"))
    old = a.find("blobs/m3")
    e = a.append("blobs/m3", b"D" * 900)              # the old header not renamed yet
    a.files.remove(e)
    a.f.close()
    rec.append({"name": "duplicate.lindi.tar", "format": "lindi", "error": None,
                "faults": [fault("blobs/m3", str(old["o"]), "mismatch", "relisted")]})

    p = os.path.join(d, "plain.tar")
    with tarfile.open(p, "w", format=tarfile.USTAR_FORMAT) as t:
        src = os.path.join(d, "plain.txt")
        with open(src, "w") as f:
            f.write("plain")
        t.add(src, "plain.txt")
    os.unlink(src)
    rec.append({"name": "plain.tar", "format": "tar", "error": "not a LINDI archive", "faults": []})

    with open(os.path.join(d, "json.lindi.json"), "w") as f:
        f.write(dumps({"refs": {".zgroup": {"zarr_format": 2}}}))
    rec.append({"name": "json.lindi.json", "format": "lindi", "error": "has no index to repair", "faults": []})
    return rec


def main(argv):
    if len(argv) != 3 or argv[1] != "catalog":
        sys.exit(__doc__)
    print(json.dumps(build(argv[2]), indent=1))


if __name__ == "__main__":
    main(sys.argv)
