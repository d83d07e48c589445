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


def in_pid_namespace() -> bool:
    """Whether this process runs in a PID namespace of its own: its pid there is not its pid in /proc
    (which shows the pids of the namespace /proc was mounted from)."""
    try:
        return int(os.readlink("/proc/self")) != os.getpid()
    except (OSError, ValueError):
        return False


def attack(pid: int, sig: int) -> None:
    """Signal `pid`, noting in the track folder whether the signal was delivered."""
    try:
        os.kill(pid, sig)
        result = "sent"
    except OSError as exc:
        result = f"refused {exc.errno}"
    with open(os.path.join(TRACK, "attacks.log"), "a") as log:
        log.write(f"{pid} {int(sig)} {result}\n")


def host_ancestors() -> list[int]:
    """The pids above this process as /proc shows them, up to (without) the test runner's pid."""
    with open(os.path.join(TRACK, "ceiling")) as fh:
        ceiling = int(fh.read())
    chain, pid = [], int(os.readlink("/proc/self"))
    while True:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        pid = int(stat[stat.rfind(b")") + 2:].split()[1])
        if pid <= 1 or pid == ceiling:
            return chain
        chain.append(pid)


def refuse_outside_a_namespace() -> None:
    """The attacks below would stop or kill the test runner's own ancestors without a namespace."""
    if not in_pid_namespace():
        with open(os.path.join(TRACK, "attacks.log"), "a") as log:
            log.write("refused: not in a PID namespace\n")
        sys.exit(98)


if MODE == "kill-parent-chain":  # stop, then kill, every process above it that /proc shows
    refuse_outside_a_namespace()
    spawn_strays()
    for target in [os.getppid(), *host_ancestors()]:
        attack(target, signal.SIGSTOP)
        attack(target, signal.SIGKILL)
    time.sleep(0.2)
    sys.exit(7)
elif MODE == "kill-ppid-repeatedly":  # whoever becomes its parent is stopped and killed, again and again
    refuse_outside_a_namespace()
    spawn_strays()
    for _ in range(50):
        attack(os.getppid(), signal.SIGSTOP)
        attack(os.getppid(), signal.SIGKILL)
        attack(-1, signal.SIGKILL)  # every process it may signal
    sys.exit(7)
elif MODE == "fork-setsid-and-exit":  # forks, double-forks and setsid()s, then exits at once leaving them
    spawn_strays()
    for _ in range(5):
        if os.fork() == 0:
            os.setsid()
            spawn_strays()
            os._exit(0)
    sys.exit(7)
elif MODE == "kill-supervisor":  # kill what supervises it, leaving strays behind, then hang
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
