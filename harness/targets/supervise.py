"""The per-call supervisor of a `cmd:` target: no process the command starts outlives the call.

Run as `python -I -S supervise.py TIMEOUT_S STATUS_FD [--gate DIR] [--namespace [--hide DIR]...] -- ARGV...` (stdlib
only: it runs isolated), or `supervise.py --probe` to learn whether a PID namespace can be had here (`--probe-hide
DIR`: whether a folder can be hidden from the command). With --gate DIR the command, forked, execs only when a start
gate opens (targets/gate.py).

With --hide (inside the user namespace only) the supervisor also takes a mount namespace where each DIR (the run's
report folder and the folder it writes into) is an empty read-only tmpfs, and the command runs in one more user and
mount namespace, where those mounts are locked: it can neither read, write nor unmount its way to the run's
evidence. A folder that cannot be hidden is a start error, never a call run with the folder in view.

Without --namespace it makes itself a child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER), so descendants that
double-fork or call setsid() are re-parented to it instead of init; it starts the command in its own process group;
when the command exits, or TIMEOUT_S passes, or the harness sends SIGTERM, it kills the command's group and every
descendant it can find, reaps them all, and writes one JSON line to STATUS_FD: {"code", "timed_out", "start_error",
"subreaper", "namespace", "killed", "left"}. The command runs as the same user as this supervisor and memconform, so
it can signal both.

With --namespace it first enters a new user namespace mapping its own user to root there and a new PID namespace
(unshare(2) through ctypes; root where user namespaces are refused: the PID namespace alone) and forks the
namespace's init, which starts the command and ends the call as above. The command then sees and can signal no
process outside the namespace (this supervisor, memconform and the test runner included); the init ignores every
signal sent from inside that it has no handler for, SIGKILL and SIGSTOP included; when the init dies the kernel
kills every process in the namespace, so nothing escapes. If the namespace cannot be entered after all, the call
runs without it and "namespace" in the status line says why.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG = 36, 1
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNS = 0x10000000, 0x20000000, 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 0x4000, 0x40000
HIDDEN: list[str] = []  # folders this call's command must not see (mounted over in its mount namespace)
GATE: list[str] = []  # a start gate's folder (targets/gate.py): the command execs when the harness opens it
KILL_ROUNDS, KILL_PAUSE_S = 300, 0.005


class Stop(Exception):
    pass


def _on_term(signum: int, frame: object) -> None:
    raise Stop()


def _libc() -> object | None:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (OSError, ImportError):
        return None


def become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = _libc()
    try:
        return libc is not None and int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0  # type: ignore[attr-defined]
    except AttributeError:
        return False


def enter_pid_namespace() -> str | None:
    """Make this process's next child the init of a new PID namespace; None when done, else why not. A new user
    namespace comes first, where this process's user is mapped to root (as `unshare --user --map-root-user --pid`): the
    command then holds no capability over any process outside, even where memconform runs as root (which could otherwise
    reach them through /proc). Root, where user namespaces are not allowed, takes the PID namespace alone."""
    if not sys.platform.startswith("linux"):
        return f"not Linux ({sys.platform})"
    libc = _libc()
    if libc is None or not hasattr(libc, "unshare"):
        return "unshare(2) is not reachable through ctypes"
    import ctypes

    uid, gid = os.geteuid(), os.getegid()
    if int(libc.unshare(CLONE_NEWUSER)) != 0:  # type: ignore[attr-defined]
        why = f"unshare(CLONE_NEWUSER) failed: {os.strerror(ctypes.get_errno())}"
        if uid == 0 and int(libc.unshare(CLONE_NEWPID)) == 0:  # type: ignore[attr-defined]
            return None
        return why
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    except OSError as exc:
        return f"the new user namespace could not map this user: {exc}"
    if int(libc.unshare(CLONE_NEWPID)) != 0:  # type: ignore[attr-defined]
        return f"unshare(CLONE_NEWPID) failed in a new user namespace: {os.strerror(ctypes.get_errno())}"
    return None


def in_user_namespace() -> bool:
    """Whether this process runs in a user namespace of its own (its uid map is not the whole range)."""
    try:
        with open("/proc/self/uid_map") as fh:
            return fh.read().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


def hide(paths: list[str]) -> str | None:
    """A mount namespace of this process where each of `paths` is an empty read-only tmpfs; None when
    done, else why not. Only inside a user namespace: the command then runs in one more (nest()), where
    these mounts are locked to their parents and cannot be unmounted to show what they cover."""
    if not paths:
        return None
    if not in_user_namespace():
        return "no user namespace here (a command running as root could unmount what hides the folder)"
    libc = _libc()
    if libc is None or not hasattr(libc, "mount"):
        return "mount(2) is not reachable through ctypes"
    import ctypes

    if int(libc.unshare(CLONE_NEWNS)) != 0:  # type: ignore[attr-defined]
        return f"unshare(CLONE_NEWNS) failed: {os.strerror(ctypes.get_errno())}"
    if int(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None)) != 0:  # type: ignore[attr-defined]
        return f"the mount namespace could not be made private: {os.strerror(ctypes.get_errno())}"
    for path in paths:
        flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
        if int(libc.mount(b"memconform-hidden", os.fsencode(path), b"tmpfs", flags, b"size=4k,mode=0")) != 0:  # type: ignore[attr-defined]
            return f"mounting over {path} failed: {os.strerror(ctypes.get_errno())}"
    HIDDEN.extend(paths)
    return None


def nest() -> None:
    """In the command's process before exec: one more user and mount namespace, so the mounts that hide
    the report folder come to it locked (the kernel refuses to unmount them from a less privileged one)."""
    libc = _libc()
    if libc is None:
        raise OSError("no libc: cannot lock the mounts that hide the report folder")
    import ctypes

    if int(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS)) != 0:  # type: ignore[attr-defined]
        raise OSError(f"unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: {os.strerror(ctypes.get_errno())}")
    for name, text in (("uid_map", "0 0 1"), ("gid_map", "0 0 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def die_with_parent() -> None:
    libc = _libc()
    try:
        if libc is not None:
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)  # type: ignore[attr-defined]
    except AttributeError:
        pass


# the process table, one scan for the supervisor and for contain.py (this file runs alone, stdlib only)
@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    start: int  # clock ticks after boot


def process_table() -> dict[int, Proc]:
    """Every process visible in /proc (pid, parent, group, session, state)."""
    table: dict[int, Proc] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # the command name may hold spaces and parentheses
        if len(fields) > 19:
            table[int(name)] = Proc(int(name), int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(),
                                    int(fields[19]))
    return table


def below(table: dict[int, Proc], root: int) -> set[int]:
    """Every process under `root` through the parent links."""
    children: dict[int, list[int]] = {}
    for proc in table.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    out: set[int] = set()
    todo = [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            if kid not in out:
                out.add(kid)
                todo.append(kid)
    return out


def descendants(root: int) -> list[int]:
    """Every process below `root`, found through the parent links in /proc."""
    return sorted(below(process_table(), root))


def kill_until_gone(members: Callable[[], Iterable[int]], rounds: int = KILL_ROUNDS) -> tuple[int, list[int]]:
    """The one kill-and-reap loop (this supervisor's, and memconform's own sweep in contain.py):
    SIGKILL (a stopped process dies too) every pid `members()` names, until it names none.
    `members` reaps what died since it was last asked and names only what still lives; the pid -1
    (every process of a PID namespace but its init) only from that init. (killed, the pids left)."""
    killed: set[int] = set()
    left: list[int] = []
    for _ in range(rounds):
        left = sorted(members())
        if not left:
            return len(killed), []
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(KILL_PAUSE_S)
    return len(killed), left


def reap_children() -> bool:
    """Reap every child that has died; whether any child (living, or an adopted orphan) is left."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def kill_all(group: int) -> tuple[int, int]:
    """Kill the command's group and every descendant until none is left; (killed, left)."""
    me = os.getpid()

    def alive() -> list[int]:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
        # no child at all: every descendant would have been re-parented to us (subreaper), so none is left
        return descendants(me) if reap_children() else []

    killed, left = kill_until_gone(alive)
    return killed, len(left)


