"""Schemathesis hooks that sign each request as a real Coffer client would (RFC 9421, Ed25519).

Loaded by bench/api-fuzz/api-fuzz through SCHEMATHESIS_HOOKS. Requests to /admin/... are signed with the
admin key, the other signed routes with a registered device key, so the fuzzer's bodies and path
parameters reach the routes behind the signature check instead of stopping at 401. One request in
eight is left as the fuzzer made it (its own Signature and Signature-Input values, or none), so the
signature check itself is fuzzed too.

The keys come from the environment the runner sets: COFFER_FUZZ_ADMIN_KEY and COFFER_FUZZ_DEVICE_KEY
(PEM files of Ed25519 private keys), COFFER_FUZZ_ADMIN_KEYID and COFFER_FUZZ_DEVICE_KEYID.
"""

import atexit
import base64
import collections
import hashlib
import json
import os
import random
import time

import requests
import schemathesis
from cryptography.hazmat.primitives.serialization import load_pem_private_key

UNSIGNED_ROUTES = {"/register", "/health", "/ready"}


def _load(variable):
    with open(os.environ[variable], "rb") as handle:
        return load_pem_private_key(handle.read(), password=None)


ADMIN = (_load("COFFER_FUZZ_ADMIN_KEY"), os.environ["COFFER_FUZZ_ADMIN_KEYID"])
DEVICE = (_load("COFFER_FUZZ_DEVICE_KEY"), os.environ["COFFER_FUZZ_DEVICE_KEYID"])
STATUSES = collections.Counter()
RANDOM = random.Random(int(os.environ.get("COFFER_FUZZ_SEED", "0")))


def sign(method, url, body, key, keyid):
    """The Content-Digest, Signature-Input and Signature fields for a request (RFC 9530, RFC 9421)."""
    digest = "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    nonce = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
    params = '("@method" "@target-uri" "content-digest");created=%d;nonce="%s";keyid="%s";alg="ed25519"' % (
        int(time.time()), nonce, keyid)
    base = '"@method": %s\n"@target-uri": %s\n"content-digest": %s\n"@signature-params": %s' % (
        method.upper(), url, digest, params)
    signature = base64.b64encode(key.sign(base.encode())).decode()
    return {"Content-Digest": digest, "Signature-Input": "sig1=" + params, "Signature": "sig1=:" + signature + ":"}


def body_bytes(kwargs):
    """The body exactly as requests will send it."""
    if "json" in kwargs and kwargs["json"] is not None:
        return json.dumps(kwargs["json"], allow_nan=False).encode()
    data = kwargs.get("data")
    if data is None:
        return b""
    return data.encode() if isinstance(data, str) else bytes(data)


@schemathesis.hook
def before_call(context, case, kwargs):
    path = case.operation.path
    if path in UNSIGNED_ROUTES or RANDOM.random() < 0.125:
        return
    serialized = case.as_transport_kwargs(base_url=os.environ["COFFER_FUZZ_URL"])
    try:
        body = body_bytes(serialized)
    except (TypeError, ValueError):
        return  # not JSON the way requests would send it: leave the case as generated
    prepared = requests.Request(serialized["method"], serialized["url"], params=serialized.get("params")).prepare()
    key, keyid = ADMIN if path.startswith("/admin/") else DEVICE
    if case.headers is None:
        case.headers = {}
    case.headers.update(sign(serialized["method"], prepared.url, body, key, keyid))
    kwargs["data"] = body


@schemathesis.hook
def after_call(context, case, response):
    STATUSES[f"{case.method.upper()} {case.operation.path} {response.status_code}"] += 1


@atexit.register
def _write_statuses():
    path = os.environ.get("COFFER_FUZZ_STATUSES")
    if path:
        with open(path, "w") as handle:
            json.dump(dict(STATUSES), handle)
