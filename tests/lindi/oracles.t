#!/usr/bin/env python3
"""tar_members against independent tar readers, as TAP: every member of every archive
(name, link target, type, size, data offset, the bytes at that offset) compared with
Python's tarfile and with libarchive's bsdtar, over archives GNU tar makes (every
--format, sparse files of more than 4 regions in each sparse format, long names),
archives tarfile makes (long names, pax records past 4 KiB and comments that mention
"path=", a 9 GiB member kept sparse on disk), hand-made faults (signed checksums, a
Solaris 'X' header, a directory with a size, a leading NUL in a size field, cpio input),
CPython's testtar.tar (Debian's libpython3.11-testsuite) and libarchive's test archives
(LIBARCHIVE_TESTS: a folder of libarchive/test/*.tar.uu; skipped, saying so, when unset),
and 400 copies with changed header bytes walked without a crash or hang (TAR_MUTATIONS).
Prints the counts recorded in docs/lindi.md."""
import binascii
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ok, plan, shell_args, skip  # noqa: E402

TESTTAR = os.environ.get("TESTTAR", "/usr/lib/python3.11/test/testtar.tar")
LATESTS = os.environ.get("LIBARCHIVE_TESTS")
# rows of tar_members that are not members: the extended headers applied to the next one
META = {"pax", "pax_global", "gnu_longname", "gnu_longlink", "solaris_acl"}
# tarfile's typeflags, named as tar.h names them (written from POSIX and GNU tar's docs)
TF_TYPE = {b"0": "file", b"\0": "file", b"7": "contiguous", b"S": "sparse", b"1": "hardlink", b"2": "symlink",
           b"3": "chardev", b"4": "blockdev", b"5": "dir", b"6": "fifo", b"V": "volume_label"}
# bsdtar's mode letter for each type (a hard link shows as "h", "link to")
BSD_TYPE = {"file": "-", "contiguous": "-", "sparse": "-", "hardlink": "h", "symlink": "l", "chardev": "c",
            "blockdev": "b", "dir": "d", "fifo": "p", "other": "-"}
counts = {"archives": 0, "members": 0, "exact": 0}


def run(args, **kw):
    return subprocess.run(args, capture_output=True, **kw)


def vd_rows(path):
    """tar_members' rows, or the error text."""
    q = ("SELECT hex(name), header_offset, data_offset, size, stored_size, type, hex(linkname) "
         "FROM tar_members('%s');\n" % path.replace("'", "''"))
    p = run(shell_args(), input=q.encode())
    err = p.stderr.decode("utf-8", "replace")
    if "Sanitizer" in err or "runtime error:" in err:  # under ASan/UBSan: never taken for the error expected
        return "sanitizer report: " + err[err.find("=="):][:2000]
    if p.returncode != 0 or p.stderr:
        return p.stderr.decode("utf-8", "replace").strip() or "exit %d" % p.returncode
    rows = []
    for line in p.stdout.decode().splitlines():
        n, ho, do, sz, st, ty, ln = line.split("|")
        rows.append(dict(name=bytes.fromhex(n), hoff=int(ho), doff=int(do), size=int(sz), stored=int(st), type=ty,
                         link=bytes.fromhex(ln)))
    return rows


UNVIS = {b"\\": b"\\", b"a": b"\a", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"v": b"\v"}


def unvis(s):
    """bsdtar's escapes (\\ooo, \\n and the like, \\\\) back to bytes."""
    return re.sub(rb"\\([0-7]{3}|[\\abfnrtv])",
                  lambda m: UNVIS.get(m.group(1)) or bytes([int(m.group(1), 8)]), s.encode("utf-8", "surrogateescape"))


def tarfile_members(path):
    out = []
    with tarfile.open(path, encoding="utf-8", errors="surrogateescape") as t:
        for m in t.getmembers():
            data = None
            if m.isreg() and m.size < 1 << 30:
                fo = t.extractfile(m)
                if m.sparse is None:
                    data = fo.read()
                else:  # the stored bytes are the data regions, in order
                    data = b""
                    for o, n in m.sparse:
                        fo.seek(o)
                        data += fo.read(n)
            if m.type == b"A":  # a Solaris ACL: tarfile lists it, libarchive and Solaris tar apply it
                continue
            out.append(dict(name=m.name.encode("utf-8", "surrogateescape"), type=TF_TYPE.get(m.type, "other"),
                            size=m.size, doff=m.offset_data, data=data,
                            link=m.linkname.encode("utf-8", "surrogateescape")))
    return out


