"""memconform as the supervisor of last resort of every `cmd:` call.

Where a PID namespace can be had (probed once per run: `namespace_probe`), each call's command runs
in one of its own (supervise.py), cannot see or signal memconform or the supervisor, and every
process of it is below the supervisor; the sweep below is then a second, verifying pass. Elsewhere:
The per-call supervisor (supervise.py) ends the command's tree, but the command can kill or stop
it (it is the command's parent, same user). So memconform itself is a child subreaper (Linux
prctl PR_SET_CHILD_SUBREAPER): whatever the command leaves when its supervisor is gone is
re-parented to memconform, not to init, and after every call memconform kills what belongs to the
call and reaps it. A process belongs to the call when it is the supervisor or below it, or is
memconform's own descendant and carries the call's token in its environment, or sits in the
command's process group or the supervisor's session, or was adopted by memconform during the call
(a direct child started after the call's supervisor that is no running call's supervisor; memconform
starts no other process, but a program embedding it that starts processes from another thread
while a `cmd:` call runs would see them ended too). Only that is verified and reported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from .supervise import Proc, below, process_table

TOKEN_VARIABLE = "MEMCONFORM_CALL"
SWEEP_ROUNDS = 200
_SUBREAPER: list[bool] = []
_NAMESPACE: list[str] = []  # "pid-namespace", or "no: why not", probed once per process
_HIDE: list[str] = []  # "hidden", or "no: why not": whether a folder can be hidden from the command
PROBE_TIMEOUT_S = 10.0
SUPERVISOR = Path(__file__).with_name("supervise.py")
CONTAINMENT_VARIABLE = "MEMCONFORM_CONTAINMENT"  # "subreaper": no PID namespace even where one can be had


def become_subreaper() -> bool:
    """Make this process a child subreaper, once per process; whether it is one."""
    if not _SUBREAPER:
        from .supervise import become_subreaper as prctl_subreaper

        _SUBREAPER.append(prctl_subreaper())
    return _SUBREAPER[0]


# the supervisors of the calls running now (calls may run in parallel threads): an orphan that
# came to memconform during a call is that call's unless it is one of these. STARTING is held while a
# supervisor is started and registered, and while a sweep looks for adopted orphans, so no sweep
# mistakes a supervisor started a moment ago for an orphan.
LIVE_SUPERVISORS: set[int] = set()
STARTING = threading.Lock()


def carries(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return token in fh.read(1 << 20).split(b"\0")
    except OSError:
        return False


@dataclass
class Call:
    """What identifies one call's processes: its supervisor, the command's group, the call's token."""

    supervisor: int
    token: str
    command: int | None = None  # the command's pid = its process group (the supervisor reports it)
    since: int = 0  # the supervisor's start (clock ticks): orphans adopted since then may be the call's

    def members(self, table: dict[int, Proc]) -> set[int]:
        me = os.getpid()
        mine = below(table, me)
        found = {self.supervisor} & set(table) | below(table, self.supervisor)
        tagged = f"{TOKEN_VARIABLE}={self.token}".encode()
        for pid in mine - found:
            proc = table[pid]
            if (self.command is not None and proc.pgid == self.command) or proc.sid == self.supervisor \
                    or carries(pid, tagged):
                found.add(pid)
        for orphan in self.adopted(table, me):  # setsid() and a cleared environment leave only this
            found |= {orphan} | below(table, orphan)
        return {pid for pid in found if pid != me}

    def adopted(self, table: dict[int, Proc], me: int) -> list[int]:
        """memconform's direct children started since this call's supervisor that are no call's
        supervisor: what the subreaper adopted (memconform itself starts no other process)."""
        if not self.since:
            return []
        others = LIVE_SUPERVISORS - {self.supervisor}
        return [p.pid for p in table.values()
                if p.ppid == me and p.start >= self.since and p.pid not in others and p.pid != self.supervisor
                and not any(p.pid in below(table, other) for other in others)]


def start_ticks(pid: int) -> int:
    """The start of `pid` in clock ticks after boot (0 when unknown)."""
    proc = process_table_entry(pid)
    return proc.start if proc else 0


