"""Mutants of VTKHDF files for the HDF5 helper's fuzz checks (tests/vtkhdf/helper.t in
sqlite3, tests/pg/hostile_vtkhdf.t in a backend): bit flips, runs of one byte,
truncations and splices of two files, each written next to symbolic links to the
sub-files its seed's links and virtual datasets name, so that they still resolve."""
import os


def seeds_in(folder, limit=2 << 20):
    """the VTKHDF files of folder under limit bytes, sorted (the rng picks among them)"""
    return sorted(os.path.join(folder, f) for f in os.listdir(folder)
                  if f.endswith(".vtkhdf") and os.path.getsize(os.path.join(folder, f)) < limit)


def mutant(rng, seeds, out, i):
    """writes mutant i into folder out and returns its path"""
    src = rng.choice(seeds)
    b = bytearray(open(src, "rb").read())
    how = rng.choice(["flips", "run", "truncate", "splice"])
    if how == "flips":
        for _ in range(rng.randint(1, 16)):
            k = rng.randrange(len(b))
            b[k] ^= 1 << rng.randrange(8)
    elif how == "run":
        k = rng.randrange(len(b))
        b[k:k + rng.randint(1, 64)] = bytes([rng.choice([0, 0xff, rng.randrange(256)])]) * rng.randint(1, 64)
    elif how == "truncate":
        b = b[:rng.randrange(1, len(b))]
    else:
        other = open(rng.choice(seeds), "rb").read()
        k, j = rng.randrange(len(b)), rng.randrange(len(other))
        b[k:k + rng.randint(1, 4096)] = other[j:j + rng.randint(1, 4096)]
    dst = os.path.join(out, "m%03d_%s" % (i, os.path.basename(src)))
    with open(dst, "wb") as f:
        f.write(b)
    os.chmod(dst, 0o644)
    folder, stem = os.path.dirname(src), os.path.basename(src)[:-len(".vtkhdf")]
    for f in os.listdir(folder):
        if f.startswith(stem + "_") and not os.path.exists(os.path.join(out, f)):
            os.symlink(os.path.join(folder, f), os.path.join(out, f))
    return dst
