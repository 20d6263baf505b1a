"""Shared helpers for Coffer's side-by-side benchmarks: timing with peak memory, alternating rounds."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GNU_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def run(argv):
    """Runs argv with output discarded; returns (wall seconds, peak RSS in KiB).

    Peak memory comes from GNU time (apt package `time`), which reads it after exec. The rusage of a
    child forked from Python would also count Python's own pages from before the exec.
    """
    with tempfile.NamedTemporaryFile("r") as report:
        wrapped = [GNU_TIME, "-q", "-f", "%M", "-o", report.name] + argv if GNU_TIME else argv
        start = time.perf_counter()
        process = subprocess.run(wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.perf_counter() - start
        if process.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed ({process.returncode}): {process.stderr.decode(errors='replace')}")
        peak = int(report.read().strip().splitlines()[-1]) if GNU_TIME else 0
    return wall, peak


# The release build README.md recommends for deployment and measurement: cross-module optimization lets
# the compiler specialize generic code of the dependencies (the structured-field parser, above all).
RELEASE_FLAGS = ["-c", "release", "-Xswiftc", "-cross-module-optimization"]


def build_product(product, package=ROOT):
    """Builds `product` of the Swift package at `package` the release way; returns the binary's path."""
    print(f"building {product} (release, cross-module optimization)...", file=sys.stderr)
    subprocess.run(["swift", "build"] + RELEASE_FLAGS + ["--product", product], cwd=package, check=True,
                   stdout=subprocess.DEVNULL)
    path = subprocess.run(["swift", "build"] + RELEASE_FLAGS + ["--show-bin-path"], cwd=package, check=True,
                          capture_output=True, text=True).stdout.strip()
    return os.path.join(path, product)


def build_coffer():
    return build_product("coffer")


def make_file(path, size):
    block = 1 << 20
    with open(path, "wb") as out:
        for _ in range(size // block):
            out.write(os.urandom(block))
        out.write(os.urandom(size % block))


def balanced_orders(count):
    """A Williams design: orders of range(count) in which each item follows each other item equally
    often (once per `count` rows for an even count, twice per 2 x `count` rows for an odd one)."""
    first, low, high = [0], 1, count - 1
    while len(first) < count:
        first.append(low)
        low += 1
        if len(first) < count:
            first.append(high)
            high -= 1
    rows = [[(item + shift) % count for item in first] for shift in range(count)]
    if count % 2 == 1:
        rows += [list(reversed(row)) for row in rows]
    return rows


def compare(label, commands, rounds, anchor="openssl dgst", cleanup=()):
    """commands: list of (name, argv). Returns {name: (median wall, median rss)}; ratios are to `anchor`.

    `cleanup` paths are deleted (untimed) before every run, so outputs never pile up in memory-backed
    folders and every tool writes a fresh file; then everything is flushed to disk (`sync`, untimed, as
    hyperfine's `--prepare sync`), so that no run pays for the writeback of the one before it.
    """
    walls = {name: [] for name, _ in commands}
    rss = {name: [] for name, _ in commands}
    def clean():
        for path in cleanup:
            if os.path.exists(path):
                os.remove(path)
        if cleanup:
            os.sync()

    for argv in [c[1] for c in commands]:
        clean()
        run(argv)  # warm-up: page cache, dynamic loader, CPU frequency
    # Each round takes the next row of a Williams design (balanced_orders), so that every tool runs in
    # each position, and right after each other tool, equally often. On this VM a run that follows one
    # which wrote 1 GiB can be much slower than one that follows its own kind. A rotated order gives
    # each tool the same predecessor in every round: it had put `coffer --key-file` after age in all of
    # them.
    orders = balanced_orders(len(commands))
    if rounds % len(orders):
        print(f"note: {label}: {rounds} rounds is not a multiple of {len(orders)}, so the order is only nearly balanced",
              file=sys.stderr)
    for round_number in range(rounds):
        order = [commands[index] for index in orders[round_number % len(orders)]]
        for name, argv in order:
            clean()
            wall, peak = run(argv)
            walls[name].append(wall)
            rss[name].append(peak)
    result = {name: (statistics.median(walls[name]), statistics.median(rss[name])) for name in walls}
    anchor_name = anchor if anchor in result else next(iter(result))
    anchor_wall = result[anchor_name][0]
    print(f"\n{label} ({rounds} rounds, medians)")
    print(f"  {'tool':<26}{'wall s':>8}{'min–max s':>14}{'peak MiB':>10}  {'vs ' + anchor_name}")
    for name, (wall, peak) in result.items():
        spread = f"{min(walls[name]):.2f}–{max(walls[name]):.2f}"
        print(f"  {name:<26}{wall:>8.3f}{spread:>14}{peak / 1024:>10.1f}  {wall / anchor_wall:.2f}x")
    return result
