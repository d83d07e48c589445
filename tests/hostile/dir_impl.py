"""A hostile `dir:` implementation: one misbehaviour per mode, for every request it sees.

    python dir_impl.py MODE ROOT [ELSEWHERE]

Modes: silent (never answers), symlink-passwd / symlink-zero (the reply is a symlink), fifo (the
reply is a FIFO), huge (a sparse reply far over the cap), swap-inbox (at the first request, replaces
ROOT/inbox with a symlink to ELSEWHERE, then stays silent), echo-key (answers ok with the key it finds in the request).
Runs until killed.
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE, ROOT = sys.argv[1], sys.argv[2]
ELSEWHERE = sys.argv[3] if len(sys.argv) > 3 else None
INBOX, OUTBOX = os.path.join(ROOT, "inbox"), os.path.join(ROOT, "outbox")
seen: set[str] = set()

while True:
    try:
        names = [n for n in os.listdir(INBOX) if n.endswith(".json") and not n.startswith(".")]
    except OSError:
        names = []
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        if MODE == "swap-inbox" and not os.path.islink(INBOX):  # after the harness opened it: on the first request
            os.rename(INBOX, INBOX + ".moved")
            os.symlink(ELSEWHERE, INBOX)
        reply = os.path.join(OUTBOX, name.split(".")[0] + ".json")
        if MODE == "symlink-passwd":
            os.symlink("/etc/passwd", reply)
        elif MODE == "symlink-zero":
            os.symlink("/dev/zero", reply)
        elif MODE == "fifo":
            os.mkfifo(reply)
        elif MODE == "huge":
            with open(reply + ".tmp", "wb") as out:
                out.truncate(8 * 1024 * 1024 * 1024)
            os.replace(reply + ".tmp", reply)
        elif MODE == "echo-key":
            with open(os.path.join(INBOX, name), "rb") as fh:
                request = fh.read().decode("utf-8", "replace")
            key = os.environ.get("MEMCONFORM_CANARY", "")
            with open(reply + ".tmp", "w") as out:
                json.dump({"status": "ok", "body": {"seen": request[:2000], "key": key, "auth": f"Bearer {key}"}}, out)
            os.replace(reply + ".tmp", reply)
    time.sleep(0.02)
