#!/usr/bin/env python3
"""Throughput and latency of `coffer serve` under load: signed POST /register_user against an unsigned
twin route (POST /unsigned/register_user: the same JSON parsing and
database insert, no signature check), measured with wrk on loopback.

Starts a release serve-load-server (Benchmarks/ServeLoad: `coffer serve`'s router from the library's
public API plus the unsigned twin, which is not in the product) on 127.0.0.1 with a fresh SQLite database, registers an Ed25519 public
key (made by `openssl genpkey`) and an HMAC secret, then runs wrk in rounds of unsigned, hmac-sha256
and ed25519, the order rotating from round to round (the tables grow). The signed requests are built
and signed by OpenSSL (bench/wrk/register_user.lua) before wrk starts its clock, each with its own
nonce and e-mail address, so the server does all of its real work: RFC 9421 verification,
Content-Digest, the replay cache and the insert. Prints requests per second, p50 and p99 latency,
each signed route's share of the unsigned throughput, and the server's CPU time per request (medians of
the rounds).

    python3 bench/serve-load.py
    python3 bench/serve-load.py --seconds 10 --rounds 5 --connections 32
    python3 bench/serve-load.py --data-keys --connections 32
    python3 bench/serve-load.py --data-keys --connections 32 --pace-ms 16   # ~2,000 req/s offered
    python3 bench/serve-load.py --primitive-twins   # also the twin with each primitive: Coffer's own cost

With --primitive-twins two more routes run: the twin with one HMAC check, and the twin with one Ed25519
check (a fixed signature over a base as long as the load generator's), their requests built and signed
exactly as the signed routes' (so wrk spends the same CPU). A signed route's CPU per request beyond its
primitive twin's is what Coffer's own signature handling costs, measured at the load the primitive
itself brings; the script prints it, the median of each round's difference.

With --data-keys the server has a master key, and a device (an Ed25519 signing key and an X25519
encryption key) also fetches its data key: Ed25519-signed POST /data-keys answered with the key sealed
by HPKE, beside the three /register_user routes.

Needs wrk (apt install wrk) and openssl.
"""
import argparse
import base64
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from benchlib import ROOT, build_product
from servebench import cpu_seconds, ed25519_key, latency_ms, post, register, start_listening, x25519_public_key

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "wrk", "register_user.lua")


def build_server():
    """The bench server: coffer serve's routes plus the unsigned twin, from Benchmarks/ServeLoad (the twin
    is not in the product)."""
    return build_product("serve-load-server", os.path.join(ROOT, "Benchmarks"))


def start_server(server, folder, master_key=None):
    extra = ["--master-key-file", master_key] if master_key else []
    return start_listening([server, "--host", "127.0.0.1", "--port", "0",
                            "--database", "sqlite:" + os.path.join(folder, "serve.sqlite")] + extra, "the bench server")


