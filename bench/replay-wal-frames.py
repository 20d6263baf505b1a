#!/usr/bin/env python3
"""How many WAL frames (4 KiB pages written to SQLite's write-ahead log) one `POST /register_user`
costs in `coffer serve`'s SQLite store, with and without the signature's replay record: a model of the
store's statements in Python's sqlite3 (the same SQLite library the server links here), no server.

Each transaction holds BATCH requests (the server's write batcher joins the writes that wait while a
commit runs); each request inserts a user (random e-mail, as the bench's are unique) and, unless
--variants says none, looks up and inserts a replay record whose identifier is the request's second
(`created`, RATE requests a second) then a random digest, as docs/HTTP-SIGNATURES.md defines it.
Variants: `none` (the unsigned twin), `text` (the schema today: TEXT key, row id, expiry index),
`without-rowid` (TEXT key in a WITHOUT ROWID table, expiry index), `without-rowid-no-expiry` (and no
expiry index). Every page a transaction changes is one frame, so frames per request is what the
replay record adds to each commit's writes (and to the next checkpoint's).

    python3 bench/replay-wal-frames.py
    python3 bench/replay-wal-frames.py --rate 10000 --batches 1,4,16
"""
import argparse
import hashlib
import os
import random
import shutil
import sqlite3
import tempfile

SCHEMAS = {
    "none": [],
    "text": ["CREATE TABLE coffer_replay (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
             "CREATE INDEX coffer_replay_expiry ON coffer_replay (expires_at)"],
    "without-rowid": ["CREATE TABLE coffer_replay (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL) WITHOUT ROWID",
                      "CREATE INDEX coffer_replay_expiry ON coffer_replay (expires_at)"],
    "without-rowid-no-expiry": ["CREATE TABLE coffer_replay (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL) WITHOUT ROWID"],
}


def frames_per_request(variant, rate, batch, before, measured):
    folder = tempfile.mkdtemp(prefix="coffer-frames-")
    path = os.path.join(folder, "store.sqlite")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE coffer_keys (key_id TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_key TEXT, secret TEXT, created_at BIGINT NOT NULL)")
    db.execute("CREATE TABLE coffer_users (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL, "
               "key_id TEXT NOT NULL REFERENCES coffer_keys(key_id), created_at BIGINT NOT NULL)")
    for statement in SCHEMAS[variant]:
        db.execute(statement)
    db.execute("INSERT INTO coffer_keys VALUES ('k', 'hmac-sha256', NULL, 's', 0)")
    start = 1_700_000_000

    def transaction(first):
        db.execute("BEGIN IMMEDIATE")
        for index in range(first, first + batch):
            second = start + index // rate
            if variant != "none":
                identifier = "%016x" % (second ^ (1 << 63)) + hashlib.sha256(os.urandom(16)).hexdigest()
                earlier = hashlib.sha256(os.urandom(16)).hexdigest()  # the 1.0.0 identifier, also looked up
                db.execute("SELECT EXISTS(SELECT 1 FROM coffer_replay WHERE id IN (?, ?) AND expires_at > ?)", (identifier, earlier, second))
                db.execute("INSERT INTO coffer_replay (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", (identifier, second + 301))
            db.execute("INSERT INTO coffer_users (email, name, key_id, created_at) VALUES (?, ?, 'k', ?)",
                       (f"user-{random.random()}@example.com", "Ada Lovelace", second))
        db.execute("COMMIT")

    index = 0
    while index < before:
        transaction(index)
        index += batch
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("PRAGMA wal_autocheckpoint=0")
    size = os.path.getsize(path + "-wal")
    end = index + measured
    while index < end:
        transaction(index)
        index += batch
    frames = (os.path.getsize(path + "-wal") - max(size, 32)) / (4096 + 24)
    db.close()
    shutil.rmtree(folder)
    return frames / measured


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=4000, help="requests a second (records sharing one `created`)")
    parser.add_argument("--batches", default="1,2,8", help="requests per transaction, comma-separated")
    parser.add_argument("--before", type=int, default=60000, help="requests stored before measuring")
    parser.add_argument("--measured", type=int, default=20000, help="requests measured")
    parser.add_argument("--variants", default=",".join(SCHEMAS))
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    print(f"WAL frames per request, {args.rate} requests a second, {args.before} stored before")
    print(f"{'variant':26}" + "".join(f"{'batch ' + str(b):>10}" for b in batches))
    for variant in args.variants.split(","):
        row = [frames_per_request(variant, args.rate, b, args.before, args.measured) for b in batches]
        print(f"{variant:26}" + "".join(f"{value:10.2f}" for value in row), flush=True)


if __name__ == "__main__":
    main()
