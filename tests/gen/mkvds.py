#!/usr/bin/env python3
"""Builds OpenVDS cloud-layout datasets for vdsql's tests, demo and benchmarks.

Written from shared/spec/openvds.md alone (stdlib only), independently of vdsql's C
reader, so the tests compare two implementations of the spec. Every dataset is a
directory: VolumeDataLayout, LayerStatus, <layer>/ChunkMetadata/<page>, <layer>/<chunk>
objects carrying user.vdschunkmetadata extended attributes, as vdsql's file store reads.

  mkvds.py tests ROOT          every dataset the SQL tests use, under ROOT/<name>
  mkvds.py big N DIR           one layer of about N chunks, pages only (benchmarks)
  mkvds.py holes N DIR         one layer of N pages of 128 chunks, some not stored (scan tests)
  mkvds.py demo DIR            a small survey for docs/openvds.md (with a page-less layer)
  mkvds.py sample METHOD DIR   a small survey for `make demo` (Zip, RLE or None; every layer readable)
  mkvds.py audit DIR           two layers (8-byte entries; wavelet, 28-byte) with every audit verdict
  mkvds.py nopages DIR         a layer without pages, metadata only on the objects (prints the audit's verdicts)
                               made on purpose; prints what vds_audit must say, as JSON (see build_audit)
  mkvds.py many N DIR          one layer of N chunks, each with a small object whose metadata matches
  mkvds.py dump DIR            reads a dataset back (LayerStatus and every stored page) as JSON,
                               for tests of vdsql's writes: an independent decoding of the pages
"""
import base64
import itertools
import json
import os
import random
import struct
import sys
import zlib

FORMATS = {"1Bit": (0, 0, None), "U8": (1, 1, "B"), "U16": (2, 2, "H"), "R32": (3, 4, "f"),
           "U32": (4, 4, "I"), "R64": (5, 8, "d"), "U64": (6, 8, "Q")}
NOVALUE_HASH = 0xFFFFFFFFFFFFFFFF


def constant_hash(value):
    (bits,) = struct.unpack("<I", struct.pack("<f", value))
    return 0x0101010100000000 | bits


class Layout:
    """VolumeDataLayout plus the section-6 chunk arithmetic."""

    def __init__(self, samples, brick=64, neg=4, pos=4, lod_levels=0, mult2d=4, channels=None, metadata=None,
                 names=None):
        self.samples = list(samples)
        self.brick, self.neg, self.pos, self.lod_levels, self.mult2d = brick, neg, pos, lod_levels, mult2d
        self.channels = channels or [channel("Amplitude", "R32")]
        self.metadata = metadata or []
        self.names = names or ["Sample", "Crossline", "Inline", "Dim3", "Dim4", "Dim5"]

    def json(self):
        lods = "LODLevels_None" if self.lod_levels == 0 else "LODLevels_%d" % self.lod_levels
        return {
            "axisDescriptors": [{"coordinateMax": float(n - 1) * 4, "coordinateMin": 0.0, "name": self.names[d],
                                 "numSamples": n, "unit": "ms" if d == 0 else "unitless"}
                                for d, n in enumerate(self.samples)],
            "channelDescriptors": self.channels,
            "layoutDescriptor": {"brickSize": "BrickSize_%d" % self.brick, "brickSize2DMultiplier": self.mult2d,
                                 "create2DLODs": False, "forceFullResolutionDimension": False,
                                 "fullResolutionDimension": -1, "lodLevels": lods,
                                 "negativeMargin": self.neg, "positiveMargin": self.pos},
            "metadata": self.metadata,
        }

    def grid(self, group, lod, chan):
        """Per dimension (N, B, chunks, neg, pos, in_group) for a layer."""
        n6 = self.samples + [1] * (6 - len(self.samples))
        internal = self.brick - self.neg - self.pos
        if len(group) == 2:
            internal *= self.mult2d
        per_trace = chan.get("channelMapping") == "PerTrace"
        out = []
        for d in range(6):
            n, ing, neg, pos = n6[d], d in group, self.neg, self.pos
            if per_trace and d == 0:
                n = chan["mappedValues"]
                neg = pos = 0
                if n == 1:
                    ing = False
            if not ing:
                out.append((n, 1, n, 0, 0, False))
            elif per_trace and d == 0:
                out.append((n, n, 1, 0, 0, True))
            else:
                b = min(internal << lod, n)
                c = max(1, int((n - 1 - neg - pos) / b) + 1)
                out.append((n, b, c, neg, pos, True))
        return out

    @staticmethod
    def position(grid, chunk):
        idx = []
        for (_, _, c, _, _, _) in grid:
            idx.append(chunk % c)
            chunk //= c
        return idx

    @staticmethod
    def chunk_size(grid, idx, lod):
        sizes = []
        for d, (n, b, c, neg, pos, ing) in enumerate(grid):
            if not ing:
                continue
            start, end = idx[d] * b, min((idx[d] + 1) * b + neg + pos, n)
            sizes.append(((end - start) + (1 << lod) - 1) >> lod)
        return (sizes + [1, 1, 1])[:3], len(sizes)