def bsdtar_members(path, digests=True):
    """bsdtar's listing (-tv: type, size, name, link) and, when its mtree writer reads the
    whole archive, the sha256 of each file's bytes by name."""
    p = run(["bsdtar", "--numeric-owner", "-tvf", path], env=dict(os.environ, LC_ALL="C.UTF-8"))
    out = []
    for line in p.stdout.decode("utf-8", "surrogateescape").splitlines():
        f = line.split(None, 8)
        if len(f) < 9:
            continue
        name, link = f[8], ""
        if f[0][0] == "l" and " -> " in name:
            name, link = name.split(" -> ", 1)
        elif " link to " in name:
            name, link = name.split(" link to ", 1)
        out.append(dict(mode=f[0][0], size=0 if "," in f[4] else int(f[4]), name=unvis(name), link=unvis(link)))
    sums = None
    if digests:
        m = run(["bsdtar", "-cf", "-", "--format=mtree", "--options=!all,type,sha256", "@" + path],
                env=dict(os.environ, LC_ALL="C.UTF-8"))
        if m.returncode == 0:
            sums = {}
            for line in m.stdout.decode("ascii", "replace").splitlines():
                f = line.split()
                if f and not f[0].startswith("#") and any(x.startswith("sha256digest=") for x in f):
                    name = unvis(f[0])
                    sums.setdefault(name[2:] if name.startswith(b"./") else name, set()).add(
                        [x for x in f if x.startswith("sha256digest=")][0].split("=")[1])
    return out, p.returncode, sums


def strip(n):
    return n.rstrip(b"/")


def compare(label, path, rows, tf, bsd, sums, big=False):
    """Per member: name, link, type, size, data offset and bytes against tarfile; name,
    link, type letter, size and sha256 against bsdtar. Returns the differences."""
    members = [r for r in rows if r["type"] not in META]
    tf = list(tf)
    bsd_left = list(bsd) if bsd is not None else None
    diffs = []
    with open(path, "rb") as f:
        for i, r in enumerate(members):
            counts["members"] += 1
            d = []
            t = tf[i] if i < len(tf) else None
            if t is None:
                d.append("tarfile has no member %d" % i)
            else:
                if strip(t["name"]) != strip(r["name"]):
                    d.append("name %r, tarfile %r" % (r["name"], t["name"]))
                if t["type"] != r["type"] and not (t["type"] == "file" and r["type"] == "dir"
                                                    and r["name"].endswith(b"/")):
                    d.append("type %s, tarfile %s" % (r["type"], t["type"]))
                if r["type"] in ("symlink", "hardlink") and t["link"] != r["link"]:
                    d.append("link %r, tarfile %r" % (r["link"], t["link"]))
                if t["doff"] != r["doff"]:
                    d.append("data offset %d, tarfile %d" % (r["doff"], t["doff"]))
                if t["type"] in ("file", "sparse", "contiguous") and t["size"] != r["size"]:
                    d.append("size %d, tarfile %d" % (r["size"], t["size"]))
                if t["data"] is not None:
                    f.seek(r["doff"])
                    got = f.read(r["stored"])
                    if got != t["data"]:
                        d.append("the %d bytes at %d are not tarfile's %d" % (r["stored"], r["doff"], len(t["data"])))
            if bsd_left is not None and r["type"] != "volume_label":  # bsdtar lists no volume label
                b = next((x for x in bsd_left if strip(x["name"]) == strip(r["name"])), None)
                if b is None:
                    d.append("bsdtar lists no %r" % r["name"])
                else:
                    bsd_left.remove(b)
                    if BSD_TYPE.get(r["type"], "?") != b["mode"]:
                        d.append("type %s, bsdtar %s" % (r["type"], b["mode"]))
                    # (bsdtar shows a v7 directory's size field, and 0 for a '5' one)
                    if b["size"] != r["size"] and r["type"] not in ("hardlink", "symlink", "dir"):
                        d.append("size %d, bsdtar %d" % (r["size"], b["size"]))
                    if r["link"] and b["link"] and r["link"] != b["link"]:
                        d.append("link %r, bsdtar %r" % (r["link"], b["link"]))
                    if sums is not None and r["type"] in ("file", "sparse", "contiguous") and not big:
                        f.seek(r["doff"])
                        stored = f.read(r["stored"])
                        want = sums.get(strip(r["name"]))
                        # bsdtar gives the whole file: a sparse one is its regions with zeros between
                        if want is not None and r["stored"] == r["size"] and \
                                hashlib.sha256(stored).hexdigest() not in want:
                            d.append("bytes at %d differ from bsdtar's" % r["doff"])
            if d:
                diffs.append("%s: member %d %r: %s" % (label, i, r["name"][:80], "; ".join(d)))
            else:
                counts["exact"] += 1
    if len(tf) > len(members):
        diffs.append("%s: tarfile has %d members, tar_members %d" % (label, len(tf), len(members)))
    if bsd_left:
        diffs.append("%s: bsdtar lists %d more: %r" % (label, len(bsd_left), [x["name"] for x in bsd_left][:5]))
    return diffs


