"""A hostile `cmd:` implementation: one misbehaviour per mode, the same on every operation.

    python cmd_impl.py MODE TRACK_DIR {op} {input} {output}

Every process it starts writes "<pid> <token>" into TRACK_DIR, so a test can prove none is left
(the token is also in each process's command line, so a reused pid is never mistaken for one).
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE, TRACK, OP, INPUT, OUTPUT = sys.argv[1:6]
TOKEN = "memconform-hostile-" + os.path.basename(os.path.abspath(TRACK))  # unique to the test
KEY = os.environ.get("MEMCONFORM_API_KEY", "")


def track() -> None:
    with open(os.path.join(TRACK, f"{os.getpid()}.pid"), "w") as fh:
        fh.write(f"{os.getpid()} {TOKEN}\n")


def sleeper(setsid: bool, double_fork: bool) -> None:
    """A descendant that tries to outlive the call: optionally its own session, optionally orphaned."""
    pid = os.fork()
    if pid:
        if not double_fork:
            return
        os.waitpid(pid, 0)
        return
    if setsid:
        os.setsid()
    if double_fork and os.fork():
        os._exit(0)
    # re-exec so the token is in the command line (survives pid reuse checks)
    os.execv(sys.executable, [sys.executable, "-c", f"import time; time.sleep(120)  # {TOKEN}"])


track()
if MODE == "hang":
    sleeper(setsid=False, double_fork=False)
    time.sleep(120)
elif MODE == "trickle":  # a byte a second to stdout and into {output}, never done
    with open(OUTPUT, "wb", buffering=0) as out:
        for _ in range(120):
            out.write(b" ")
            sys.stdout.write("{")
            sys.stdout.flush()
            time.sleep(1)
elif MODE == "flood":  # far more stdout and stderr than anyone should keep
    chunk = b"x" * 65536
    for _ in range(4096):  # 256 MiB each
        os.write(1, chunk)
        os.write(2, chunk)
    sys.exit(0)
elif MODE == "fifo":
    os.mkfifo(OUTPUT)
    sys.exit(0)
elif MODE == "symlink-passwd":
    os.symlink("/etc/passwd", OUTPUT)
    sys.exit(0)
elif MODE == "symlink-zero":
    os.symlink("/dev/zero", OUTPUT)
    sys.exit(0)
elif MODE == "huge":  # a sparse file far over the cap: its size must stop the read, not memory
    with open(OUTPUT, "wb") as out:
        out.truncate(8 * 1024 * 1024 * 1024)
    sys.exit(0)
elif MODE == "fork":  # children in the same group, answering at once
    sleeper(setsid=False, double_fork=False)
    sys.exit(7)
elif MODE == "daemon":  # a double-forked child in its own session: escapes any process-group kill
    sleeper(setsid=True, double_fork=True)
    sleeper(setsid=True, double_fork=False)
    sys.exit(7)
elif MODE == "echo-key":
    sys.stderr.write(f"using key {KEY} for {OP}\n")
    sys.stdout.write(f"Authorization: Bearer {KEY}\n")
    with open(OUTPUT, "w") as out:
        json.dump({"error": f"bad key {KEY}", "auth": f"Bearer {KEY}"}, out)
    sys.exit(7)
else:
    sys.exit(99)