def channel(name, fmt, mapping="Direct", mapped=1, use_no_value=False, no_value=0.0, scale=1.0, offset=0.0,
            components=1):
    return {"allowLossyCompression": False, "channelMapping": mapping, "components": "Components_%d" % components,
            "discrete": False, "format": "Format_" + fmt, "integerOffset": offset, "integerScale": scale,
            "mappedValues": mapped, "name": name, "noValue": no_value, "renderable": mapping == "Direct",
            "unit": "", "useNoValue": use_no_value, "valueRange": [-1.0, 1.0]}


def rle_encode(raw, unit):
    """Section 9 RLE: repeat runs for 2+ equal units (3 for byte units), else literal
    runs; runs are at most 16384 units. Units are compared as integers (groupby runs
    in C, which keeps generating the test datasets fast)."""
    units = memoryview(raw).cast({1: "B", 2: "H", 4: "I", 8: "Q"}[unit])
    minrep = 3 if unit == 1 else 2
    out = bytearray()

    def emit(literal, run, payload):
        r = run - 1
        out.append((r & 0x3F) | (0x40 if literal else 0) | (0x80 if r >= 64 else 0))
        if r >= 64:
            out.append(r >> 6)
        out.extend(payload)

    lit_start = pos = 0
    def flush_literal(upto):
        s = lit_start
        while s < upto:
            n = min(16384, upto - s)
            emit(True, n, raw[s * unit:(s + n) * unit])
            s += n

    for _, grp in itertools.groupby(units):
        n = sum(1 for _ in grp)
        if n >= minrep:
            flush_literal(pos)
            left = n
            while left > 0:
                k = min(16384, left)
                emit(False, k, raw[pos * unit:(pos + 1) * unit])
                left -= k
            lit_start = pos + n
        pos += n
    flush_literal(pos)
    return struct.pack("<iii", 12 + len(out), len(raw), unit) + bytes(out)


def encode_chunk(method, sizes, ndim, fmt, raw, components=1):
    desc = struct.pack("<6i", ndim, sizes[0], sizes[1], sizes[2], FORMATS[fmt][0], components)
    if method == "None":
        return desc + raw
    if method == "Zip":
        return desc + zlib.compress(raw)
    if method == "RLE":
        return desc + rle_encode(raw, FORMATS[fmt][1] or 1)
    raise ValueError(method)


