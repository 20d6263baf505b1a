#!/usr/bin/env python3
"""Signing through a PKCS #11 token (SoftHSM2), side by side, in one run (issue 24's target):

  bare C     C_SignInit + C_Sign in a loop (bench/pkcs11/bare-sign.c): the floor for the token
  coffer     `coffer speed -k pkcs11:…`: the same key through CofferPKCS11 (lock, attribute-free sign,
             DER re-encoding of ECDSA), i.e. what every signing command pays
  software   `coffer speed p256 rsa2048`: the same algorithms with a key in memory
  openssl    `openssl speed ecdsap256 rsa2048`: OpenSSL's own, PKCS #11-free

Prints medians of signatures per second over the rounds and the overhead of Coffer's layer over the
bare loop (target: under 10%), with CPU time per signature for the two token rows.

usage: bench/compare-pkcs11.py [--coffer PATH] [--seconds S] [--rounds N]
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

MODULES = ["/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so"]


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--coffer", help="a coffer binary (default: build release)")
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    module = next((m for m in MODULES if os.path.exists(m)), None)
    if not module:
        sys.exit("SoftHSM2 is not installed (apt install softhsm2)")
    coffer = options.coffer or benchlib.build_product("coffer")
    work = tempfile.mkdtemp(prefix="coffer-pkcs11-bench")
    os.makedirs(f"{work}/tokens")
    with open(f"{work}/softhsm2.conf", "w") as conf:
        conf.write(f"directories.tokendir = {work}/tokens\nobjectstore.backend = file\nlog.level = ERROR\n")
    env = dict(os.environ, SOFTHSM2_CONF=f"{work}/softhsm2.conf", COFFER_PKCS11_MODULE=module)
    subprocess.run(["softhsm2-util", "--init-token", "--free", "--label", "bench", "--so-pin", "87654321", "--pin", "123456"],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    with open(f"{work}/pin", "w") as pin:
        pin.write("123456\n")
    for kind, label in [("p256", "p256"), ("rsa2048", "rsa2048")]:
        subprocess.run([coffer, "key", "generate", "--token", "bench", "-t", kind, "--label", label, "--password-file", f"{work}/pin"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
    bare = f"{work}/bare-sign"
    subprocess.run(["cc", "-O2", "-o", bare, os.path.join(benchlib.ROOT, "bench/pkcs11/bare-sign.c"), "-ldl"], check=True)

    rates = {}
    cpu = {}

    def record(name, rate, cpu_per_op=None):
        rates.setdefault(name, []).append(rate)
        if cpu_per_op is not None:
            cpu.setdefault(name, []).append(cpu_per_op)

    for round_ in range(options.rounds):
        print(f"round {round_ + 1}/{options.rounds}", file=sys.stderr)
        for label in ["p256", "rsa2048"]:
            out = subprocess.run([bare, module, "bench", label, "123456", str(options.seconds)], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            record(f"bare C {label}", float(out[0]), float(out[1]))
            before = child_cpu()
            out = subprocess.run([coffer, "speed", "-k", f"pkcs11:token=bench;object={label}", "--password-file", f"{work}/pin",
                                  "--seconds", str(options.seconds), "--json"], env=env, check=True, capture_output=True, text=True).stdout
            record_ = json.loads(out.strip().splitlines()[-1])
            signs = record_["signsPerSecond"]
            # The process also verified for as long; CPU per signature counts the signing half of its CPU.
            used = child_cpu() - before
            record(f"coffer {label}", signs, used / 2 / (signs * options.seconds) * 1e6)
        out = subprocess.run([coffer, "speed", "p256", "rsa2048", "--seconds", str(options.seconds), "--json"], check=True,
                             capture_output=True, text=True).stdout
        for line in out.strip().splitlines():
            entry = json.loads(line)
            record(f"software {entry['algorithm']}", entry["signsPerSecond"])
        out = subprocess.run(["openssl", "speed", "-seconds", str(int(max(1, options.seconds))), "ecdsap256", "rsa2048"],
                             check=True, capture_output=True, text=True).stdout
        ec = re.search(r"256 bits ecdsa \(nistp256\)\s+\S+s\s+\S+s\s+([\d.]+)", out)
        rsa = re.search(r"rsa 2048 bits\s+\S+s\s+\S+s\s+([\d.]+)", out)
        if ec:
            record("openssl p256", float(ec.group(1)))
        if rsa:
            record("openssl rsa2048", float(rsa.group(1)))

    median = {name: statistics.median(values) for name, values in rates.items()}
    print(f"{'':22}{'signs/s':>12}{'CPU µs/sign':>14}")
    for name in sorted(median):
        cpu_text = f"{statistics.median(cpu[name]):.1f}" if name in cpu else ""
        print(f"{name:22}{median[name]:12.1f}{cpu_text:>14}")
    for label in ["p256", "rsa2048"]:
        overhead = median[f"bare C {label}"] / median[f"coffer {label}"] - 1
        print(f"{label}: Coffer's layer over bare C_Sign: {overhead * 100:+.1f}% time per signature (target < 10%); "
              f"token/software {median[f'coffer {label}'] / median[f'software {label}']:.2f}x", end="")
        if f"openssl {label}" in median:
            print(f"; software/openssl {median[f'software {label}'] / median[f'openssl {label}']:.2f}x")
        else:
            print()


if __name__ == "__main__":
    main()
