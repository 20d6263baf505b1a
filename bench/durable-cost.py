#!/usr/bin/env python3
"""What durability costs: `coffer encrypt` (which returns only once the output and its folder are on disk)
against `coffer encrypt --no-sync`, against the same with the whole flush left to the end (`--no-sync`
then `sync FILE`, i.e. without the writeback Coffer starts while writing), and against age (which does
not flush). Then `coffer decrypt` against `decrypt --sync`. Same input, alternating rounds, `sync`
(untimed) before every run so that no run pays for the previous one's writeback.

    python3 bench/durable-cost.py
    python3 bench/durable-cost.py --size-mib 256 --rounds 8
"""
import argparse
import os
import shutil
import subprocess
import tempfile

from benchlib import build_coffer, compare, make_file


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--coffer", help="a coffer binary to use instead of building one")
    parser.add_argument("--dir", default=None, help="where inputs and outputs live (default: the system's temporary folder)")
    args = parser.parse_args()
    if not shutil.which("age"):
        raise SystemExit("age is not installed (apt-get install age)")
    coffer = args.coffer or build_coffer()
    folder = tempfile.mkdtemp(prefix="coffer-durable-", dir=args.dir)
    path = lambda name: os.path.join(folder, name)
    try:
        make_file(path("input.bin"), args.size_mib << 20)
        subprocess.run(["age-keygen", "-o", path("age.key")], check=True, capture_output=True)
        recipient = subprocess.run(["age-keygen", "-y", path("age.key")], check=True, capture_output=True, text=True).stdout.strip()
        subprocess.run([coffer, "random", "--raw", "--output", path("k.key")], check=True)
        subprocess.run([coffer, "encrypt", "-k", path("k.key"), path("input.bin"), "-o", path("in.coffer")], check=True, capture_output=True)
        subprocess.run(["age", "-r", recipient, "-o", path("in.age"), path("input.bin")], check=True)
        encrypt = [coffer, "encrypt", "-k", path("k.key"), path("input.bin"), "--force"]
        compare(f"encrypt {args.size_mib} MiB", [
            ("coffer --no-sync", encrypt + ["--no-sync", "-o", path("o1")]),
            ("coffer (durable)", encrypt + ["-o", path("o2")]),
            ("coffer --no-sync; sync FILE", ["sh", "-c", f"{' '.join(encrypt)} --no-sync -o {path('o3')} && sync {path('o3')}"]),
            ("age -r x25519", ["age", "-r", recipient, "-o", path("o4"), path("input.bin")]),
        ], args.rounds, anchor="coffer --no-sync", cleanup=[path(n) for n in ["o1", "o2", "o3", "o4"]])
        decrypt = [coffer, "decrypt", "-k", path("k.key"), path("in.coffer"), "--force"]
        compare(f"decrypt {args.size_mib} MiB", [
            ("coffer", decrypt + ["-o", path("d1")]),
            ("coffer --sync", decrypt + ["--sync", "-o", path("d2")]),
            ("age -d", ["age", "-d", "-i", path("age.key"), "-o", path("d3"), path("in.age")]),
        ], args.rounds, anchor="coffer", cleanup=[path(n) for n in ["d1", "d2", "d3"]])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