def sample_value(seed, i):
    """Sample i of chunk `seed`: period 512, a repeat-friendly half (runs of 64 equal
    values) then a literal half (no two neighbours equal), so RLE gets both run kinds."""
    j = i % 512
    if j < 256:
        return (seed * 7 + j // 64) % 97
    return (seed + j) % 97 + 100


def samples(fmt, count, seed):
    code = FORMATS[fmt][2]
    scale = 8.0 if code in "fd" else 1
    period = struct.pack("<512" + code, *[(sample_value(seed, j) / scale if code in "fd" else sample_value(seed, j))
                                          for j in range(512)])
    reps = count // 512 + 1
    return (period * reps)[:count * struct.calcsize(code)]


class Writer:
    def __init__(self, root, layout, seed=1):
        self.root, self.layout, self.layers = root, layout, []
        self.rng = random.Random(seed)
        os.makedirs(root, exist_ok=True)

    def put(self, key, data, meta=None, meta_key="vdschunkmetadata"):
        path = os.path.join(self.root, key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        if meta is not None:
            os.setxattr(path, "user." + meta_key, meta.encode())

    def random_hash(self):
        while True:
            h = self.rng.getrandbits(64)
            if h not in (0, NOVALUE_HASH) and (h >> 32) != 0x01010101:
                return h

    def layer(self, name, chan_index=0, group=(0, 1, 2), lod=0, method="None", page_size=1024, statuses=None,
              write_objects=True, drop_pages=(), short_last_page=None, pages=True, wavelet=False,
              meta_override=None, no_directory=False, stats=True, count_override=None):
        """statuses: function chunk -> 'data' | ('constant', v) | 'novalue' | 'unwritten'."""
        chan = self.layout.channels[chan_index]
        grid = self.layout.grid(list(group), lod, chan)
        count = 1
        for g in grid:
            count *= g[2]
        entry_size = 28 if wavelet else 8
        npages = (count - 1) // page_size + 1
        entries = bytearray(npages * page_size * entry_size)
        fmt = chan["format"].split("_", 1)[1]
        valid = serialized = uncompressed = 0
        for c in range(count):
            st = statuses(c) if statuses else "data"
            if st == "unwritten":
                continue
            valid += 1
            if st == "novalue":
                h = NOVALUE_HASH
            elif isinstance(st, tuple):
                h = constant_hash(st[1])
            else:
                h = self.random_hash()
            hb = struct.pack("<Q", h)
            off = c * entry_size
            if wavelet:
                size = 1000 + c
                entries[off:off + 4] = struct.pack("<I", size)
                entries[off + 4:off + 12] = hb
                entries[off + 12:off + 28] = bytes([200, 180] + [0] * 14)
            else:
                entries[off:off + 8] = hb
            if st == "data" and write_objects and not wavelet:
                idx = Layout.position(grid, c)
                sizes, nd = Layout.chunk_size(grid, idx, lod)
                ebytes = FORMATS[fmt][1] * int(chan["components"].split("_")[1])
                raw = samples(fmt, sizes[0] * sizes[1] * sizes[2] * (ebytes // FORMATS[fmt][1]), c)
                obj = encode_chunk(method if pages else "None", sizes, max(nd, 2) if nd < 3 else 3, fmt, raw,
                                   int(chan["components"].split("_")[1]))
                meta = base64.b64encode(hb).decode()
                if meta_override and c in meta_override:
                    meta = meta_override[c]
                self.put("%s/%d" % (name, c), obj, meta)
                serialized += len(obj)
                uncompressed += len(raw)
        directory = []
        if pages:
            for p in range(npages):
                if p in drop_pages:
                    directory.append(-1)
                    continue
                body = bytes(entries[p * page_size * entry_size:(p + 1) * page_size * entry_size])
                if p == npages - 1 and short_last_page is not None:
                    body = body[:short_last_page * entry_size]
                self.put("%s/ChunkMetadata/%d" % (name, p), body)
                directory.append(p)
        st = {"adaptiveLevelSizes": [0] * 16, "channelName": chan["name"],
              "compressionMethod": "Wavelet" if wavelet else method,
              "compressionTolerance": 0.0, "dimensionGroup": "Dimensions_" + "".join(map(str, group)),
              "layerName": name, "lod": lod, "produceStatus": "Normal"}
        if pages:
            st.update({"hasChunkMetadataPages": True, "chunkCount": count_override or count,
                       "chunkMetadataPageSize": page_size, "chunkMetadataByteSize": entry_size,
                       "uncompressedSize": uncompressed})
            if not no_directory:
                st["pageDirectory"] = directory
            if stats:
                st.update({"validChunkCount": valid, "serializedSize": serialized})
        self.layers.append(st)
        return count

    def finish(self, layout_text=None, status_text=None):
        self.put("VolumeDataLayout", (layout_text or json.dumps(self.layout.json(), indent=4, sort_keys=True)).encode())
        self.put("LayerStatus", (status_text or json.dumps(self.layers, indent=4, sort_keys=True)).encode())


def survey_layout():
    meta = [
        {"category": "SurveyCoordinateSystem", "name": "Origin", "type": "DoubleVector2", "value": [431000.0, 6348000.0]},
        {"category": "SurveyCoordinateSystem", "name": "CRSWkt", "type": "String", "value": "LOCAL_CS[\"test\"]"},
        {"category": "Survey", "name": "LineCount", "type": "Int", "value": 100},
        {"category": "Survey", "name": "Scale", "type": "Double", "value": 0.25},
        {"category": "", "name": "SEGYTextHeader", "type": "BLOB", "value": base64.b64encode(b"C 1 CLIENT vdsql").decode()},
    ]
    chans = [channel("Amplitude", "R32", use_no_value=True, no_value=-999.25),
             channel("Trace", "U8", mapping="PerTrace", mapped=1),
             channel("Quality", "U16", mapping="PerTrace", mapped=3, scale=0.5, offset=-10.0)]
    return Layout([200, 150, 100], brick=64, neg=4, pos=4, lod_levels=1, channels=chans, metadata=meta)


def survey_status(c):
    """LOD0 statuses: a mix of every kind."""
    if c % 7 == 3:
        return ("constant", 0.5)
    if c % 11 == 5:
        return "novalue"
    if c in (20, 21, 22):
        return "unwritten"
    return "data"


def build_survey(root, method="Zip", page_size=10, seed=1, pageless=True):
    """24 LOD0 chunks on 3 pages (last one short), LOD1 (RLE, one page absent),
    PerTrace layers, and (pageless) a page-less 2D layer with no chunk objects."""
    w = Writer(root, survey_layout(), seed)
    w.layer("Dimensions_012LOD0", method=method, page_size=page_size, statuses=survey_status,
            short_last_page=4 if page_size == 10 else None)
    w.layer("Dimensions_012LOD1", lod=1, method="RLE", page_size=2,
            statuses=lambda c: "data" if c < 2 else "unwritten", drop_pages=(1,))
    w.layer("TraceDimensions_012LOD0", chan_index=1, method="RLE", statuses=lambda c: ("constant", 1.0))
    w.layer("QualityDimensions_012LOD0", chan_index=2, method="None",
            statuses=lambda c: "data" if c % 2 == 0 else "unwritten")
    if pageless:
        w.layer("Dimensions_01LOD0", group=(0, 1), method="None", pages=False, write_objects=False)
    w.finish()
    return w


def build_tests(root):
    build_survey(os.path.join(root, "survey"))
    build_survey(os.path.join(root, "survey_none"), method="None")
    build_survey(os.path.join(root, "survey_rle"), method="RLE")
    # wavelet layer: 28-byte entries, no chunk objects (decoding is refused)
    w = Writer(os.path.join(root, "wavelet"), Layout([100, 100, 100], brick=64))
    w.layer("Dimensions_012LOD0", wavelet=True, statuses=lambda c: "unwritten" if c == 3 else "data")
    w.finish()
    # 4096 chunks on 32 pages of 128, 5 pages listed as not stored (-1): scans read each
    # stored page once; the pages (32 KiB) are more than a small cache keeps
    w = Writer(os.path.join(root, "holes"), Layout([1024, 1024, 128], brick=32, neg=0, pos=0))
    w.layer("Dimensions_012LOD0", page_size=128, drop_pages=(2, 5, 6, 9, 30), write_objects=False)
    w.finish()
    # 2.0.x-era status: pages but no pageDirectory, no validChunkCount/serializedSize
    w = Writer(os.path.join(root, "old"), Layout([100, 100, 100], brick=64))
    w.layer("Dimensions_012LOD0", page_size=4, no_directory=True, stats=False)
    w.finish()
    # bad datasets, one fault each
    w = Writer(os.path.join(root, "bad_json"), Layout([100, 100, 100], brick=64))
    w.layer("Dimensions_012LOD0")
    w.finish(layout_text='{"layoutDescriptor": {"brickSize": "BrickSize_64",')
    w = Writer(os.path.join(root, "bad_count"), Layout([100, 100, 100], brick=64))
    w.layer("Dimensions_012LOD0", count_override=9)
    w.finish()
    w = Writer(os.path.join(root, "bad_pages"), Layout([200, 150, 100], brick=64))
    w.layer("Dimensions_012LOD0", page_size=10)   # pages 0,1,2: damaged below
    w.finish()
    with open(os.path.join(root, "bad_pages/Dimensions_012LOD0/ChunkMetadata/0"), "r+b") as f:
        f.truncate(8 * 10 - 3)       # not whole entries
    with open(os.path.join(root, "bad_pages/Dimensions_012LOD0/ChunkMetadata/2"), "r+b") as f:
        f.truncate(8 * 2)            # ends before chunk 22 (the layer has 24)
    os.remove(os.path.join(root, "bad_pages/Dimensions_012LOD0/ChunkMetadata/1"))  # listed, missing
    # Int metadata that is no whole int64 (read as a real, never cast)
    w = Writer(os.path.join(root, "bad_meta"), Layout([100, 100, 100], brick=64, metadata=[
        {"category": "C", "name": "Huge", "type": "Int", "value": 1e300},
        {"category": "C", "name": "Half", "type": "Int", "value": 2.5},
        {"category": "C", "name": "Min", "type": "Int", "value": -2 ** 63},
        {"category": "C", "name": "Past", "type": "Int", "value": 2 ** 63},
        {"category": "C", "name": "Fine", "type": "Int", "value": 42}]))
    w.layer("Dimensions_012LOD0")
    w.finish()
    w = Writer(os.path.join(root, "bad_chunks"), Layout([200, 150, 100], brick=64))
    w.layer("Dimensions_012LOD0", method="Zip", meta_override={1: "AAAAAAAAAAA="})
    w.finish()
    with open(os.path.join(root, "bad_chunks/Dimensions_012LOD0/0"), "r+b") as f:
        f.seek(30)
        f.write(b"garbage!")         # zlib stream corrupted
    os.remove(os.path.join(root, "bad_chunks/Dimensions_012LOD0/2"))


def build_big(n, root):
    """One layer of about n chunks (a cube of 32-sample bricks, no margins), pages only."""
    side = max(1, round(n ** (1 / 3)))
    dims = [side, side, max(1, n // (side * side))]
    w = Writer(root, Layout([d * 32 for d in dims], brick=32, neg=0, pos=0), seed=7)
    rng = random.Random(3)
    kinds = ["data"] * 6 + ["unwritten"] * 2 + ["novalue", ("constant", 0.0)]
    w.layer("Dimensions_012LOD0", statuses=lambda c: kinds[rng.randrange(10)], write_objects=False)
    w.finish()


def build_holes(npages, root):
    """One layer of npages pages of 128 chunks (a grid of 8 x 16 x npages chunks), pages
    only: about one page in six listed as not stored (-1), and a run of ten, so that a
    scan meets holes of one page and of many; statuses mixed as in build_big."""
    w = Writer(root, Layout([8 * 32, 16 * 32, npages * 32], brick=32, neg=0, pos=0), seed=11)
    rng = random.Random(5)
    drop = {p for p in range(npages) if rng.random() < 0.16} | set(range(npages // 3, npages // 3 + 10))
    kinds = ["data"] * 6 + ["unwritten"] * 2 + ["novalue", ("constant", 0.0)]
    w.layer("Dimensions_012LOD0", page_size=128, statuses=lambda c: kinds[rng.randrange(10)], write_objects=False,
            drop_pages=drop)
    w.finish()


def signed(h):
    return h - (1 << 64) if h >= 1 << 63 else h


def b64(b):
    return base64.b64encode(b).decode()


def build_audit(root):
    """A dataset whose chunk objects disagree with its pages in every way vds_audit
    names (shared/spec/openvds.md sections 4 and 5), each fault made on purpose below.
    Layers: Dimensions_012LOD0 (84 chunks, None, 8-byte entries, pages of 8, page 2
    listed as not stored) and Dimensions_012LOD1 (12 chunks, Wavelet, 28-byte entries).
    Returns {"layers": {layer: {"rows": {chunk: row}, ...}}, "objects": {layer: [...]}}
    where row = page_status, page_hash, object_hash, object_size, verdict, repairable
    (hashes as signed 64-bit, as SQL shows them) and "fixed" the entry a repair writes
    (hash, object size) -- all from the faults' definitions, not from vdsql."""
    lay = Layout([400, 300, 100], brick=64, lod_levels=1)
    w = Writer(root, lay, seed=21)
    rng = random.Random(22)
    exp = {"layers": {}, "objects": {}}

    def make_layer(name, lod, wavelet, page_size, plan, drop_pages=()):
        """plan: chunk -> dict(page=..., obj=...). page: None (unwritten) | ('data', hash[, size, levels])
        | ('constant', v) | 'novalue'. obj: None | dict(size, meta (text or None), key)."""
        chan = lay.channels[0]
        grid = lay.grid([0, 1, 2], lod, chan)
        count = 1
        for g in grid:
            count *= g[2]
        es = 28 if wavelet else 8
        npages = (count - 1) // page_size + 1
        entries = bytearray(npages * page_size * es)
        rows, objs = {}, []
        valid = serialized = uncompressed = 0
        for c in range(count):
            p = plan.get(c, {})
            page, obj = p.get("page"), p.get("obj")
            status, h, size, levels = "unwritten", 0, 0, bytes(16)
            if page == "novalue":
                status, h = "novalue", NOVALUE_HASH
            elif isinstance(page, tuple) and page[0] == "constant":
                status, h = "constant", constant_hash(page[1])
            elif isinstance(page, tuple) and page[0] == "data":
                status, h = "data", page[1]
                if wavelet:
                    size, levels = page[2], page[3]
            if status != "unwritten":
                valid += 1
                off = c * es
                if wavelet:
                    entries[off:off + 28] = struct.pack("<IQ", size, h) + levels
                    serialized += size
                else:
                    entries[off:off + 8] = struct.pack("<Q", h)
                if status == "data":
                    sizes, _ = Layout.chunk_size(grid, Layout.position(grid, c), lod)
                    uncompressed += sizes[0] * sizes[1] * sizes[2] * 4
            if obj is not None:
                key = "%s/%d" % (name, c)
                body = obj.get("body")
                if body is None:
                    body = bytes(rng.getrandbits(8) for _ in range(obj["size"]))
                w.put(key, body, obj.get("meta"), obj.get("meta_key", "vdschunkmetadata"))
                objs.append({"key": key, "chunk": c, "size": len(body), "metadata": obj.get("meta")})
                if status == "data" and not wavelet:
                    serialized += len(body)
            if status == "unwritten" and obj is None:
                continue
            # the verdict, from section 5's rules as docs/openvds.md states them
            meta = obj.get("meta") if obj else None
            ohash, olevels = None, None
            if meta is not None:
                try:
                    raw = base64.b64decode(meta, validate=True)
                except Exception:
                    raw = b""
                if len(raw) == (24 if wavelet else 8) and struct.unpack("<Q", raw[:8])[0] != 0:
                    ohash, olevels = struct.unpack("<Q", raw[:8])[0], raw[8:24] if wavelet else None
            osize = len(obj["body"]) if obj and obj.get("body") is not None else (obj["size"] if obj else None)
            fixed = None
            if obj is None:
                verdict = "missing_object" if status == "data" else "ok"
            elif status == "unwritten":
                verdict = "orphan_object"
            elif ohash is None:
                verdict = "missing_metadata"
            elif ohash != h or (wavelet and olevels != levels):
                verdict = "mismatch"
            elif wavelet and status == "data" and size != osize:
                verdict = "size_mismatch"
            else:
                verdict = "ok"
            if verdict in ("mismatch", "size_mismatch", "orphan_object") and ohash is not None:
                # can the object be this chunk at all (docs/openvds.md, bad_object)? A constant
                # or NoValue hash only on an empty object (OpenVDS stores constants so), a
                # data hash never on one, and an uncompressed object is exactly the chunk's
                # 24-byte descriptor and samples
                special = ohash == NOVALUE_HASH or ohash >> 32 == 0x01010101
                sizes, _ = Layout.chunk_size(grid, Layout.position(grid, c), lod)
                fits = osize == 0 if special else osize > 0 and (wavelet or osize == 24 + sizes[0] * sizes[1] * sizes[2] * 4)
                if fits:
                    fixed = ["%016x" % ohash, osize if wavelet else None]
                else:
                    verdict = "bad_object"
            rows[str(c)] = {"page_status": status, "page_hash": signed(h) if status != "unwritten" else None,
                            "object_hash": signed(ohash) if ohash is not None else None, "object_size": osize,
                            "verdict": verdict, "fixed": fixed}
        directory = []
        for p in range(npages):
            if p in drop_pages:
                assert not any(entries[p * page_size * es:(p + 1) * page_size * es])
                directory.append(-1)
                continue
            w.put("%s/ChunkMetadata/%d" % (name, p), bytes(entries[p * page_size * es:(p + 1) * page_size * es]))
            directory.append(p)
        w.layers.append({"adaptiveLevelSizes": [0] * 16, "channelName": "Amplitude",
                         "compressionMethod": "Wavelet" if wavelet else "None", "compressionTolerance": 0.0,
                         "dimensionGroup": "Dimensions_012", "layerName": name, "lod": lod,
                         "produceStatus": "Normal", "hasChunkMetadataPages": True, "chunkCount": count,
                         "chunkMetadataPageSize": page_size, "chunkMetadataByteSize": es,
                         "uncompressedSize": uncompressed, "pageDirectory": directory, "validChunkCount": valid,
                         "serializedSize": serialized})
        exp["layers"][name] = {"rows": rows, "count": count}
        exp["objects"][name] = objs

    def hb(h):
        return struct.pack("<Q", h)

    def real(c, lod=0):
        """A chunk object that can be chunk c of the None layer: its descriptor (section 9:
        3-D, the chunk's size, R32, 1 component) and its samples (zeros: never read)."""
        grid = lay.grid([0, 1, 2], lod, lay.channels[0])
        sizes, _ = Layout.chunk_size(grid, Layout.position(grid, c), lod)
        return struct.pack("<6i", 3, sizes[0], sizes[1], sizes[2], 3, 1) + bytes(sizes[0] * sizes[1] * sizes[2] * 4)

    H = [w.random_hash() for _ in range(40)]
    # Dimensions_012LOD0: 8-byte entries
    plan = {
        0: {"page": ("data", H[0]), "obj": {"size": 300, "meta": b64(hb(H[0]))}},                 # ok
        1: {"page": ("data", H[1]), "obj": {"size": 301, "meta": b64(hb(H[1]))}},                 # ok
        2: {"page": ("constant", 0.5)},                                                            # ok: no object needed
        3: {"page": "novalue"},                                                                    # ok
        4: {"page": ("constant", 1.0), "obj": {"body": b"", "meta": b64(hb(constant_hash(1.0)))}},  # ok: empty object
        5: {"page": ("data", H[5]), "obj": {"body": real(5), "meta": b64(hb(H[6]))}},             # mismatch
        6: {"page": ("data", H[7])},                                                               # missing_object
        7: {"page": ("data", H[8]), "obj": {"size": 307}},                                        # missing_metadata
        8: {"page": ("data", H[9]), "obj": {"size": 308, "meta": "not base64!"}},                 # missing_metadata
        9: {"page": ("data", H[10]), "obj": {"size": 309, "meta": b64(hb(H[10]) + bytes(16))}},   # wrong length
        10: {"obj": {"body": real(10), "meta": b64(hb(H[11]))}},                                  # orphan, repairable
        11: {"obj": {"size": 311}},                                                                # orphan, no metadata
        12: {"page": ("constant", 0.0), "obj": {"body": real(12), "meta": b64(hb(H[12]))}},       # mismatch
        13: {"page": ("data", H[13]), "obj": {"size": 313, "meta": b64(hb(H[13])),
                                              "meta_key": "VDS-Chunk-Metadata"}},                  # ok: legacy key
        15: {"page": ("data", H[15]), "obj": {"size": 315, "meta": "AAAAAAAAAAA="}},              # hash 0: not usable
        17: {"obj": {"body": real(17), "meta": b64(hb(H[17]))}},                                  # orphan on page 2 (-1)
        18: {"obj": {"size": 318, "meta": b64(hb(NOVALUE_HASH))}},                                # bad_object: NoValue, 318 bytes
        19: {"obj": {"body": b"", "meta": b64(hb(constant_hash(1.5)))}},                          # orphan: an OpenVDS constant
        20: {"obj": {"size": 320, "meta": b64(hb(H[18]))}},                                       # bad_object: wrong size
        40: {"page": ("data", H[20]), "obj": {"size": 340, "meta": b64(hb(H[20]))}},              # ok
        83: {"page": ("data", H[21]), "obj": {"body": real(83), "meta": b64(hb(H[22]))}},         # mismatch, last page
        82: {"page": ("data", H[19]), "obj": {"size": 382, "meta": b64(hb(H[16]))}},              # bad_object: garbage
    }
    make_layer("Dimensions_012LOD0", 0, False, 8, plan, drop_pages=(2,))
    # objects under the layer that are no chunk of it: listed with chunk NULL, never audited
    for key in ("junk", "017", "84", "sub/5"):
        w.put("Dimensions_012LOD0/" + key, b"x" * 7, b64(hb(H[30])))
        exp["objects"]["Dimensions_012LOD0"].append({"key": "Dimensions_012LOD0/" + key, "chunk": None, "size": 7,
                                                     "metadata": b64(hb(H[30]))})
    # Dimensions_012LOD1: wavelet, 28-byte entries (size, hash, 16 level bytes)
    L1, L2, L3 = bytes([200, 180] + [0] * 14), bytes([128] + [0] * 15), bytes([250] * 16)
    plan = {
        0: {"page": ("data", H[23], 2000, L1), "obj": {"size": 2000, "meta": b64(hb(H[23]) + L1)}},   # ok
        1: {"page": ("data", H[24], 1500, L2), "obj": {"size": 1500, "meta": b64(hb(H[24]) + L2)}},   # ok
        2: {"page": ("data", H[25], 5000, L1), "obj": {"size": 4000, "meta": b64(hb(H[25]) + L1)}},   # size_mismatch
        3: {"page": ("data", H[26], 1200, L1), "obj": {"size": 1200, "meta": b64(hb(H[26]) + L2)}},   # mismatch: levels
        4: {"page": ("data", H[27], 1300, L1), "obj": {"size": 1300, "meta": b64(hb(H[28]) + L1)}},   # mismatch: hash
        5: {"page": ("data", H[29], 1400, L1)},                                                        # missing_object
        6: {"obj": {"size": 1600, "meta": b64(hb(H[31]) + L3)}},                                      # orphan, repairable
        7: {"page": ("constant", 2.0)},                                                                # ok
        8: {"page": ("data", H[32], 1800, L1), "obj": {"size": 1800, "meta": b64(hb(H[32]))}},        # 8 bytes: unusable
        10: {"page": ("data", H[33], 3000, L3), "obj": {"size": 3000, "meta": b64(hb(H[33]) + L3)}},  # ok, 16 levels
    }
    make_layer("Dimensions_012LOD1", 1, True, 8, plan)
    w.finish()
    return exp


def build_nopages(root):
    """A layer without chunk-metadata pages (spec section 4: the objects' metadata is then
    all there is, and a missing chunk object is a read error, there being no sparse
    layer without pages): 84 chunks, 61 written as None objects. 59 carry a valid
    vdschunkmetadata (audit: ok), chunk 4 none and chunk 9 metadata that is not base64
    (missing_metadata); the 23 chunks without an object (planned unwritten, constant or
    novalue, which only pages could say) are missing_object. Returns {chunk: verdict},
    from this plan, not from vdsql."""
    w = Writer(root, Layout([400, 300, 100], brick=64, lod_levels=1), seed=31)
    plan = lambda c: "unwritten" if c % 4 == 3 else ("constant", 1.0) if c == 6 else "novalue" if c == 10 else "data"  # noqa: E731
    over = {4: None, 9: "not base64!"}
    n = w.layer("Dimensions_012LOD0", method="None", pages=False, statuses=plan, meta_override=over)
    w.finish()
    return {str(c): "missing_object" if plan(c) != "data" else "missing_metadata" if c in over else "ok"
            for c in range(n)}


def build_many(n, root, body=64):
    """One layer of n chunks (a row of 32-sample bricks), every one written, each with a
    small chunk object (body bytes, not decodable samples: audits never read bodies)
    whose vdschunkmetadata matches its page entry: an audit says ok n times."""
    w = Writer(root, Layout([32 * n, 32, 32], brick=32, neg=0, pos=0), seed=5)
    name = "Dimensions_012LOD0"
    page_size = 1024
    entries = bytearray(((n - 1) // page_size + 1) * page_size * 8)
    for c in range(n):
        h = w.random_hash()
        entries[c * 8:c * 8 + 8] = struct.pack("<Q", h)
        w.put("%s/%d" % (name, c), bytes([c & 255]) * body, b64(struct.pack("<Q", h)))
    npages = len(entries) // (page_size * 8)
    for p in range(npages):
        w.put("%s/ChunkMetadata/%d" % (name, p), bytes(entries[p * page_size * 8:(p + 1) * page_size * 8]))
    w.layers.append({"adaptiveLevelSizes": [0] * 16, "channelName": "Amplitude", "compressionMethod": "None",
                     "compressionTolerance": 0.0, "dimensionGroup": "Dimensions_012", "layerName": name, "lod": 0,
                     "produceStatus": "Normal", "hasChunkMetadataPages": True, "chunkCount": n,
                     "chunkMetadataPageSize": page_size, "chunkMetadataByteSize": 8,
                     "uncompressedSize": n * 32 * 32 * 32 * 4, "pageDirectory": list(range(npages)),
                     "validChunkCount": n, "serializedSize": n * body})
    w.finish()


def dump(root):
    """{layer: {"status": its LayerStatus object, "pages": {page: byte length},
    "entries": {chunk: [hash as 16 hex digits (JSON numbers are doubles), object size or
    null]} for every non-zero entry}}."""
    with open(os.path.join(root, "LayerStatus"), "rb") as f:
        status = json.load(f)
    out = {}
    for st in status:
        layer = {"status": st, "pages": {}, "entries": {}}
        out[st["layerName"]] = layer
        if not st.get("hasChunkMetadataPages"):
            continue
        size, esize, count = st["chunkMetadataPageSize"], st["chunkMetadataByteSize"], st["chunkCount"]
        directory = st.get("pageDirectory", list(range((count - 1) // size + 1)))
        for p, name in enumerate(directory):
            if name < 0:
                continue
            with open(os.path.join(root, st["layerName"], "ChunkMetadata", str(name)), "rb") as f:
                body = f.read()
            layer["pages"][str(p)] = len(body)
            for i in range(len(body) // esize):
                e = body[i * esize:(i + 1) * esize]
                if esize == 28:
                    osize, h = struct.unpack("<IQ", e[:12])
                else:
                    osize, h = None, struct.unpack("<Q", e)[0]
                if h:
                    layer["entries"][str(p * size + i)] = ["%016x" % h, osize]
    json.dump(out, sys.stdout, sort_keys=True)


def main(argv):
    if len(argv) >= 3 and argv[1] == "tests":
        build_tests(argv[2])
    elif len(argv) >= 4 and argv[1] == "big":
        build_big(int(argv[2]), argv[3])
    elif len(argv) >= 4 and argv[1] == "holes":
        build_holes(int(argv[2]), argv[3])
    elif len(argv) >= 3 and argv[1] == "demo":
        build_survey(argv[2], page_size=1024)
    elif len(argv) >= 4 and argv[1] == "many":
        build_many(int(argv[2]), argv[3])
    elif len(argv) >= 3 and argv[1] == "nopages":
        json.dump(build_nopages(argv[2]), sys.stdout, sort_keys=True)
    elif len(argv) >= 3 and argv[1] == "audit":
        json.dump(build_audit(argv[2]), sys.stdout, sort_keys=True)
    elif len(argv) >= 3 and argv[1] == "dump":
        dump(argv[2])
    elif len(argv) >= 4 and argv[1] == "sample":  # make demo's sample: every layer readable
        build_survey(argv[3], method=argv[2], page_size=1024, pageless=False)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
