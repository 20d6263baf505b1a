#!/usr/bin/env python3
"""How long a revoked key keeps working on another instance (issue 22: under one second).

Starts two `coffer serve` instances on one database (PostgreSQL from --database, or a shared SQLite
file), registers an app key through the first, has an admin revoke it through the first, and sends
signed requests to the second as fast as `coffer request` allows until one is refused with
key-revoked. Prints, per round, the time from the revocation's answer to the first refusal, then the
median and the largest. The bound is the key-record cache (`--key-cache-ms`, 500 by default) plus one
request.

    bench/revocation.py [--coffer PATH] [--database URL] [--rounds N] [--key-cache-ms MS]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def start(coffer, database, admin_pub, cache_ms, folder):
    process = subprocess.Popen(
        [coffer, "serve", "--port", "0", "--database", database, "--admin-key", admin_pub, "--registration", "open",
         "--key-cache-ms", str(cache_ms), "--register-limit", "0", "--failure-limit", "0", "--sign-up-limit", "0", "--log-level", "error"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=folder, text=True)
    line = process.stdout.readline()
    match = re.search(r":(\d+)\s*$", line)
    if not match:
        sys.exit(f"coffer serve did not start: {line!r}")
    return process, f"http://127.0.0.1:{match.group(1)}"


def coffer_run(coffer, args, folder):
    return subprocess.run([coffer] + args, cwd=folder, capture_output=True, text=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--coffer", help="the coffer binary (default: build the release one)")
    parser.add_argument("--database", help="postgres://… shared by both instances (default: one SQLite file)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--key-cache-ms", type=int, default=500)
    options = parser.parse_args()
    coffer = options.coffer or benchlib.build_product("coffer")
    with tempfile.TemporaryDirectory() as folder:
        database = options.database or "sqlite:" + os.path.join(folder, "server.sqlite")
        coffer_run(coffer, ["key", "generate", "-t", "ed25519", "-o", "admin.key", "--public", "admin.pub"], folder)
        first, one = start(coffer, database, "admin.pub", options.key_cache_ms, folder)
        second, two = start(coffer, database, "admin.pub", options.key_cache_ms, folder)
        delays = []
        try:
            for round_number in range(options.rounds):
                coffer_run(coffer, ["key", "generate", "-t", "ed25519", "-o", "app.key", "--public", "app.pub", "--force"], folder)
                registered = coffer_run(coffer, ["server", "register", "--server", one, "-k", "app.key", "--json"], folder)
                key_id = json.loads(registered.stdout)["keyId"]
                user = ["request", "-k", "app.key", "--keyid", key_id, "-X", "POST", two + "/register_user"]
                body = lambda: json.dumps({"email": f"u{time.time_ns()}@example.com", "name": "Bench"})
                if coffer_run(coffer, user + ["-d", body()], folder).returncode != 0:
                    sys.exit("the second instance refused the key before its revocation")
                revoked = coffer_run(coffer, ["server", "keys", "revoke", key_id, "--server", one, "-k", "admin.key"], folder)
                if revoked.returncode != 0:
                    sys.exit(f"revocation failed: {revoked.stderr}")
                at = time.perf_counter()
                while True:
                    answer = coffer_run(coffer, user + ["-d", body()], folder)
                    if "key-revoked" in answer.stdout:
                        delays.append(time.perf_counter() - at)
                        break
                    if time.perf_counter() - at > 10:
                        sys.exit("still accepted 10 s after the revocation")
                print(f"round {round_number + 1}: refused by the other instance {delays[-1] * 1000:.0f} ms after the revocation")
        finally:
            for process in (first, second):
                process.terminate()
                process.wait()
    print(f"median {statistics.median(delays) * 1000:.0f} ms, largest {max(delays) * 1000:.0f} ms "
          f"(--key-cache-ms {options.key_cache_ms}; each probe is one `coffer request` process)")


if __name__ == "__main__":
    main()