def check_archive(label, path, big=False, expect_error=None, known=None):
    """One archive against the readers: ok when every member is an exact match; for an
    archive that an oracle refuses (expect_error), when tar_members refuses it too, naming
    the file; for a known disagreement (known: why), when tar_members still says so."""
    counts["archives"] += 1
    rows = vd_rows(path)
    try:
        tf, tf_err = tarfile_members(path), None
    except (tarfile.TarError, ValueError, OverflowError, EOFError) as e:
        tf, tf_err = None, str(e).splitlines()[-1]
    # (bsdtar's digests read sparse files whole: not for archives of large files)
    small = not isinstance(rows, str) and sum(r["size"] for r in rows) < 1 << 24
    bsd, bsd_rc, sums = bsdtar_members(path, digests=small and not big)
    if expect_error is not None or known is not None:
        gnu = run(["tar", "-tf", path])
        refusers = [n for n, bad in (("tarfile", tf_err), ("bsdtar", bsd_rc), ("GNU tar", gnu.returncode)) if bad]
        want = expect_error or known
        good = isinstance(rows, str) and want in rows and path in rows
        if expect_error is not None:
            return ok(good and refusers, "%s: refused, naming the file (%s), as %s refuse it" %
                      (label, expect_error, ", ".join(refusers) or "no oracle"),
                      rows if isinstance(rows, str) else "rows: %r" % rows[:3])
        return ok(good and not refusers, "%s: known disagreement, every oracle reads it: %s" % (label, known),
                  rows if isinstance(rows, str) else "rows: %r" % rows[:3])
    if isinstance(rows, str):
        return ok(False, "%s: tar_members reads it as tarfile does" % label, rows)
    if tf is None:
        return ok(False, "%s: tarfile reads it" % label, tf_err)
    diffs = compare(label, path, rows, tf, bsd if bsd else None, sums, big)
    n = len([r for r in rows if r["type"] not in META])
    return ok(not diffs, "%s: %d members, each as tarfile and bsdtar%s read it" %
              (label, n, "" if bsd_rc == 0 else " (which warns)"), "\n".join(diffs))


def sparse_file(path, regions):
    with open(path, "wb") as f:
        f.truncate(1 << 20)
        for i in range(regions):
            f.seek(i * 150000 + 7)
            f.write(b"R%d" % i * 300)


def gnu_archives(tmp):
    src = os.path.join(tmp, "src")
    deep = os.path.join(src, *(["d" * 60] * 5))
    os.makedirs(deep)
    with open(os.path.join(deep, "long-" + "n" * 40), "wb") as f:  # 356-byte path
        f.write(os.urandom(3000))
    with open(os.path.join(src, "small"), "wb") as f:
        f.write(b"hello\n")
    open(os.path.join(src, "empty"), "wb").close()
    os.symlink(os.path.relpath(os.path.join(deep, "long-" + "n" * 40), src), os.path.join(src, "link"))
    os.link(os.path.join(src, "small"), os.path.join(src, "hard"))
    sparse_file(os.path.join(src, "sparse"), 6)
    made = []
    for fmt in ("gnu", "oldgnu", "posix", "ustar", "v7"):
        out = os.path.join(tmp, "gnutar-%s.tar" % fmt)
        # ustar and v7 cannot hold the long names (GNU tar leaves those out, saying so) nor sparse files
        run(["tar", "--format=" + fmt] + (["-S"] if fmt in ("gnu", "oldgnu", "posix") else []) + ["-cf", out, "-C", src, "."])
        made.append(("GNU tar --format=%s%s" % (fmt, " -S" if fmt in ("gnu", "oldgnu", "posix") else ""), out))
    for ver in ("0.0", "0.1", "1.0"):
        out = os.path.join(tmp, "gnutar-posix-sparse%s.tar" % ver)
        run(["tar", "--format=posix", "-S", "--sparse-version=" + ver, "-cf", out, "-C", src, "."], check=True)
        made.append(("GNU tar --format=posix --sparse-version=%s" % ver, out))
    return made