def kill_namespace() -> tuple[int, int]:
    """As the init of a PID namespace: kill every other process in it (kill(-1) reaches no process
    outside the namespace) and reap them all (orphans come to the init); (killed, left)."""
    if os.getpid() != 1:  # never kill(-1) outside a namespace of our own
        raise RuntimeError("kill_namespace outside a PID namespace's init")
    reaped = 0

    def alive() -> list[int]:
        nonlocal reaped
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return []
            if pid == 0:
                return [-1]
            reaped += 1

    _, left = kill_until_gone(alive)
    return reaped, len(left)


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
            if HIDDEN:
                nest()
            # the signals Python ignores or handles stay so across exec otherwise (as subprocess resets them)
            for name in ("SIGTERM", "SIGINT", "SIGPIPE", "SIGXFSZ"):
                if hasattr(signal, name):
                    signal.signal(getattr(signal, name), signal.SIG_DFL)
            if GATE:  # a start gate (targets/gate.py): say ready, then wait until the harness holds the FIFO open
                os.close(os.open(os.path.join(GATE[0], "ready-" + os.urandom(8).hex()), os.O_WRONLY | os.O_CREAT | os.O_EXCL))
                os.close(os.open(os.path.join(GATE[0], "release"), os.O_RDONLY))  # returns when the gate opens
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


def run_call(timeout_s: float, status_fd: int, command: list[str], namespace: str | bool) -> dict[str, object]:
    """Start the command, wait for it within TIMEOUT_S (or SIGTERM), end everything it started;
    the status line. `namespace`: True when this process is the init of the call's PID namespace."""
    inside = namespace is True
    status: dict[str, object] = {"code": None, "timed_out": False, "start_error": None,
                                 "subreaper": inside or become_subreaper(), "namespace": namespace,
                                 "killed": 0, "left": 0}
    pid = -1
    try:
        pid, problem = start(command)
        if problem:
            status["start_error"] = problem
        else:
            if not inside:  # the harness sweeps the command's group too (a namespace's pids mean nothing outside)
                try:
                    os.write(status_fd, f"pid {pid}\n".encode())
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
            status["killed"], status["left"] = kill_namespace() if inside else kill_all(pid)
    return status


