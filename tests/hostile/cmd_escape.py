"""A `cmd:` implementation that attacks its supervisor, or leaks the key in other forms.

    python cmd_escape.py MODE TRACK_DIR {op} {input} {output}

Every process it leaves carries "memconform-hostile-<track>" in its command line (see
tests/test_process_hostile.py `survivors`), and some clear their environment and start their own
session first, so only the process tree, not a variable or a group, ties them to the call.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import urllib.parse

MODE, TRACK, OP, INPUT, OUTPUT = sys.argv[1:6]
TOKEN = "memconform-hostile-" + os.path.basename(os.path.abspath(TRACK))
KEY = os.environ.get("MEMCONFORM_API_KEY", "")


def stray(setsid: bool, clear_env: bool) -> None:
    """A double-forked sleeper that tries to outlive the call."""
    if os.fork():
        return
    if setsid:
        os.setsid()
    if os.fork():
        os._exit(0)
    env = {} if clear_env else dict(os.environ)
    os.execve(sys.executable, [sys.executable, "-c", f"import time; time.sleep(120)  # {TOKEN}"], env)


def spawn_strays() -> None:
    stray(setsid=False, clear_env=False)
    stray(setsid=True, clear_env=False)
    stray(setsid=True, clear_env=True)  # no group, no session, no variable: only the adoption ties it
    time.sleep(0.2)  # the strays are on their own before the supervisor is attacked


if MODE == "kill-supervisor":  # kill what supervises it, leaving strays behind, then hang
    spawn_strays()
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(120)
elif MODE == "stop-supervisor":  # freeze what supervises it, leaving strays behind, then hang
    spawn_strays()
    os.kill(os.getppid(), signal.SIGSTOP)
    time.sleep(120)
elif MODE == "stop-self":  # strays, then stopped: never exits by itself
    spawn_strays()
    os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(120)
elif MODE == "flood-forever":  # stdout without end, never exits
    chunk = b"y" * 65536
    while True:
        os.write(1, chunk)
elif MODE == "echo-key-encoded":  # the key url-encoded, JSON-escaped, \\u-escaped and cut in the middle
    forms = [urllib.parse.quote(KEY, safe=""), urllib.parse.quote(KEY, safe="").lower(), urllib.parse.quote_plus(KEY),
             json.dumps(KEY)[1:-1].replace("/", "\\/"), "".join(f"\\u{ord(c):04x}" for c in KEY)]
    noise = "z" * 5000
    # stderr: the key's tail right where a bounded tail would start, its head at the end
    sys.stderr.write(noise + KEY + noise[:290] + " " + " ".join(forms) + " " + KEY[:len(KEY) // 2 + 8])
    with open(OUTPUT, "w") as out:
        out.write('{"error": "' + " ".join(forms).replace("\\", "\\\\") + '", "echo": "' + KEY[5:] + '"}')
    sys.exit(7)
else:
    sys.exit(99)
