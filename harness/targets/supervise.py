"""The per-call supervisor of a `cmd:` target: no process the command starts outlives the call.

Run as `python -I -S supervise.py TIMEOUT_S STATUS_FD -- ARGV...` (stdlib only: it runs isolated).
It makes itself a child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER), so descendants that
double-fork or call setsid() are re-parented to it instead of init; it starts the command in its
own process group; when the command exits, or TIMEOUT_S passes, or the harness sends SIGTERM, it
kills the command's group and every descendant it can find, reaps them all, and writes one JSON
line to STATUS_FD: {"code", "timed_out", "start_error", "subreaper", "killed", "left"}.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS = 300


class Stop(Exception):
    pass


def _on_term(signum: int, frame: object) -> None:
    raise Stop()


def become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every process below `root`, found through the parent links in /proc."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: the fields start after the last ')'
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    out: list[int] = []
    todo = [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            out.append(kid)
            todo.append(kid)
    return out


def kill_all(group: int) -> tuple[int, int]:
    """Kill the command's group and every descendant until none is left; (killed, left)."""
    me = os.getpid()
    killed: set[int] = set()
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(-1, os.WNOHANG)  # (0, 0): children left (the command, or orphans we adopted): hunt them below
    except ChildProcessError:
        return 0, 0  # no child at all: every descendant would have been re-parented to us, so none is left
    for _ in range(KILL_ROUNDS):
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
        for pid in descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        while True:  # reap whatever died (our own children and adopted orphans)
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return len(killed), 0
            if pid == 0:
                break
        time.sleep(0.005)
    return len(killed), len(descendants(me))


def wait_for(pid: int, deadline: float) -> int | None:
    """The command's exit status, or None when the deadline passed first."""
    fd = -1
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pass
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if fd >= 0:
                select.select([fd], [], [], left)
            else:
                time.sleep(min(0.02, left))
    finally:
        if fd >= 0:
            os.close(fd)


def start(argv: list[str]) -> tuple[int, str | None]:
    """Fork and exec the command in its own process group; an exec failure comes back as text."""
    err_r, err_w = os.pipe()  # close-on-exec: EOF without data means exec succeeded
    pid = os.fork()
    if pid == 0:
        try:
            os.close(err_r)
            os.setpgid(0, 0)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.execvp(argv[0], argv)
        except BaseException as exc:  # noqa: BLE001 - anything is a start failure, reported and exited
            try:
                os.write(err_w, f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")[:500])
            finally:
                os._exit(127)
    os.close(err_w)
    chunks = []
    while True:
        chunk = os.read(err_r, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(err_r)
    message = b"".join(chunks).decode("utf-8", "replace")
    return pid, message or None


def to_json(status: dict[str, object]) -> str:
    """The status line without importing json (its import costs more than the rest of this program)."""
    def value(v: object) -> str:
        if v is None or isinstance(v, bool):
            return {None: "null", True: "true", False: "false"}[v]
        if isinstance(v, int):
            return str(v)
        text = "".join(ch if " " <= ch <= "~" and ch not in '"\\' else "?" for ch in str(v))
        return f'"{text}"'
    return "{" + ", ".join(f'"{k}": {value(v)}' for k, v in status.items()) + "}"


def main(argv: list[str]) -> int:
    timeout_s, status_fd = float(argv[1]), int(argv[2])
    command = argv[argv.index("--") + 1:]
    os.set_inheritable(status_fd, False)
    signal.signal(signal.SIGTERM, _on_term)
    status: dict[str, object] = {"code": None, "timed_out": False, "start_error": None,
                                 "subreaper": become_subreaper(), "killed": 0, "left": 0}
    pid = -1
    try:
        pid, problem = start(command)
        if problem:
            status["start_error"] = problem
        else:
            try:
                os.write(status_fd, f"pid {pid}\n".encode())  # the harness sweeps the command's group too
            except OSError:
                pass
            code = wait_for(pid, time.monotonic() + timeout_s)
            if code is None:
                status["timed_out"] = True
            else:
                status["code"] = os.waitstatus_to_exitcode(code)
    except Stop:
        status["timed_out"] = True
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish the cleanup whatever the harness sends
        if pid > 0:
            status["killed"], status["left"] = kill_all(pid)
        try:
            os.write(status_fd, (to_json(status) + "\n").encode())
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
