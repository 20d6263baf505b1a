#!/usr/bin/env python3
"""Signed POST /data-keys through `coffer serve` as it is deployed: the release `coffer` binary with TLS,
answered directly and through nginx (TLS at nginx, plain HTTP on loopback to a second instance started
with --trusted-proxy and the pinned --public-authority, docs/DEPLOYMENT.md "Behind nginx"), on SQLite or
on a PostgreSQL server of its own, at several connection counts. Prints throughput, p50 and p99, and the
CPU time each process spends per request: coffer, nginx (master and workers), PostgreSQL (postmaster
and backends) and wrk, the load generator, which shares the machine.

    python3 bench/serve-deployed.py                                 # SQLite and PostgreSQL, 4/16/64 connections
    python3 bench/serve-deployed.py --database postgres --connections 16 --rounds 5
    python3 bench/serve-deployed.py --coffer .build/release/coffer --seconds 5

Each request is what a device sends for its data key: an Ed25519-signed (RFC 9421) POST /data-keys,
signed by OpenSSL in wrk (bench/wrk/register_user.lua) as it leaves, with its own nonce, so the server
does all of its real work: the signature, Content-Digest, the replay record (a database write), the data
key read and unwrapped, and the key sealed by HPKE to the device. The server logs at info (one access
line a request) to /dev/null.

The PostgreSQL server is started for the run (initdb in a temporary folder, as the `postgres` user when
run as root) with PostgreSQL's defaults: fsync and synchronous_commit on, so each replay record is
durable when the answer leaves, as in production. Its commits and WAL bytes per request are printed.

nginx is configured as docs/DEPLOYMENT.md shows (worker_processes auto, TLS, HTTP/1.1 to the upstream)
with an upstream pool of idle connections kept to coffer (--nginx-keepalive; 0 opens a connection per
request, nginx's default without `keepalive`).

Needs wrk, nginx, openssl, and for PostgreSQL its server binaries (apt install wrk nginx-light postgresql).
"""
import argparse
import os
import re
import resource
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from benchlib import build_coffer
from servebench import cpu_used, ed25519_key, latency_ms, register, start_listening, tree_cpu_seconds, x25519_public_key

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "wrk", "register_user.lua")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def certificate(folder):
    """A self-signed P-256 certificate for 127.0.0.1 (what both coffer and nginx serve), made by OpenSSL."""
    cert, key = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


class PostgreSQL:
    """A PostgreSQL server of the run's own on 127.0.0.1, with PostgreSQL's default durability."""

    def __init__(self, folder):
        binaries = sorted(os.listdir("/usr/lib/postgresql")) if os.path.isdir("/usr/lib/postgresql") else []
        if not binaries:
            sys.exit("PostgreSQL's server is not installed (apt install postgresql)")
        self.bin = os.path.join("/usr/lib/postgresql", binaries[-1], "bin")
        self.folder = os.path.join(folder, "postgres")
        os.makedirs(self.folder)
        # PostgreSQL refuses to run as root: its own user, as .ci/start-postgres does.
        self.as_owner = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        if self.as_owner:
            shutil.chown(self.folder, "postgres")
            # The user must reach its folder: the temporary folders above it are opened (listed: no).
            for parent in (folder, os.path.dirname(folder)):
                os.chmod(parent, 0o711)
        self.port = free_port()
        data = os.path.join(self.folder, "data")
        subprocess.run(self.as_owner + [os.path.join(self.bin, "initdb"), "-D", data, "-U", "coffer", "--auth=trust", "-E", "UTF8"],
                       check=True, capture_output=True)
        subprocess.run(self.as_owner + [os.path.join(self.bin, "pg_ctl"), "-D", data, "-l", os.path.join(self.folder, "log"), "-w",
                                        "-o", f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder}", "start"],
                       check=True, capture_output=True)
        self.data = data
        with open(os.path.join(data, "postmaster.pid")) as pid:
            self.pid = int(pid.readline())
        subprocess.run(self.as_owner + [os.path.join(self.bin, "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "coffer", "coffer"],
                       check=True, capture_output=True)
        self.url = f"postgres://coffer@127.0.0.1:{self.port}/coffer?sslmode=disable"

    def counters(self):
        """Commits so far in the database, and the WAL position in bytes."""
        query = ("SELECT xact_commit, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint "
                 "FROM pg_stat_database WHERE datname = 'coffer'")
        out = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "coffer", "-d", "postgres", "-At", "-c",
                              "SELECT pg_stat_force_next_flush()", "-c", query], check=True, capture_output=True, text=True).stdout
        commits, wal = out.strip().splitlines()[-1].split("|")
        return int(commits), int(wal)

    def stop(self):
        subprocess.run(self.as_owner + [os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "fast", "stop"], capture_output=True)


