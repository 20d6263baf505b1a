"""Shared helpers for the benchmarks that load `coffer serve` with wrk (bench/serve-load.py,
bench/serve-deployed.py): keys made by OpenSSL, a device registered with its proof of possession, wrk's
latency lines read, and CPU time read from /proc."""
import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request


def post(url, payload, headers=None, context=None):
    """POSTs `payload` (bytes, or a value sent as JSON) and returns the decoded JSON answer. `context`: an
    ssl.SSLContext for an https URL."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, context=context) as response:
        return json.load(response)


def register(url, folder, name, public, context=None, **fields):
    """POST /register of the Ed25519 key `name` (made by ed25519_key), signed by that key as the server
    demands (proof of possession, docs/SERVER.md): RFC 9421 over @method, @target-uri and content-digest,
    with created, a nonce and the key id it is registered as; OpenSSL makes the signature."""
    body = json.dumps({"publicKey": public, **fields}).encode()
    pem = os.path.join(folder, name + ".pem")
    spki = subprocess.run(["openssl", "pkey", "-in", pem, "-pubout", "-outform", "DER"], check=True, capture_output=True).stdout
    keyid = "k_" + hashlib.sha256(spki).digest()[:16].hex()
    digest = "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    nonce = base64.b64encode(os.urandom(16)).decode()
    params = f'("@method" "@target-uri" "content-digest");created={int(time.time())};nonce="{nonce}";keyid="{keyid}";alg="ed25519"'
    base = f'"@method": POST\n"@target-uri": {url}/register\n"content-digest": {digest}\n"@signature-params": {params}'
    with tempfile.NamedTemporaryFile(dir=folder) as signed:
        signed.write(base.encode())
        signed.flush()
        signature = subprocess.run(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", pem, "-in", signed.name], check=True, capture_output=True).stdout
    headers = {"Content-Digest": digest, "Signature-Input": "sig1=" + params, "Signature": "sig1=:" + base64.b64encode(signature).decode() + ":"}
    return post(url + "/register", body, headers, context)


def ed25519_key(folder, name):
    """An Ed25519 key made by `openssl genpkey` in `folder`: its public key in PEM, and the path of a file
    holding its 32-byte seed (what bench/wrk/register_user.lua signs with)."""
    pem = os.path.join(folder, name + ".pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", pem], check=True, capture_output=True)
    public = subprocess.run(["openssl", "pkey", "-in", pem, "-pubout"], check=True, capture_output=True, text=True).stdout
    der = subprocess.run(["openssl", "pkey", "-in", pem, "-outform", "DER"], check=True, capture_output=True).stdout
    seed = os.path.join(folder, name + ".seed")
    with open(seed, "wb") as out:
        out.write(der[-32:])  # PKCS#8 of Ed25519 ends with the 32-byte seed
    return public, seed


def x25519_public_key(folder, name):
    """An X25519 key made by `openssl genpkey` in `folder`: its public key in PEM (a device's encryption
    key, which its data key is sealed to)."""
    pem = os.path.join(folder, name + ".pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "x25519", "-out", pem], check=True, capture_output=True)
    return subprocess.run(["openssl", "pkey", "-in", pem, "-pubout"], check=True, capture_output=True, text=True).stdout


def latency_ms(text, percentile):
    """The `percentile` line of wrk's --latency table, in milliseconds (nan when absent)."""
    match = re.search(rf"^\s*{percentile}%\s+([0-9.]+)(us|ms|s)\s*$", text, re.MULTILINE)
    if not match:
        return float("nan")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[match.group(2)]
    return float(match.group(1)) * scale


def cpu_seconds(pid):
    """User plus system CPU time of a process so far (/proc/PID/stat, fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(root):
    """CPU time (user plus system) of process `root` and its children, by pid: a server's master and its
    workers (nginx), or the postmaster and its backends (PostgreSQL). A process that ends between two
    readings loses what it used; servers under load keep theirs."""
    times = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == root or int(fields[1]) == root:
            times[int(entry)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return times


def cpu_used(before, after):
    """CPU seconds a process tree used between two tree_cpu_seconds readings (a process born in between
    counts from zero)."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def start_listening(argv, what):
    """Starts a server (`argv`) that prints `listening on URL` as its first line, with its standard error
    discarded; returns the process and the URL. Exits naming `what` when the line does not come."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    match = re.search(r"listening on (https?://\S+)", line)
    if not match:
        process.kill()
        sys.exit(f"{what} did not start: {line!r}")
    return process, match.group(1)