def tarfile_archives(tmp):
    made = []
    long = "/".join(["p" * 70] * 4) + "/file"  # 285 bytes
    for fmt, fname in ((tarfile.USTAR_FORMAT, "ustar"), (tarfile.GNU_FORMAT, "gnu"), (tarfile.PAX_FORMAT, "pax")):
        out = os.path.join(tmp, "tarfile-%s.tar" % fname)
        with tarfile.open(out, "w", format=fmt) as t:
            for name, data in (("a.txt", b"one"), (long if fmt != tarfile.USTAR_FORMAT else "short", os.urandom(1500))):
                ti = tarfile.TarInfo(name)
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
            d = tarfile.TarInfo("dir")
            d.type = tarfile.DIRTYPE
            t.addfile(d)
        made.append(("tarfile %s" % fname, out))
    # pax records: a comment that mentions path=, a path record after 4 KiB, a value with a newline
    out = os.path.join(tmp, "tarfile-pax-records.tar")
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT, pax_headers={"comment": "global path=/etc/shadow"}) as t:
        for name, extra in (("first", {"comment": "see path=/etc/passwd"}),
                            ("late-" + "q" * 300, {"comment": "x" * 5000}),
                            ("new\nline", {})):
            ti = tarfile.TarInfo(name)
            ti.size = 5
            ti.pax_headers = extra
            t.addfile(ti, io.BytesIO(b"12345"))
    made.append(("tarfile pax records (comments, 5000 bytes before path, a newline, a global header)", out))
    return made