def run_wrk(url, mode, keyid, keyfile, count, run, args, server_pid, route="register_user"):
    argv = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.seconds}s", "--latency",
            "-s", SCRIPT, url, "--", mode, keyid, keyfile, str(count), run, route, str(args.pace_ms),
            "presign" if getattr(args, "presign", False) else "sign-as-sent"]
    before = cpu_seconds(server_pid)
    text = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    used = cpu_seconds(server_pid) - before
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    rate = float(re.search(r"Requests/sec:\s+([0-9.]+)", text).group(1))
    failures = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errors = re.search(r"Socket errors: (.*)", text)
    if failures or errors:
        sys.exit(f"wrk saw failed requests in the {mode} run (more requests than built? raise --per-second):\n{text}")
    return {"rate": rate, "p50": latency_ms(text, 50), "p99": latency_ms(text, 99),
            "cpu_us": used / max(requests, 1) * 1e6, "requests": requests}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10, help="length of each wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--per-second", type=int, default=40000,
                        help="requests built per second of run (an upper bound of the server's rate)")
    parser.add_argument("--server", help="a serve-load-server binary to use instead of building one")
    parser.add_argument("--pace-ms", type=int, default=0,
                        help="each connection waits this long before its next request: a load below saturation "
                             "(C connections offer at most C*1000/PACE req/s); 0 sends as fast as answers come")
    parser.add_argument("--presign", action="store_true",
                        help="sign every request before the run (one `created` second for the run), so that wrk only "
                             "sends while it is timed: the server's cost without the load generator's signing on the same cores")
    parser.add_argument("--data-keys", action="store_true", help="also measure a device fetching its data key (POST /data-keys)")
    parser.add_argument("--primitive-twins", action="store_true",
                        help="also run the twin with each signed route's primitive: requests signed as the signed route's "
                             "(the load generator's work the same), sent to the unsigned twin, which checks one fixed "
                             "signature of that kind; a signed route's CPU beyond its primitive twin's is Coffer's own, "
                             "measured at the load the primitive brings")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed (apt install wrk)")

    binary = args.server or build_server()
    folder = tempfile.mkdtemp(prefix="coffer-serve-load-")
    server = None
    try:
        public, seed_path = ed25519_key(folder, "ed")

        master_key = None
        if args.data_keys:
            master_key = os.path.join(folder, "master.key")
            with open(master_key, "wb") as out:
                out.write(os.urandom(32))
        server, url = start_server(binary, folder, master_key)
        ed = register(url, folder, "ed", public)
        hmac = post(url + "/register", {"algorithm": "hmac-sha256"})
        secret_path = os.path.join(folder, "hmac.secret")
        with open(secret_path, "wb") as out:
            out.write(base64.b64decode(hmac["secret"]))

        modes = [("unsigned", hmac["keyId"], "-"), ("hmac-sha256", hmac["keyId"], secret_path), ("ed25519", ed["keyId"], seed_path)]
        if args.primitive_twins:
            modes += [("twin-hmac-sha256", hmac["keyId"], secret_path), ("twin-ed25519", ed["keyId"], seed_path)]
        if args.data_keys:
            # A device: its own Ed25519 signing key and an X25519 encryption key, both made by OpenSSL.
            device_public, device_seed = ed25519_key(folder, "device")
            x25519_public = x25519_public_key(folder, "x25519")
            device = register(url, folder, "device", device_public, encryptionKey=x25519_public)
            modes.append(("data-keys", device["keyId"], device_seed))
        count = args.per_second * args.seconds // args.threads
        results = {mode: [] for mode, _, _ in modes}
        for round_number in range(1, args.rounds + 1):
            # The tables grow run after run: rotate the order so that no route always meets the largest.
            shift = (round_number - 1) % len(modes)
            for mode, keyid, keyfile in modes[shift:] + modes[:shift]:
                route = "data-keys" if mode == "data-keys" else "register_user"
                result = run_wrk(url, "ed25519" if mode == "data-keys" else mode, keyid, keyfile, count,
                                 f"r{round_number}{mode.replace('twin-', 't')[:3]}{os.getpid()}", args, server.pid, route)
                results[mode].append(result)
                print(f"round {round_number} {mode:12} {result['rate']:9.0f} req/s  p50 {result['p50']:.2f} ms"
                      f"  p99 {result['p99']:.2f} ms  server CPU {result['cpu_us']:.0f} µs/request", file=sys.stderr)

        baseline = statistics.median(r["rate"] for r in results["unsigned"])
        baseline_cpu = statistics.median(r["cpu_us"] for r in results["unsigned"])
        print(f"\ncoffer serve, POST /register_user (and /data-keys) on loopback: wrk -t{args.threads} -c{args.connections} "
              f"-d{args.seconds}s{f', each connection pacing {args.pace_ms} ms' if args.pace_ms else ''}, median of {args.rounds} rounds")
        print(f"{'route':28}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'of unsigned':>14}{'server µs/req':>15}{'CPU ratio':>11}")
        for mode, _, _ in modes:
            rate = statistics.median(r["rate"] for r in results[mode])
            p50 = statistics.median(r["p50"] for r in results[mode])
            p99 = statistics.median(r["p99"] for r in results[mode])
            label = {"unsigned": "unsigned twin", "data-keys": "ed25519 POST /data-keys",
                     "twin-hmac-sha256": "twin + HMAC check", "twin-ed25519": "twin + Ed25519 check"}.get(mode, f"signed {mode}")
            cpu = statistics.median(r["cpu_us"] for r in results[mode])
            print(f"{label:28}{rate:10.0f}{p50:10.2f}{p99:10.2f}{rate / baseline:13.0%}{cpu:15.0f}{baseline_cpu / cpu:10.0%}")
        if args.primitive_twins:
            print()
            for mode in ("hmac-sha256", "ed25519"):
                signed = [r["cpu_us"] for r in results[mode]]
                twin = [r["cpu_us"] for r in results["twin-" + mode]]
                own = statistics.median(a - b for a, b in zip(signed, twin))
                print(f"Coffer's own, signed {mode} beyond its primitive twin: {own:.0f} µs/request "
                      f"(median of the rounds' differences; per round: {', '.join(f'{a - b:.0f}' for a, b in zip(signed, twin))})")
        print("server µs/req: the server process's CPU time (user + system) per answered request; CPU ratio: the\n"
              "unsigned route's CPU per request over this route's, the throughput share the server would reach\n"
              "if it had the cores to itself (wrk shares them here).")
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