def process_table_entry(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    if len(fields) <= 19:
        return None
    return Proc(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(), int(fields[19]))


def sweep(call: Call) -> tuple[int, list[int]]:
    """Kill and reap every process of the call; (how many were killed, the pids still there after)."""
    from .supervise import kill_until_gone

    me = os.getpid()

    def alive() -> list[int]:
        with STARTING:
            table = process_table()
            members = call.members(table)
        return [pid for pid in members if not _reap_if_dead(pid, table[pid], me)]

    return kill_until_gone(alive, SWEEP_ROUNDS)


def _reap_if_dead(pid: int, proc: Proc, me: int) -> bool:
    """True when `pid` is gone for good: a zombie of ours reaped now, or someone else's zombie."""
    if proc.state != "Z":
        return False
    if proc.ppid == me:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
    return True


def stopped(pid: int) -> bool:
    """Whether `pid` is stopped (SIGSTOP, SIGTSTP) or traced: it will not report until woken."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] in (b"T", b"t")


def namespace_probe() -> str:
    """Whether each call's command can run in its own PID namespace here, probed once per process by
    the supervisor itself (`supervise.py --probe`): "pid-namespace", or "no: why not"."""
    if not _NAMESPACE and os.environ.get(CONTAINMENT_VARIABLE, "") == "subreaper":
        _NAMESPACE.append(f"no: {CONTAINMENT_VARIABLE}=subreaper asked for none")
    if not _NAMESPACE:
        try:
            with STARTING:  # started and reaped while no sweep looks: it is no call's adopted orphan
                done = subprocess.run([sys.executable, "-I", "-S", str(SUPERVISOR), "--probe"], stdin=subprocess.DEVNULL,
                                      capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
            answer = done.stdout.decode("utf-8", "replace").strip() or \
                f"no: the probe printed nothing (exit {done.returncode}; {done.stderr[-200:].decode('utf-8', 'replace')})"
        except (OSError, subprocess.TimeoutExpired) as exc:
            answer = f"no: the probe did not run ({type(exc).__name__}: {exc})"
        _NAMESPACE.append(answer)
    return _NAMESPACE[0]


def namespaced() -> bool:
    return namespace_probe() == "pid-namespace"


def hide_probe() -> str:
    """Whether the report folder can be kept out of a `cmd:` command's view here (a mount namespace where
    it is an empty tmpfs the command cannot unmount), probed once per process: "hidden", or "no: why"."""
    if not _HIDE and not namespaced():
        _HIDE.append(f"no: no PID namespace ({namespace_probe().removeprefix('no: ')})")
    if not _HIDE:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="memconform-hide-probe-") as folder:
            Path(folder, "evidence").write_bytes(b"")
            try:
                with STARTING:
                    done = subprocess.run([sys.executable, "-I", "-S", str(SUPERVISOR), "--probe-hide", folder],
                                          stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S,
                                          check=False)
                answer = done.stdout.decode("utf-8", "replace").strip() or f"no: the probe printed nothing (exit {done.returncode})"
            except (OSError, subprocess.TimeoutExpired) as exc:
                answer = f"no: the probe did not run ({type(exc).__name__}: {exc})"
        _HIDE.append(answer)
    return _HIDE[0]


def folder_hidden() -> bool:
    return hide_probe() == "hidden"


def mount_view() -> str:
    """What a `cmd:` command can see of the report folder, as the report header states it."""
    answer = hide_probe()
    if answer == "hidden":
        return "hidden (mount namespace)"
    return f"visible to the command ({answer.removeprefix('no: ')}): a change to it is still detected"


def containment() -> str:
    """What keeps a `cmd:` command's processes in, as the report header states it."""
    answer = namespace_probe()
    if answer == "pid-namespace":
        return answer
    return f"subreaper (the command can signal memconform: no PID namespace here: {answer.removeprefix('no: ')})"


def available() -> bool:
    return sys.platform.startswith("linux") and os.path.isdir("/proc")