def big_member(tmp):
    """A 9 GiB member as tarfile writes it (pax size, ustar size 0), its data a hole."""
    out = os.path.join(tmp, "tarfile-9gib.tar")
    big = 9 << 30
    ti = tarfile.TarInfo("big.bin")
    ti.size = big
    head = ti.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    after = tarfile.TarInfo("after.txt")
    after.size = 5
    with open(out, "wb") as f:
        f.write(head)
        f.seek(len(head) + big)
        f.write(after.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape") + b"after" + b"\0" * 507 + b"\0" * 1024)
    return out


def reseal(h, signed=False):
    h = bytearray(h)
    h[148:156] = b" " * 8
    s = sum((x - 256 if x > 127 else x) if signed else x for x in h)
    h[148:156] = b"%06o\0 " % (s & 0o777777)
    return bytes(h)


def handmade(tmp):
    made = []
    # a Solaris 'X' header: tarfile's pax archive with the 'x' typeflag made 'X'
    src = os.path.join(tmp, "tarfile-pax.tar")
    raw = bytearray(open(src, "rb").read())
    for off in range(0, len(raw), 512):
        if raw[off + 156:off + 157] == b"x" and raw[off + 257:off + 262] == b"ustar":
            raw[off:off + 512] = reseal(raw[off:off + 156] + b"X" + raw[off + 157:off + 512])
    out = os.path.join(tmp, "solaris-X.tar")
    open(out, "wb").write(raw)
    made.append(("a Solaris 'X' extended header with a long path", out))
    # a directory whose size is not 0, followed at once by the next header (as tarfile,
    # bsdtar and GNU tar read it); and a signed checksum on a name of bytes over 127
    def header(name, size, typ, signed=False):
        ti = tarfile.TarInfo(name)
        ti.size = size
        ti.type = typ
        h = ti.tobuf(tarfile.USTAR_FORMAT, "latin-1", "strict")
        return reseal(h, signed)
    out = os.path.join(tmp, "dir-size-signed.tar")
    with open(out, "wb") as f:
        f.write(header("d", 1024, tarfile.DIRTYPE))
        f.write(header("after-dir", 3, tarfile.REGTYPE) + b"abc" + b"\0" * 509)
        f.write(header("signed-\u00e4\u00f6\u00fc", 4, tarfile.REGTYPE, signed=True) + b"wxyz" + b"\0" * 508)
        f.write(b"\0" * 1024)
    made.append(("a directory with size 1024, a signed checksum", out))
    return made


def mutated(tmp, paths, n=400):
    """Hostile headers: copies of the archives with a few bytes of a header block changed
    (seeded), every one walked by one shell under a timeout: no crash, no hang, no
    sanitizer report, and every error names its file."""
    import random
    rng = random.Random(31)
    folder = os.path.join(tmp, "mut")
    os.mkdir(folder)
    script = []
    for k in range(n):
        raw = bytearray(open(paths[k % len(paths)], "rb").read())
        heads = [o for o in range(0, len(raw) - 511, 512) if raw[o + 257:o + 262] == b"ustar"] or [0]
        o = rng.choice(heads)
        for _ in range(rng.randint(1, 4)):
            i = rng.choice([rng.randrange(512), 124 + rng.randrange(12), 156, 482, 504, 512 + rng.randrange(512)])
            if o + i < len(raw):
                raw[o + i] = rng.choice([0, 0x20, 0x30, 0x37, 0x80, 0xff, ord("\n"), rng.randrange(256)])
        path = os.path.join(folder, "mut-%d.tar" % k)
        open(path, "wb").write(raw)
        script.append("SELECT count(*), sum(size), max(data_offset) FROM tar_members('%s');" % path)
    try:
        p = run(shell_args(), input="\n".join(script).encode(), timeout=300)
    except subprocess.TimeoutExpired:
        return ok(False, "%d archives with changed header bytes: walked without a hang" % n, "timed out after 300 s")
    err = p.stderr.decode("utf-8", "replace")
    lines = [x for x in err.splitlines() if x.strip()]
    unnamed = [x for x in lines if not re.search(r"/mut-\d+\.tar: ", x)]
    rows = len(p.stdout.decode().splitlines())
    return ok(p.returncode >= 0 and "Sanitizer" not in err and "runtime error:" not in err and not unnamed and
              rows + len(lines) == n,
              "%d archives with changed header bytes: %d walked, %d refused naming the file; no crash, hang or "
              "sanitizer report" % (n, rows, len(lines)), "exit %d\n%s" % (p.returncode, "\n".join(unnamed[:10] or lines[-5:])))


def uudecode(src, dst):
    data = bytearray()
    with open(src, "rb") as f:
        on = False
        for line in f:
            line = line.rstrip(b"\r\n")
            if line.startswith(b"begin "):
                on = True
            elif line == b"end":
                break
            elif on and line:
                n = (line[0] - 32) & 63
                data += binascii.a2b_uu(line[:1 + (n + 2) // 3 * 4])
    open(dst, "wb").write(data)


def main():
    for tool, pkg in (("bsdtar", "libarchive-tools"), ("tar", "tar")):
        if not shutil.which(tool):
            ok(False, "%s is installed" % tool, "install Debian's %s (scripts/install-deps test)" % pkg)
            return plan()
    tmp = tempfile.mkdtemp(prefix="vdsql-oracles.")
    try:
        gnu_archives_made = gnu_archives(tmp) + tarfile_archives(tmp)
        for label, path in gnu_archives_made + handmade(tmp):
            check_archive(label, path)
        check_archive("a 9 GiB member as tarfile writes it (pax size, ustar size 0)", big_member(tmp), big=True)
        if os.path.exists(TESTTAR):
            check_archive("CPython's testtar.tar", TESTTAR)
        else:
            ok(False, "CPython's testtar.tar is at %s" % TESTTAR,
               "install Debian's libpython3.11-testsuite (scripts/install-deps test)")

        # size fields after leading NULs, as GNU tar reads them: one NUL skipped (then the
        # digits), a second one ends the field (0: the next header follows at once)
        for nuls, label in ((1, "one leading NUL"), (2, "two leading NULs")):
            ti = tarfile.TarInfo("nul-size")
            ti.size = 100
            h = bytearray(ti.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict"))
            h[124:136] = b"\0" * nuls + b"%0*o" % (11 - nuls, 100) + b"\0"
            after = tarfile.TarInfo("after")
            after.size = 3
            tail = after.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict") + b"abc" + b"\0" * 509 + b"\0" * 1024
            path = os.path.join(tmp, "nul%d.tar" % nuls)
            open(path, "wb").write(reseal(h) + (b"x" * 100 + b"\0" * 412 if nuls == 1 else b"") + tail)
            g = [(x.split()[-1], int(x.split()[2])) for x in run(["tar", "-tvf", path]).stdout.decode().splitlines()]
            rows = vd_rows(path)
            got = [(r["name"].decode(), r["size"]) for r in rows] if not isinstance(rows, str) else rows
            ok(got == g and len(g) == 2, "a size field after %s read as GNU tar reads it: %s" % (label, g), got)

        # a GNU volume label: listed (as tarfile and GNU tar list it), the member after it too
        path = os.path.join(tmp, "label.tar")
        run(["tar", "-V", "my label", "-cf", path, "-C", os.path.join(tmp, "src"), "small"], check=True)
        counts["archives"] -= 0
        check_archive("GNU tar -V (a volume label)", path)

        # a GNU long name of 2 MiB: past libarchive's limit for a name, refused as bsdtar refuses it
        ti = tarfile.TarInfo("n" * (2 << 20))
        ti.size = 1
        path = os.path.join(tmp, "longname-2mib.tar")
        open(path, "wb").write(ti.tobuf(tarfile.GNU_FORMAT, "utf-8", "strict") + b"z" + b"\0" * 511 + b"\0" * 1024)
        check_archive("a GNU long name of 2 MiB", path, expect_error="an extended header of 2097153 bytes (at most 1048576)")

        # cpio (newc) input: one error naming the file, no row
        path = os.path.join(tmp, "in.cpio")
        ent = b"070701" + b"%08X" % 1 + b"%08X" % 0o100644 + b"0" * 8 * 4 + b"%08X" % 3 + b"0" * 8 * 4 + \
            b"%08X" % 2 + b"0" * 8 + b"a\0" + b"\0\0" + b"abc\0"
        open(path, "wb").write(ent + b"\0" * (1024 - len(ent)))
        check_archive("cpio input", path, expect_error="not a tar archive")

        mutated(tmp, [p for _, p in gnu_archives_made] + [TESTTAR], int(os.environ.get("TAR_MUTATIONS", "400")))

        if LATESTS:
            names = sorted(x for x in os.listdir(LATESTS) if x.endswith(".tar.uu"))
            ok(names, "LIBARCHIVE_TESTS (%s) holds libarchive's *.tar.uu" % LATESTS)
            for name in names:
                dst = os.path.join(tmp, name[:-3])
                uudecode(os.path.join(LATESTS, name), dst)
                check_libarchive(name[:-3], dst)
        else:
            skip("libarchive's test archives: LIBARCHIVE_TESTS is not set (git archive libarchive's "
                 "libarchive/test/*.tar.uu from github.com/libarchive/libarchive into a folder and point it there)")
        print("# archives %d, members %d, exact matches %d" % (counts["archives"], counts["members"], counts["exact"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


# libarchive's archives that an oracle refuses (tar_members refuses them with these words),
# and where every oracle reads what tar_members refuses
LA_REFUSED = {
    "test_read_format_tar_V_negative_size.tar": "the size field is no octal",
    "test_read_format_tar_acl_oob_read.tar": "bad pax record",
    "test_read_format_tar_invalid_pax_size.tar": "bad pax record",
    "test_read_format_tar_pax_g_large.tar": "an extended header of",
    "test_read_pax_empty_val_no_nl.tar": "bad pax record",
    "test_read_format_gtar_sparse_1_17_posix10_modified.tar": "sparse 1.0 map is malformed",
}
LA_KNOWN = {"test_compat_tar_hardlink_1.tar": "without end-of-archive blocks"}


def check_libarchive(name, path):
    check_archive("libarchive " + name, path, expect_error=LA_REFUSED.get(name), known=LA_KNOWN.get(name))


if __name__ == "__main__":
    sys.exit(main())
