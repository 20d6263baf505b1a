#!/usr/bin/env python3
"""Side-by-side timing of `coffer hash` against `openssl dgst` and coreutils on one file.

Builds coffer in release mode (unless --coffer names a binary), makes a random file (1 GiB by
default) once, warms the page cache, then runs every tool on it in alternating order, round after
round, so that drift in machine load hits all tools alike. Prints median wall time, median peak
memory (max RSS) and each tool's ratio to `openssl dgst`, plus small-file latency and
`coffer speed` next to `openssl speed`.

    python3 bench/compare-hash.py                 # 1 GiB, 7 rounds
    python3 bench/compare-hash.py --size-mib 256 --rounds 5
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from benchlib import build_coffer, compare, make_file


def speed(coffer, algorithm, seconds):
    ours = subprocess.run([coffer, "speed", "--seconds", str(seconds), "--json", algorithm],
                          check=True, capture_output=True, text=True).stdout
    ours_rate = float(re.search(r'"bytesPerSecond":([0-9.e+]+)', ours).group(1))
    theirs = subprocess.run(["openssl", "speed", "-seconds", str(seconds), "-bytes", "16384", algorithm],
                            check=True, capture_output=True, text=True).stdout
    match = re.search(rf"^{algorithm}\s+([0-9.]+)k", theirs, re.MULTILINE)
    theirs_rate = float(match.group(1)) * 1000
    return ours_rate, theirs_rate


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--coffer", help="a coffer binary to use instead of building one")
    parser.add_argument("--speed-seconds", type=int, default=3)
    args = parser.parse_args()

    coffer = args.coffer or build_coffer()
    folder = tempfile.mkdtemp(prefix="coffer-bench-")
    try:
        big = os.path.join(folder, "input.bin")
        print(f"writing a {args.size_mib} MiB random file...", file=sys.stderr)
        make_file(big, args.size_mib << 20)
        small = os.path.join(folder, "small.txt")
        with open(small, "w") as out:
            out.write("hello\n")

        print(f"machine: {os.cpu_count()} cores; openssl: "
              + subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip())
        sha256 = compare(f"SHA-256 of {args.size_mib} MiB", [
            ("coffer hash", [coffer, "hash", "-a", "sha256", big]),
            ("openssl dgst", ["openssl", "dgst", "-sha256", big]),
            ("sha256sum", ["sha256sum", big]),
        ], args.rounds)
        sha512 = compare(f"SHA-512 of {args.size_mib} MiB", [
            ("coffer hash", [coffer, "hash", "-a", "sha512", big]),
            ("openssl dgst", ["openssl", "dgst", "-sha512", big]),
            ("sha512sum", ["sha512sum", big]),
        ], args.rounds)
        tiny = compare("SHA-256 of a 6-byte file (start-up cost)", [
            ("coffer hash", [coffer, "hash", small]),
            ("openssl dgst", ["openssl", "dgst", "-sha256", small]),
            ("sha256sum", ["sha256sum", small]),
        ], max(args.rounds, 21))

        print(f"\nthroughput at 16 KiB blocks, {args.speed_seconds} s each (coffer speed vs openssl speed)")
        for algorithm in ["sha256", "sha512"]:
            ours, theirs = speed(coffer, algorithm, args.speed_seconds)
            print(f"  {algorithm:<8}{ours / 1e6:>10.1f} MB/s{theirs / 1e6:>10.1f} MB/s{ours / theirs:>8.2f}x")

        print("\ntargets (issue 2):")
        print(f"  sha256 1 GiB wall <= 1.05x openssl: {sha256['coffer hash'][0] / sha256['openssl dgst'][0]:.2f}x")
        print(f"  sha512 1 GiB wall <= 1.25x openssl: {sha512['coffer hash'][0] / sha512['openssl dgst'][0]:.2f}x")
        peak = max(sha256['coffer hash'][1], sha512['coffer hash'][1]) / 1024
        print(f"  peak memory < 32 MiB: {peak:.1f} MiB")
        print(f"  small file < 30 ms: {tiny['coffer hash'][0] * 1000:.1f} ms")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