class Nginx:
    """nginx on 127.0.0.1 with TLS, forwarding to `upstream` as docs/DEPLOYMENT.md shows."""

    def __init__(self, folder, port, cert, key, upstream, keepalive):
        prefix = os.path.join(folder, "nginx")
        os.makedirs(prefix)
        self.port = port
        pool = f"keepalive {keepalive};" if keepalive else ""
        configuration = f"""
            daemon off;
            user root;
            worker_processes auto;
            pid {prefix}/nginx.pid;
            error_log {prefix}/error.log;
            events {{ worker_connections 1024; }}
            http {{
                access_log off;
                client_body_temp_path {prefix}/body;
                proxy_temp_path {prefix}/proxy;
                fastcgi_temp_path {prefix}/fastcgi;
                uwsgi_temp_path {prefix}/uwsgi;
                scgi_temp_path {prefix}/scgi;
                upstream coffer {{
                    server 127.0.0.1:{upstream};
                    {pool}
                }}
                server {{
                    listen 127.0.0.1:{self.port} ssl;
                    ssl_certificate {cert};
                    ssl_certificate_key {key};
                    client_max_body_size 1m;
                    location / {{
                        proxy_pass http://coffer;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_set_header Host $host;
                        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        proxy_set_header X-Forwarded-Proto $scheme;
                        proxy_set_header X-Forwarded-Host $http_host;
                    }}
                }}
            }}
            """
        path = os.path.join(prefix, "nginx.conf")
        with open(path, "w") as out:
            out.write(configuration)
        self.process = subprocess.Popen(["nginx", "-c", path, "-p", prefix], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"https://127.0.0.1:{self.port}"

    def wait(self, context):
        """Until nginx answers /health through to coffer, at most about 10 s."""
        for _ in range(100):
            try:
                with urllib.request.urlopen(self.url + "/health", context=context, timeout=1):
                    return
            except OSError:
                time.sleep(0.1)  # a start-up poll, not a measurement
        sys.exit(f"nginx did not answer on {self.url}: see its error.log")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def start_coffer(coffer, database, master_key, extra):
    """`coffer serve` on 127.0.0.1 with a free port; the process and the URL it prints."""
    return start_listening([coffer, "serve", "--host", "127.0.0.1", "--port", "0", "--database", database,
                            "--master-key-file", master_key, "--log-level", "info"] + extra, "coffer serve")


def run_wrk(url, keyid, seed, connections, args, run, processes, postgres):
    """One wrk run of signed POST /data-keys at `connections`; its figures and each process's CPU time
    per request."""
    count = args.per_second * args.seconds // args.threads
    argv = ["wrk", f"-t{args.threads}", f"-c{connections}", f"-d{args.seconds}s", "--latency", "-s", SCRIPT, url,
            "--", "ed25519", keyid, seed, str(count), run, "data-keys", "0", "sign-as-sent"]
    before = {name: tree_cpu_seconds(pid) for name, pid in processes.items()}
    counters = postgres.counters() if postgres else None
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    wrk_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = {name: cpu_used(before[name], tree_cpu_seconds(pid)) for name, pid in processes.items()}
    used["wrk"] = (wrk_after.ru_utime - children.ru_utime) + (wrk_after.ru_stime - children.ru_stime)
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    if re.search(r"Non-2xx or 3xx responses: (\d+)", text) or re.search(r"Socket errors: (.*)", text):
        sys.exit(f"wrk saw failed requests at {connections} connections to {url}:\n{text}")
    result = {"rate": float(re.search(r"Requests/sec:\s+([0-9.]+)", text).group(1)),
              "p50": latency_ms(text, 50), "p99": latency_ms(text, 99), "requests": requests}
    for name, seconds in used.items():
        result[name] = seconds / max(requests, 1) * 1e6
    if postgres:
        commits, wal = postgres.counters()
        result["commits"] = (commits - counters[0]) / max(requests, 1)
        result["wal"] = (wal - counters[1]) / max(requests, 1)
    return result


def measure(args, coffer, database_name, folder):
    """The whole matrix on one database: (target, connections) -> list of rounds' results."""
    work = tempfile.mkdtemp(prefix=database_name + "-", dir=folder)
    postgres = PostgreSQL(work) if database_name == "postgres" else None
    servers, nginx = [], None
    try:
        database = postgres.url if postgres else "sqlite:" + os.path.join(work, "serve.sqlite")
        cert, key = certificate(work)
        master_key = os.path.join(work, "master.key")
        with open(os.open(master_key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            out.write(os.urandom(32))
        context = ssl.create_default_context(cafile=cert)
        direct, direct_url = start_coffer(coffer, database, master_key, ["--cert", cert, "--key", key])
        servers.append(direct)
        # The instance behind nginx: plain HTTP on loopback, the proxy trusted, the signed origin pinned
        # to nginx's (docs/DEPLOYMENT.md, "Behind nginx").
        nginx_port = free_port()
        behind, behind_url = start_coffer(coffer, database, master_key, [
            "--trusted-proxy", "127.0.0.1/32", "--public-scheme", "https", "--public-authority", f"127.0.0.1:{nginx_port}"])
        servers.append(behind)
        nginx = Nginx(work, nginx_port, cert, key, int(behind_url.rsplit(":", 1)[1]), args.nginx_keepalive)
        nginx.wait(context)
        return run_matrix(args, work, context, postgres, direct, direct_url, behind, nginx)
    finally:
        if nginx:
            nginx.stop()
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
        if postgres:
            postgres.stop()


def run_matrix(args, work, context, postgres, direct, direct_url, behind, nginx):
    """Registers a device (Ed25519 signing key, X25519 encryption key, both made by OpenSSL), then runs
    wrk against each target at each connection count, round after round."""
    public, seed = ed25519_key(work, "device")
    device = register(direct_url, work, "device", public, context, encryptionKey=x25519_public_key(work, "x25519"))
    database = {"PostgreSQL": postgres.pid} if postgres else {}
    targets = [("direct", direct_url, {"coffer": direct.pid, **database}),
               ("nginx", nginx.url, {"coffer": behind.pid, "nginx": nginx.process.pid, **database})]
    # Each target once before the clock: TLS sessions, the data key made, the key cached.
    for name, url, processes in targets:
        warm = argparse.Namespace(**{**vars(args), "seconds": 2})
        run_wrk(url, device["keyId"], seed, 16, warm, f"w{name}{os.getpid()}", processes, postgres)
    cells = [(target, connections) for connections in args.connections for target in targets]
    results = {(target[0], connections): [] for target, connections in cells}
    for round_number in range(1, args.rounds + 1):
        # The replay table grows run after run: rotate the order so that no cell always meets the largest.
        shift = (round_number - 1) % len(cells)
        for (name, url, processes), connections in cells[shift:] + cells[:shift]:
            result = run_wrk(url, device["keyId"], seed, connections, args, f"r{round_number}{name[0]}{connections}-{os.getpid()}",
                             processes, postgres)
            results[(name, connections)].append(result)
            cpu = "  ".join(f"{key} {result[key]:.0f}" for key in ("coffer", "nginx", "PostgreSQL", "wrk") if key in result)
            print(f"round {round_number} {name:6} c{connections:<3} {result['rate']:8.0f} req/s  p50 {result['p50']:6.2f} ms"
                  f"  p99 {result['p99']:6.2f} ms  CPU µs/request: {cpu}", file=sys.stderr)
    return results


def report(args, database_name, results):
    median = statistics.median
    print(f"\n{database_name}: signed POST /data-keys (Ed25519) to coffer serve over TLS, direct and through nginx; "
          f"wrk -t{args.threads} -d{args.seconds}s, median of {args.rounds} rounds")
    postgres = database_name == "PostgreSQL"
    header = f"{'path':8}{'conns':>6}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'coffer':>9}{'nginx':>8}"
    header += f"{'Postgres':>10}" if postgres else ""
    header += f"{'wrk':>7}{'server':>9}"
    header += f"{'commits':>9}{'WAL B':>8}" if postgres else ""
    print(header + "   (CPU µs per request; server: all but wrk)")
    for (name, connections), rounds in results.items():
        line = f"{name:8}{connections:6}{median(r['rate'] for r in rounds):9.0f}{median(r['p50'] for r in rounds):9.2f}"
        line += f"{median(r['p99'] for r in rounds):9.2f}{median(r['coffer'] for r in rounds):9.0f}"
        line += f"{median(r.get('nginx', 0) for r in rounds):8.0f}"
        if postgres:
            line += f"{median(r['PostgreSQL'] for r in rounds):10.0f}"
        server = median(r["coffer"] + r.get("nginx", 0) + r.get("PostgreSQL", 0) for r in rounds)
        line += f"{median(r['wrk'] for r in rounds):7.0f}{server:9.0f}"
        if postgres:
            line += f"{median(r['commits'] for r in rounds):9.2f}{median(r['wal'] for r in rounds):8.0f}"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--coffer", help="a release coffer binary to use instead of building one")
    parser.add_argument("--database", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--connections", type=lambda text: [int(part) for part in text.split(",")], default=[4, 16, 64],
                        help="connection counts, comma-separated (default 4,16,64)")
    parser.add_argument("--seconds", type=int, default=10, help="length of each wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--per-second", type=int, default=20000,
                        help="requests built per second of run (an upper bound of the server's rate)")
    parser.add_argument("--nginx-keepalive", type=int, default=64,
                        help="idle connections nginx keeps to coffer (0: a new connection per request)")
    args = parser.parse_args()
    for tool in ("wrk", "nginx", "openssl"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed (apt install wrk nginx-light openssl)")
    coffer = args.coffer or build_coffer()
    folder = tempfile.mkdtemp(prefix="coffer-serve-deployed-")
    try:
        names = ["sqlite", "postgres"] if args.database == "both" else [args.database]
        for name in names:
            results = measure(args, coffer, name, folder)
            report(args, {"sqlite": "SQLite", "postgres": "PostgreSQL"}[name], results)
        print("CPU µs per request: each process tree's user + system CPU time over the run, per answered request "
              "(nginx: master and workers; PostgreSQL: postmaster, backends and its background writers); "
              "commits and WAL bytes: per request, from pg_stat_database and the WAL position.")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
