"""Seed corpora for the fuzz targets from tests/make_vectors.py's output.

usage: seeds.py VECTORS_DIR LOAD_CORPUS_DIR PROGRAM_CORPUS_DIR

load corpus: the valid bundles (lowered parity models) and the malformed ones;
program corpus: every demo Program ("LXDP") found inside the valid bundles, cut out of its
storage vector (a flatbuffers vector: u32 length, then the bytes).
"""
import hashlib
import struct
import sys
from pathlib import Path


def main() -> None:
    vectors, load_dir, program_dir = (Path(a) for a in sys.argv[1:4])
    load_dir.mkdir(parents=True, exist_ok=True)
    program_dir.mkdir(parents=True, exist_ok=True)
    n_load = n_prog = 0
    for path in sorted(vectors.glob("*.ptl")):
        data = path.read_bytes()
        (load_dir / path.name).write_bytes(data)
        n_load += 1
        at = data.find(b"LXDP")
        while at >= 8:
            start = at - 4
            (length,) = struct.unpack_from("<I", data, start - 4)
            if 8 <= length <= len(data) - start:
                blob = data[start:start + length]
                name = hashlib.sha1(blob).hexdigest()[:16]
                (program_dir / f"{path.stem}.{name}.lxdp").write_bytes(blob)
                n_prog += 1
            at = data.find(b"LXDP", at + 4)
    print(f"seeds: {n_load} bundles, {n_prog} programs")


if __name__ == "__main__":
    main()
