#!/usr/bin/env python3
"""Side-by-side timing of `coffer sign` / `coffer verify` against `openssl dgst` and `minisign`.

Makes a random file (1 GiB by default) and an RSA-4096 key with OpenSSL, then times, in alternating
rounds: raw RSA-4096 signing and verifying (`coffer sign --raw` against `openssl dgst -sha512 -sign`,
which write identical bytes), and Coffer signature files with Ed25519 against minisign (when installed).
Then compares `coffer speed` with `openssl speed` for RSA-4096, P-256 and Ed25519 sign/verify.

    python3 bench/compare-sign.py
    python3 bench/compare-sign.py --size-mib 256 --rounds 5
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile

from benchlib import build_coffer, compare, make_file


def openssl_speed(algorithms, seconds):
    text = subprocess.run(["openssl", "speed", "-seconds", str(seconds)] + algorithms,
                          check=True, capture_output=True, text=True).stdout
    rates = {}
    for line in text.splitlines():
        rsa = re.match(r"rsa (\d+) bits .* ([0-9.]+)\s+([0-9.]+)$", line.strip())
        if rsa:
            rates[f"rsa{rsa.group(1)}"] = (float(rsa.group(2)), float(rsa.group(3)))
        ec = re.match(r"\d+ bits ecdsa \(nistp(\d+)\).* ([0-9.]+)\s+([0-9.]+)$", line.strip())
        if ec:
            rates[f"p{ec.group(1)}"] = (float(ec.group(2)), float(ec.group(3)))
        ed = re.match(r"\d+ bits EdDSA \(Ed25519\).* ([0-9.]+)\s+([0-9.]+)$", line.strip())
        if ed:
            rates["ed25519"] = (float(ed.group(1)), float(ed.group(2)))
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--coffer", help="a coffer binary to use instead of building one")
    parser.add_argument("--speed-seconds", type=int, default=3)
    args = parser.parse_args()

    coffer = args.coffer or build_coffer()
    folder = tempfile.mkdtemp(prefix="coffer-bench-")
    path = lambda name: os.path.join(folder, name)
    try:
        make_file(path("input.bin"), args.size_mib << 20)
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:4096",
                        "-out", path("rsa.pem")], check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", path("rsa.pem"), "-pubout", "-out", path("rsa.pub")], check=True)
        subprocess.run(["openssl", "dgst", "-sha512", "-sign", path("rsa.pem"), "-out", path("openssl.sig"),
                        path("input.bin")], check=True)

        sign = compare(f"RSA-4096 raw signature of {args.size_mib} MiB (SHA-512)", [
            ("coffer sign --raw", [coffer, "sign", "-k", path("rsa.pem"), "--raw", path("input.bin"),
                                   "-o", path("coffer.sig"), "--force"]),
            ("openssl dgst", ["openssl", "dgst", "-sha512", "-sign", path("rsa.pem"), "-out", path("openssl.sig"),
                              path("input.bin")]),
        ], args.rounds)
        same = open(path("coffer.sig"), "rb").read() == open(path("openssl.sig"), "rb").read()
        print(f"  signatures byte-identical: {same}")
        verify = compare(f"RSA-4096 raw verification of {args.size_mib} MiB", [
            ("coffer verify --raw", [coffer, "verify", "-q", "-p", path("rsa.pub"), "--raw", path("openssl.sig"),
                                     path("input.bin")]),
            ("openssl dgst", ["openssl", "dgst", "-sha512", "-verify", path("rsa.pub"), "-signature",
                              path("openssl.sig"), path("input.bin")]),
        ], args.rounds)

        if shutil.which("minisign"):
            subprocess.run([coffer, "key", "generate", "-t", "ed25519", "-o", path("ed.key"), "--public", path("ed.pub")],
                           check=True, capture_output=True)
            subprocess.run(["minisign", "-G", "-W", "-p", path("mini.pub"), "-s", path("mini.key")],
                           check=True, capture_output=True)
            subprocess.run([coffer, "sign", "-k", path("ed.key"), path("input.bin"), "-o", path("input.csig")],
                           check=True, capture_output=True)
            subprocess.run(["minisign", "-S", "-s", path("mini.key"), "-m", path("input.bin"), "-x", path("input.minisig")],
                           check=True, capture_output=True)
            compare(f"Ed25519 signature file of {args.size_mib} MiB (Coffer format vs minisign)", [
                ("coffer sign", [coffer, "sign", "-k", path("ed.key"), path("input.bin"), "-o", path("input.csig"), "--force"]),
                ("minisign -S", ["minisign", "-S", "-s", path("mini.key"), "-m", path("input.bin"), "-x", path("input.minisig")]),
            ], args.rounds, anchor="minisign -S")
            compare(f"Ed25519 verification of {args.size_mib} MiB", [
                ("coffer verify", [coffer, "verify", "-q", "-p", path("ed.pub"), path("input.csig"), path("input.bin")]),
                ("minisign -V", ["minisign", "-V", "-q", "-p", path("mini.pub"), "-m", path("input.bin"), "-x", path("input.minisig")]),
            ], args.rounds, anchor="minisign -V")

        print(f"\nsign/verify operations per second, {args.speed_seconds} s each (coffer speed vs openssl speed)")
        ours_text = subprocess.run([coffer, "speed", "--json", "--seconds", str(args.speed_seconds),
                                    "rsa2048", "rsa4096", "p256", "p384", "ed25519"], check=True, capture_output=True, text=True).stdout
        ours = {r["algorithm"]: (r["signsPerSecond"], r["verifiesPerSecond"]) for r in map(json.loads, ours_text.splitlines())}
        theirs = openssl_speed(["rsa2048", "rsa4096", "ecdsap256", "ecdsap384", "ed25519"], args.speed_seconds)
        print(f"  {'algorithm':<10}{'coffer sign/s':>15}{'openssl':>12}{'ratio':>8}{'coffer verify/s':>18}{'openssl':>12}{'ratio':>8}")
        for name in ["rsa2048", "rsa4096", "p256", "p384", "ed25519"]:
            (os_, ov), (ts, tv) = ours[name], theirs[name]
            print(f"  {name:<10}{os_:>15.1f}{ts:>12.1f}{os_ / ts:>7.2f}x{ov:>18.1f}{tv:>12.1f}{ov / tv:>7.2f}x")

        print("\ntargets (issue 3):")
        print(f"  RSA-4096 raw sign of the file <= 1.25x openssl: {sign['coffer sign --raw'][0] / sign['openssl dgst'][0]:.2f}x")
        print(f"  RSA-4096 raw verify of the file <= 1.25x openssl: {verify['coffer verify --raw'][0] / verify['openssl dgst'][0]:.2f}x")
        peak = max(sign['coffer sign --raw'][1], verify['coffer verify --raw'][1]) / 1024
        print(f"  peak memory < 32 MiB: {peak:.1f} MiB")
        for name in ["rsa4096", "p256", "ed25519"]:
            print(f"  {name} sign/verify >= 0.9x openssl speed: {ours[name][0] / theirs[name][0]:.2f}x / {ours[name][1] / theirs[name][1]:.2f}x")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
