#!/usr/bin/env python3
"""Counts what each answered request costs a `coffer serve` build in events that do not depend on the
host's speed: heap allocations (glibc `malloc`), Swift retains, SQLite's own allocations, system calls.

On a shared host two runs of one binary can differ by 40 µs of CPU per request; these counts differ by
less than one. They show where a change removed work even when the host hides its time, and
bench/serve-ab.py then says what it was worth. Per route (the unsigned twin, hmac-sha256, ed25519),
after a warm-up run, one wrk run under `perf stat` with user probes on the shared libraries:

    sudo python3 bench/serve-counts.py                                  # builds serve-load-server
    sudo python3 bench/serve-counts.py --server OLD --server NEW        # side by side
    sudo python3 bench/serve-counts.py --events syscalls                # each system call by name
    sudo python3 bench/serve-counts.py --events scheduling              # thread switches and wake-ups

Needs perf with uprobes (root), wrk and openssl. Probes it adds are removed when it ends. Batching in
the server's write path depends on load, so counts that involve the database (pwrite64, SQLite's
allocations) move a little with the number of connections; compare builds at the same settings.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import importlib.util

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("serve_ab", os.path.join(HERE, "serve-ab.py"))
serve_ab = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(serve_ab)
serve_load = serve_ab.serve_load

SWIFT_LIBRARIES = "/usr/lib/swift/linux"


def library(name):
    """The path of a shared library the server loads (the Swift runtime from the toolchain, libc and
    SQLite from the system)."""
    for folder in (os.path.join(os.path.dirname(os.path.dirname(shutil.which("swift") or "/x/x")), "lib/swift/linux"),
                   SWIFT_LIBRARIES, "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib/x86_64-linux-gnu"):
        for candidate in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if candidate == name or candidate.startswith(name + "."):
                return os.path.realpath(os.path.join(folder, candidate))
    sys.exit(f"cannot find {name}")


# event name in perf, the library and function a user probe goes on (None: a kernel event), the column
PROBES = [
    ("probe_libc:malloc", ("libc.so.6", "malloc"), "malloc"),
    ("probe_libswiftCore:swift_retain", ("libswiftCore.so", "swift_retain"), "retain"),
    ("probe_libsqlite3:sqlite3Malloc", ("libsqlite3.so", "sqlite3Malloc"), "sqlite malloc"),
    ("raw_syscalls:sys_enter", None, "syscalls"),
]

# kernel events that say how often a request's work crossed threads: a thread put to sleep and woken
# (a context switch each way), moved between cores, or touching a page for the first time
SCHEDULING = ["context-switches", "sched:sched_wakeup", "cpu-migrations", "page-faults"]


def add_probes():
    """Adds the user probes perf does not have yet; returns those added, to remove at the end."""
    existing = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True).stdout
    added = []
    for event, target, _ in PROBES:
        if target is None or event in existing:
            continue
        name, function = target
        result = subprocess.run(["perf", "probe", "-x", library(name), "--add", function], capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"perf could not probe {function} in {name} (root and uprobes needed):\n{result.stderr}")
        added.append(event)
    return added


def count(process, url, keys, mode, events, args):
    keyid, keyfile = keys[mode]
    total = args.per_second * args.seconds
    serve_load.run_wrk(url, mode, keyid, keyfile, total, f"warm{mode[:2]}{os.getpid()}", args, process.pid)
    perf = subprocess.Popen(["perf", "stat", "-x,", "-e", events, "-p", str(process.pid)],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)  # perf attaches before the first request
    result = serve_load.run_wrk(url, mode, keyid, keyfile, total, f"count{mode[:2]}{os.getpid()}", args, process.pid)
    perf.send_signal(signal.SIGINT)
    report = perf.communicate()[1]
    counts = {}
    for line in report.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[0].isdigit():
            counts[fields[2]] = int(fields[0])
    requests = max(result["requests"], 1)
    return {name: value / requests for name, value in counts.items()}, result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", action="append", help="serve-load-server binary[,NAME=VALUE...]; repeat to compare")
    parser.add_argument("--modes", default="unsigned,hmac-sha256,ed25519")
    parser.add_argument("--events", choices=["counts", "syscalls", "scheduling"], default="counts")
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--pace-ms", type=int, default=0)
    parser.add_argument("--per-second", type=int, default=40000)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("perf's user probes need root")
    for tool in ("perf", "wrk", "openssl"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed")
    servers = args.server or [serve_load.build_server()]
    added = add_probes() if args.events == "counts" else []
    events = {"counts": ",".join(event for event, _, _ in PROBES), "syscalls": "syscalls:sys_enter_*",
              "scheduling": ",".join(SCHEDULING)}[args.events]
    try:
        for spec in servers:
            folder = tempfile.mkdtemp(prefix="coffer-serve-counts-")
            process, url, keys = serve_ab.start(spec, folder)
            try:
                print(f"\n{spec}: per answered request, wrk -c{args.connections} -d{args.seconds}s")
                for mode in args.modes.split(","):
                    per_request, result = count(process, url, keys, mode, events, args)
                    if args.events == "counts":
                        shown = "  ".join(f"{column} {per_request.get(event, 0):7.1f}" for event, _, column in PROBES)
                    elif args.events == "scheduling":
                        shown = "  ".join(f"{event} {per_request.get(event, 0):6.2f}" for event in SCHEDULING)
                    else:
                        shown = "  ".join(f"{name.split('sys_enter_')[-1]} {value:.2f}"
                                          for name, value in sorted(per_request.items()) if value >= 0.01)
                    print(f"  {mode:12} {shown}   ({result['rate']:.0f} req/s, {result['cpu_us']:.0f} µs CPU, perf-inflated)")
            finally:
                process.terminate()
                process.wait(timeout=30)
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        for event in added:
            subprocess.run(["perf", "probe", "--del", event], capture_output=True)


if __name__ == "__main__":
    main()
