#!/usr/bin/env python3
"""Side-by-side timing of `coffer encrypt` / `coffer decrypt` against `age` (and `openssl enc`).

Makes a random file (1 GiB by default), an age X25519 identity, a Coffer X25519 identity and a 256-bit
key, then times in alternating rounds: Coffer key mode and recipient mode against age with an X25519
recipient, encrypting and decrypting, with peak memory. Like for like, Coffer's encryptions run with
--no-sync (age leaves the flush to the system too); one more row, "durable", is Coffer's default, which
returns only once the output and its folder are on disk (docs/PERFORMANCE.md). Then PBKDF2-HMAC-SHA256 at 600,000 iterations
against `openssl kdf`, and scrypt against Python's hashlib.scrypt (OpenSSL).

    python3 bench/compare-encrypt.py
    python3 bench/compare-encrypt.py --size-mib 256 --rounds 5
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import tempfile
import time

from benchlib import build_coffer, compare, make_file


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--coffer", help="a coffer binary to use instead of building one")
    parser.add_argument("--dir", default=None,
                        help="where inputs and outputs live (default: the system's temporary folder, a disk file system "
                             "here, where users' files are; /dev/shm measures a memory-backed one)")
    args = parser.parse_args()
    if not shutil.which("age"):
        raise SystemExit("age is not installed (apt-get install age)")

    coffer = args.coffer or build_coffer()
    folder = tempfile.mkdtemp(prefix="coffer-bench-", dir=args.dir)
    fs = subprocess.run(["stat", "-f", "-c", "%T", folder], capture_output=True, text=True).stdout.strip()
    print(f"files in {os.path.dirname(folder)} ({fs or 'unknown file system'})")
    path = lambda name: os.path.join(folder, name)
    try:
        make_file(path("input.bin"), args.size_mib << 20)
        subprocess.run(["age-keygen", "-o", path("age.key")], check=True, capture_output=True)
        age_recipient = subprocess.run(["age-keygen", "-y", path("age.key")], check=True, capture_output=True, text=True).stdout.strip()
        subprocess.run([coffer, "key", "generate", "-t", "x25519", "-o", path("id.key"), "--public", path("id.pub")], check=True, capture_output=True)
        subprocess.run([coffer, "random", "--raw", "--output", path("k.key")], check=True)
        # Ciphertexts for the decryption rounds.
        subprocess.run(["age", "-r", age_recipient, "-o", path("in.age"), path("input.bin")], check=True)
        subprocess.run([coffer, "encrypt", "-r", path("id.pub"), path("input.bin"), "-o", path("in.r.coffer")], check=True, capture_output=True)
        subprocess.run([coffer, "encrypt", "-k", path("k.key"), path("input.bin"), "-o", path("in.k.coffer")], check=True, capture_output=True)

        encrypt = compare(f"encrypt {args.size_mib} MiB", [
            ("coffer -k", [coffer, "encrypt", "--no-sync", "-k", path("k.key"), path("input.bin"), "-o", path("o1"), "--force"]),
            ("coffer -r x25519", [coffer, "encrypt", "--no-sync", "-r", path("id.pub"), path("input.bin"), "-o", path("o2"), "--force"]),
            ("coffer -r --cipher chacha", [coffer, "encrypt", "--no-sync", "-r", path("id.pub"), "--cipher", "chacha", path("input.bin"), "-o", path("o3"), "--force"]),
            ("coffer -k, durable", [coffer, "encrypt", "-k", path("k.key"), path("input.bin"), "-o", path("o5"), "--force"]),
            ("age -r x25519", ["age", "-r", age_recipient, "-o", path("o4"), path("input.bin")]),
        ], args.rounds, anchor="age -r x25519", cleanup=[path(n) for n in ["o1", "o2", "o3", "o4", "o5"]])
        decrypt = compare(f"decrypt {args.size_mib} MiB", [
            ("coffer -k", [coffer, "decrypt", "-k", path("k.key"), path("in.k.coffer"), "-o", path("d1"), "--force"]),
            ("coffer -i x25519", [coffer, "decrypt", "-i", path("id.key"), path("in.r.coffer"), "-o", path("d2"), "--force"]),
            ("age -d -i x25519", ["age", "-d", "-i", path("age.key"), "-o", path("d3"), path("in.age")]),
        ], args.rounds, anchor="age -d -i x25519", cleanup=[path(n) for n in ["d1", "d2", "d3"]])
        pipeline = compare(f"encrypt {args.size_mib} MiB to /dev/null (the pipeline without output pages)", [
            ("coffer -k", ["sh", "-c", f"{coffer} encrypt -k {path('k.key')} < {path('input.bin')} > /dev/null"]),
            ("age -r x25519", ["sh", "-c", f"age -r {age_recipient} < {path('input.bin')} > /dev/null"]),
        ], args.rounds, anchor="age -r x25519")

        print("\npassword key derivation (medians of 5)")
        def timed(argv):
            samples = []
            for _ in range(5):
                start = time.perf_counter()
                subprocess.run(argv, check=True, capture_output=True)
                samples.append(time.perf_counter() - start)
            return sorted(samples)[2]
        rate = float(subprocess.run([coffer, "speed", "pbkdf2", "--seconds", "2", "--json"], check=True, capture_output=True, text=True)
                     .stdout.split('"rate":')[1].split(",")[0].split("}")[0])
        theirs = timed(["openssl", "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256", "-kdfopt", "pass:password",
                        "-kdfopt", "salt:0123456789abcdef", "-kdfopt", "iter:600000", "PBKDF2"])
        openssl_rate = 600_000 / theirs
        print(f"  PBKDF2-HMAC-SHA256: coffer {rate / 1e6:.2f} M iterations/s, openssl kdf {openssl_rate / 1e6:.2f} M/s (600,000 in {theirs * 1000:.0f} ms incl. start-up): {rate / openssl_rate:.2f}x")
        srate = float(subprocess.run([coffer, "speed", "scrypt", "--seconds", "2", "--json"], check=True, capture_output=True, text=True)
                      .stdout.split('"rate":')[1].split(",")[0].split("}")[0])
        start, count = time.perf_counter(), 0
        while time.perf_counter() - start < 2:
            hashlib.scrypt(b"password", salt=b"x" * 16, n=2 ** 14, r=8, p=1, dklen=32)
            count += 1
        python_rate = count / (time.perf_counter() - start)
        print(f"  scrypt N=2^14 r=8 p=1: coffer {srate:.1f}/s, hashlib.scrypt {python_rate:.1f}/s: {srate / python_rate:.2f}x")

        print("\ntargets (issue 4):")
        for name in ["coffer --key-file", "coffer -r x25519"]:
            print(f"  encrypt {name}: {encrypt['age -r x25519'][0] / encrypt[name][0]:.2f}x faster than age (target >= 2x)")
        for name in ["coffer --key-file", "coffer -i x25519"]:
            print(f"  decrypt {name}: {decrypt['age -d -i x25519'][0] / decrypt[name][0]:.2f}x faster than age (target >= 2x)")
        print(f"  encrypt to /dev/null: {pipeline['age -r x25519'][0] / pipeline['coffer -k'][0]:.2f}x faster than age")
        peak = max(v[1] for v in list(encrypt.values()) + list(decrypt.values()) if v is not None) / 1024
        coffer_peak = max([encrypt[n][1] for n in encrypt if n.startswith("coffer")] + [decrypt[n][1] for n in decrypt if n.startswith("coffer")]) / 1024
        print(f"  coffer peak memory < 64 MiB: {coffer_peak:.1f} MiB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
