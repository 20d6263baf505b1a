#!/usr/bin/env python3
"""A/B of two `coffer serve` builds (or two settings of one) under the same load, paired run by run.

On a shared, noisy host two serve-load.py runs minutes apart can differ by more than the change being
measured. This starts both servers at once (each a serve-load-server with its own fresh SQLite database
and its own registered keys), then runs wrk against one and then the other, swapping the order every
run, and prints each run, the medians, and the paired differences of server CPU time per request
(B minus A): a change is real when the differences agree in sign, not when two medians differ.

    python3 bench/serve-ab.py --a OLD-BINARY --b NEW-BINARY
    python3 bench/serve-ab.py --a BIN --b BIN,SOME_ENV=1 --modes hmac-sha256,unsigned --runs 8
    python3 bench/serve-ab.py --a OLD --b NEW --connections 16 --pace-ms 8     # a half-loaded server
    python3 bench/serve-ab.py --a OLD --b NEW --master-key --modes unsigned,hmac-sha256,ed25519   # tagged records

A server is a serve-load-server binary (Benchmarks/ServeLoad; build it with serve-load.py, or
`swift build -c release --product serve-load-server` in Benchmarks/), optionally followed by
comma-separated NAME=VALUE settings for its environment. Needs wrk and openssl.
"""
import argparse
import base64
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
_spec = importlib.util.spec_from_file_location("serve_load", os.path.join(HERE, "serve-load.py"))
serve_load = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(serve_load)

MODES = ("unsigned", "hmac-sha256", "ed25519")


def start(spec, folder, master_key=False):
    """Starts the server `spec` names (binary[,NAME=VALUE...]), with a master key of its own when
    `master_key`, and registers an Ed25519 key and an HMAC secret; returns the process, its URL and each
    mode's (key id, key file)."""
    binary, *settings = spec.split(",")
    environment = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        environment[name] = value
    public, seed = serve_load.ed25519_key(folder, "ed")
    saved = dict(os.environ)
    os.environ.update(environment)
    try:
        key_file = None
        if master_key:
            key_file = os.path.join(folder, "master.key")
            with open(key_file, "wb") as out:
                out.write(os.urandom(32))
            os.chmod(key_file, 0o600)
        process, url = serve_load.start_server(binary, folder, master_key=key_file)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    ed = serve_load.register(url, folder, "ed", public)
    hmac = serve_load.post(url + "/register", {"algorithm": "hmac-sha256"})
    secret = os.path.join(folder, "hmac.secret")
    with open(secret, "wb") as out:
        out.write(base64.b64decode(hmac["secret"]))
    keys = {"unsigned": (hmac["keyId"], "-"), "hmac-sha256": (hmac["keyId"], secret), "ed25519": (ed["keyId"], seed)}
    return process, url, keys


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, help="server A: binary[,NAME=VALUE...]")
    parser.add_argument("--b", required=True, help="server B: binary[,NAME=VALUE...]")
    parser.add_argument("--modes", default="hmac-sha256", help=f"comma-separated, of {', '.join(MODES)}")
    parser.add_argument("--runs", type=int, default=6, help="pairs of wrk runs per mode")
    parser.add_argument("--seconds", type=int, default=5, help="length of each wrk run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--pace-ms", type=int, default=0, help="each connection waits this long between requests")
    parser.add_argument("--presign", action="store_true", help="sign every request before each run (see serve-load.py)")
    parser.add_argument("--per-second", type=int, default=40000, help="requests built per second of run")
    parser.add_argument("--master-key", action="store_true",
                        help="give each server a master key: HMAC secrets wrapped, key and user records tagged")
    args = parser.parse_args()
    modes = args.modes.split(",")
    for mode in modes:
        if mode not in MODES:
            sys.exit(f"unknown mode {mode!r}: use {', '.join(MODES)}")
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed (apt install wrk)")

    folders, servers = [], {}
    try:
        for name, spec in (("A", args.a), ("B", args.b)):
            folders.append(tempfile.mkdtemp(prefix=f"coffer-serve-ab-{name}-"))
            servers[name] = start(spec, folders[-1], master_key=args.master_key)
        count = args.per_second * args.seconds // args.threads
        results = {}
        for run in range(args.runs):
            for mode in modes:
                for name in ("A", "B") if run % 2 == 0 else ("B", "A"):
                    process, url, keys = servers[name]
                    keyid, keyfile = keys[mode]
                    result = serve_load.run_wrk(url, mode, keyid, keyfile, count, f"ab{run}{name}{mode[:2]}{os.getpid()}",
                                                args, process.pid)
                    results.setdefault((name, mode), []).append(result)
                    print(f"run {run + 1} {name} {mode:12} {result['rate']:8.0f} req/s  p50 {result['p50']:.2f} ms"
                          f"  p99 {result['p99']:.2f} ms  server CPU {result['cpu_us']:.0f} µs/request", file=sys.stderr)
        print(f"\nA: {args.a}\nB: {args.b}\nwrk -t{args.threads} -c{args.connections} -d{args.seconds}s"
              f"{f', pacing {args.pace_ms} ms' if args.pace_ms else ''}, {args.runs} pairs, medians")
        print(f"{'route':14}{'':3}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'server µs/req':>15}")
        for mode in modes:
            for name in ("A", "B"):
                rows = results[(name, mode)]
                print(f"{mode:14}{name:>3}{statistics.median(r['rate'] for r in rows):9.0f}"
                      f"{statistics.median(r['p50'] for r in rows):9.2f}{statistics.median(r['p99'] for r in rows):9.2f}"
                      f"{statistics.median(r['cpu_us'] for r in rows):15.0f}")
            differences = [b["cpu_us"] - a["cpu_us"] for a, b in zip(results[("A", mode)], results[("B", mode)])]
            lower = sum(1 for d in differences if d < 0)
            print(f"{mode:14}B-A server µs/req by pair: {' '.join(f'{d:+.0f}' for d in differences)};"
                  f" median {statistics.median(differences):+.0f}, B lower in {lower} of {len(differences)}")
    finally:
        for process, _, _ in servers.values():
            process.terminate()
            process.wait(timeout=30)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