def report(status_fd: int, status: dict[str, object]) -> None:
    try:
        os.write(status_fd, (to_json(status) + "\n").encode())
    except OSError:
        pass


def run_in_namespace(timeout_s: float, status_fd: int, command: list[str]) -> dict[str, object] | None:
    """Fork the init of a new PID namespace to run the call; None once the init reported itself. When
    the harness sends SIGTERM the init is killed, and with it every process of the namespace."""
    init = os.fork()
    if init == 0:
        die_with_parent()
        # as a namespace's init, a signal from inside reaches it only where it has a handler: keep none
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        inside: str | bool = True if os.getpid() == 1 else f"the child was pid {os.getpid()}, not 1"
        reported = False
        try:
            report(status_fd, run_call(timeout_s, status_fd, command, inside))
            reported = True
        finally:
            os._exit(0 if reported else 1)
    try:
        _, code = os.waitpid(init, 0)
        if os.WIFEXITED(code) and os.WEXITSTATUS(code) == 0:
            return None
        timed_out = False
    except Stop:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            os.kill(init, signal.SIGKILL)  # the kernel kills the whole namespace before the init is reaped
        except ProcessLookupError:
            pass  # the init ended (and reported) just before the SIGTERM came: it is reaped below
        os.waitpid(init, 0)
        timed_out = True
    return {"code": None, "timed_out": timed_out, "start_error": None if timed_out else "the namespace's init died",
            "subreaper": True, "namespace": True, "killed": 0, "left": 0}


def probe() -> int:
    """Whether a PID namespace can be had here: print "pid-namespace", or "no: WHY"."""
    why = enter_pid_namespace()
    if why is None:
        init = os.fork()
        if init == 0:
            os._exit(0 if os.getpid() == 1 else 3)
        _, code = os.waitpid(init, 0)
        if not (os.WIFEXITED(code) and os.WEXITSTATUS(code) == 0):
            why = "a child of the new namespace was not its init"
    print("pid-namespace" if why is None else f"no: {why}", flush=True)
    return 0


def probe_hide(folder: str) -> int:
    """Whether the report folder can be hidden from a command here: print "hidden", or "no: WHY". The
    folder holds a file; a nested command must see the folder empty and fail to unmount what covers it."""
    why = enter_pid_namespace() or hide([folder])
    if why is None:
        child = os.fork()
        if child == 0:
            try:
                nest()
                seen = os.listdir(folder)
                libc = _libc()
                unmounted = libc is not None and int(libc.umount2(os.fsencode(folder), 2)) == 0  # type: ignore[attr-defined]
                os._exit(0 if not seen and not unmounted and not os.listdir(folder) else 3)
            except BaseException:  # noqa: BLE001 - any failure: not hidden
                os._exit(4)
        _, code = os.waitpid(child, 0)
        if not (os.WIFEXITED(code) and os.WEXITSTATUS(code) == 0):
            why = f"the folder was not hidden from a nested command (exit {os.waitstatus_to_exitcode(code)})"
    print("hidden" if why is None else f"no: {why}", flush=True)
    return 0


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--probe"]:
        return probe()
    if argv[1:2] == ["--probe-hide"]:
        return probe_hide(argv[2])
    timeout_s, status_fd = float(argv[1]), int(argv[2])
    split = argv.index("--")
    command, options = argv[split + 1:], argv[3:split]
    hidden = [options[i + 1] for i, word in enumerate(options[:-1]) if word == "--hide"]
    GATE[:] = [options[i + 1] for i, word in enumerate(options[:-1]) if word == "--gate"][:1]
    os.set_inheritable(status_fd, False)
    signal.signal(signal.SIGTERM, _on_term)
    namespace: str | bool = False
    if "--namespace" in options:
        why = enter_pid_namespace()
        if why is None and hidden:
            hidden_why = hide(hidden)
            if hidden_why is not None:  # the run said the folder is hidden: never run the command where it is not
                report(status_fd, {"code": None, "timed_out": False, "start_error": f"cannot hide the report folder: "
                                   f"{hidden_why}", "subreaper": False, "namespace": True, "killed": 0, "left": 0})
                return 0
        if why is None:
            try:
                status = run_in_namespace(timeout_s, status_fd, command)
            except Stop:  # SIGTERM before the init was started: nothing of the command runs
                status = {"code": None, "timed_out": True, "start_error": None, "subreaper": False,
                          "namespace": True, "killed": 0, "left": 0}
            if status is not None:
                report(status_fd, status)
            return 0
        namespace = why
    report(status_fd, run_call(timeout_s, status_fd, command, namespace))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
