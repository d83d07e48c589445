"""Command targets: one process per operation, files in and out, every process of the call ended after it.

Protocol (see README "Target protocols"):
    cmd:TEMPLATE        e.g.  cmd:mytool {op} --in {input} --out {output}
    cmd:@FILE.json      {"ops": {"export": "tmpl", "import": "tmpl"}, "default": "tmpl", "timeout_s": 30}
Placeholders: {op}, {input} (a file holding the request JSON or document), {output} (where the
command writes its reply JSON), {workdir} (a private folder for this call).

Working folder: every call runs in a fresh private temporary folder ({workdir}, removed after the
call), never in the folder memconform was started from. So that `cmd:./impl.sh {op}` or
`cmd:python impl.py ...` still work, relative paths in the template are resolved against the
caller's folder when the target is opened: the program when it names a path (holds a `/`), and
every other word that looks like a path (holds a `/` or a `.`) and names an existing file or folder
there (a bare word such as a subcommand is left alone). `@FILE` is read relative to it too.

Exit codes: 0 done, 3 rejected (the reply may still hold a report), 4 operation not offered;
anything else, or a timeout, is the target erroring. A command that cannot start at all (program
not found or not executable, a template that does not parse) is one start-up error (exit 2).

Start gates (gate.py): calls made inside a StartGate's `entered()` exec their commands together, when
the gate opens, instead of one after the other as their supervisors start.

Bounds: a call is given the target's timeout_s (default: the call deadline), never past the run
deadline, after which every call errors at once. Each call runs under a small supervisor (supervise.py);
where the platform allows, the command runs in its own PID namespace (probed once per run; the
report header says which containment was used), so it can neither see nor signal memconform or its
supervisor, and nothing in the namespace outlives its init. Elsewhere the supervisor is a child
subreaper and memconform too (contain.py). Either way, when the call ends (normally or by timeout)
the command's process group and every descendant, those that double-fork or call setsid() included,
are killed. stdout and stderr are drained into bounded
buffers (the first CAPTURE_BYTES kept, the rest counted). {output} is read only when it is a
regular file inside the work folder (opened relative to the folder, O_NOFOLLOW, never a FIFO,
device or symlink), with the byte cap counted while reading.
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from ..core.profile import Limits
from ..core.results import HarnessError, TargetError, Unsupported
from .base import Reply, Request, Target, parse_json
from .contain import (
    LIVE_SUPERVISORS,
    STARTING,
    SUPERVISOR,
    TOKEN_VARIABLE,
    Call,
    become_subreaper,
    folder_hidden,
    namespaced,
    start_ticks,
    stopped,
    sweep,
)
from .gate import ACTIVE as ACTIVE_GATE
from .safefile import read_regular
from .templates import program_problem, resolve_template

EXIT_OK, EXIT_REJECTED, EXIT_UNSUPPORTED = 0, 3, 4
CAPTURE_BYTES = 64 * 1024
GRACE_S = 5.0  # beyond the command's timeout, for the supervisor to end and reap everything


class Captured:
    """One output stream of a command: the first `cap` bytes and the last TAIL_BYTES kept, the total counted.
    With a `secret`, the stream is redacted before it is bounded: no cut can fall inside the secret
    (the last len(secret) - 1 bytes wait until the next chunk shows whether the secret goes on)."""

    TAIL_BYTES = 4096
    MASK = b"***"

    def __init__(self, cap: int = CAPTURE_BYTES, secret: str | None = None) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = b""
        self.total = 0
        self.secret = secret.encode("utf-8") if secret else b""
        self.pending = b""

    def add(self, chunk: bytes) -> None:
        if self.secret:
            chunk = self._redacted(self.pending + chunk)
        self._keep(chunk)

    def _redacted(self, data: bytes) -> bytes:
        data = data.replace(self.secret, self.MASK)
        hold = len(self.secret) - 1
        self.pending = data[-hold:] if hold and len(data) > hold else (data if hold else b"")
        return data[: len(data) - len(self.pending)]

    def finish(self) -> None:
        """The stream ended: what was held back is kept too."""
        pending, self.pending = self.pending, b""
        self._keep(pending)

    def _keep(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.tail = (self.tail + chunk[-self.TAIL_BYTES:])[-self.TAIL_BYTES:]

    def tail_text(self, limit: int = 300) -> str:
        """The end of the stream (where an error message usually is), saying how much was not kept."""
        text = self.tail[-limit:].decode("utf-8", "replace")
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped > 0:
            text = f"[{dropped} bytes not kept] ..." + text
        return text


class CommandTarget(Target):
    kind = "cmd"
    start_gates = True  # a call made inside a StartGate's `entered()` execs its command when the gate opens

    def __init__(self, spec: str, limits: Limits, api_key: str | None = None, cwd: Path | None = None) -> None:
        self.limits = limits
        self.api_key = api_key
        self.base = (cwd or Path.cwd()).resolve()
        self.templates: dict[str, str] = {}
        self.default_template: str | None = None
        self.timeout_s = limits.call_deadline_s
        if spec.startswith("@"):
            path = self.base / spec[1:]
            try:
                config = json.loads(path.read_text(encoding="utf-8"))
                self.templates = {str(k): str(v) for k, v in dict(config.get("ops", {})).items()}
                self.default_template = config.get("default")
                self.timeout_s = float(config.get("timeout_s", self.timeout_s))
            except (OSError, ValueError, TypeError, AttributeError) as exc:
                raise HarnessError(f"cannot read the command target file {path}: {exc}") from None
        else:
            self.default_template = spec
        if not self.templates and not self.default_template:
            raise HarnessError("a cmd: target needs a command template")
        self.templates = {op: resolve_template(t, self.base) for op, t in self.templates.items()}
        if self.default_template:
            self.default_template = resolve_template(self.default_template, self.base)
        self.description = "cmd:" + spec
        self.last_stderr = ""
        self.hidden: tuple[Path, ...] = ()  # folders the command must not see (the run's report folder)

    def preflight(self) -> None:
        for template in {*self.templates.values(), *([self.default_template] if self.default_template else [])}:
            problem = program_problem(shlex.split(template)[0])
            if problem:
                raise HarnessError(f"the cmd: target cannot start: {problem} (template {template!r})")

    def send(self, request: Request) -> Reply:
        op = request.op
        body = request.body
        params = dict(request.params) if request.params else None
        raw = request.raw
        filename = request.filename
        template = self.templates.get(op, self.default_template)
        if template is None:
            raise Unsupported(op, "no command template for it")
        timeout_s = self.clock.left(op, self.timeout_s)
        with tempfile.TemporaryDirectory(prefix="memconform-cmd-", ignore_cleanup_errors=True) as workdir:
            work = Path(workdir)
            dir_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                return self._call_in(op, template, work, dir_fd, body, params, raw, filename, timeout_s)
            finally:
                os.close(dir_fd)

    def _call_in(
        self, op: str, template: str, work: Path, dir_fd: int, body: Any,
        params: dict[str, str] | None, raw: bytes | None, filename: str | None, timeout_s: float,
    ) -> Reply:
        input_name = Path(filename).name if filename and Path(filename).name not in ("", ".", "..") else "input.json"
        if input_name == "output.json":
            input_name = "input-output.json"
        request = raw if raw is not None else json.dumps(
            body if body is not None else (params or {}), ensure_ascii=False
        ).encode("utf-8")
        (work / input_name).write_bytes(request)
        values = {"op": op, "input": str(work / input_name), "output": str(work / "output.json"), "workdir": str(work)}
        argv = [token.format(**values) for token in shlex.split(template)]
        env = dict(os.environ)
        env["MEMCONFORM_OP"] = op
        for key, value in (params or {}).items():
            env[f"MEMCONFORM_PARAM_{key.upper()}"] = str(value)
        if self.api_key:
            env["MEMCONFORM_API_KEY"] = self.api_key
        started = time.monotonic()
        status, stdout, stderr = self._supervised(argv, work, env, timeout_s)
        elapsed = time.monotonic() - started
        self.last_stderr = stderr.tail_text()
        if status.get("start_error"):
            raise TargetError(f"{op}: cannot start {argv[0]!r}: {status['start_error']}")
        if status.get("timed_out"):
            self.clock.timed_out(f"{op} (command)")
            if status.get("supervisor_lost"):
                raise TargetError(f"{op}: the command did not let its supervisor report; {self._ended_text(status)}")
            bound = self.clock.cut_short(started + timeout_s, self.timeout_s)
            raise TargetError(f"{op}: command did not finish within {timeout_s:.3g}s (bounded by {bound}); "
                              f"{self._ended_text(status)}")
        if status.get("left_pids"):
            raise TargetError(f"{op}: {self._ended_text(status)}")
        self.clock.answered()
        code = status.get("code")
        if code == EXIT_UNSUPPORTED:
            raise Unsupported(op, "command exited 4")
        if code not in (EXIT_OK, EXIT_REJECTED):
            raise TargetError(f"{op}: command exited {code}; stderr: {stderr.tail_text()!r}")
        out = read_regular(dir_fd, "output.json", self.limits.max_response_bytes, what=f"{op}: {{output}}")
        reply = Reply(status="ok" if code == EXIT_OK else "rejected", raw=out or b"", elapsed_s=elapsed)
        if out:  # strict and bounded; not JSON: checks that need JSON say so via Reply.json(), parsing no more
            reply.body, reply.parse_error = parse_json(out)
        return reply

    def _supervised(self, argv: list[str], work: Path, env: dict[str, str], timeout_s: float) -> tuple[dict[str, Any], Captured, Captured]:
        """Run argv under the supervisor; drain its output within the deadline; its status line. Whatever
        happens to the supervisor, memconform then ends every process of the call itself (contain.py)."""
        become_subreaper()
        in_namespace = ["--namespace"] if namespaced() else []  # probed (once) before STARTING is held
        if in_namespace and self.hidden and folder_hidden():
            in_namespace += [word for path in self.hidden if path.is_dir() for word in ("--hide", str(path.resolve()))]
        gate = ACTIVE_GATE.get()
        gated = ["--gate", str(gate.folder)] if gate is not None else []
        token = uuid.uuid4().hex
        env = {**env, TOKEN_VARIABLE: token}
        status_r, status_w = os.pipe()
        try:
            with STARTING:  # registered before any sweep of a parallel call can see it
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(SUPERVISOR), repr(timeout_s), str(status_w),
                     *gated, *in_namespace, "--", *argv],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    cwd=work, env=env, start_new_session=True, pass_fds=(status_w,),
                )
                LIVE_SUPERVISORS.add(proc.pid)
        except OSError as exc:
            os.close(status_r)
            raise TargetError(f"cannot start the command supervisor: {exc}") from None
        finally:
            os.close(status_w)
        call = Call(supervisor=proc.pid, token=token, since=start_ticks(proc.pid))
        stdout, stderr, status_buf = Captured(secret=self.api_key), Captured(secret=self.api_key), Captured(4096)
        try:
            lost = self._drain(proc, status_r, stdout, stderr, status_buf, call, time.monotonic() + timeout_s + GRACE_S)
        finally:
            self._end(proc)
            killed, left = sweep(call)
            LIVE_SUPERVISORS.discard(proc.pid)
            stdout.finish()
            stderr.finish()
        status = _status_of(bytes(status_buf.head))
        status["swept"], status["left_pids"] = killed, left
        if lost or not status:
            status.update(timed_out=True, supervisor_lost=True)  # it never reported: the call did not finish
        return status, stdout, stderr

    def _drain(self, proc: subprocess.Popen[bytes], status_r: int, stdout: Captured, stderr: Captured,
               status_buf: Captured, call: Call, deadline: float) -> bool:
        """Read the command's output and the supervisor's status until the supervisor reports, is lost
        (killed or stopped by the command) or the deadline passes; whether it was lost."""
        status_file = os.fdopen(status_r, "rb", buffering=0)
        streams: dict[Any, Captured] = {proc.stdout: stdout, proc.stderr: stderr, status_file: status_buf}
        lost = False
        try:
            with selectors.DefaultSelector() as sel:
                for stream in streams:
                    os.set_blocking(stream.fileno(), False)
                    sel.register(stream, selectors.EVENT_READ)
                while sel.get_map() and time.monotonic() < deadline:
                    for key, _ in sel.select(timeout=max(0.0, min(0.2, deadline - time.monotonic()))):
                        try:
                            chunk = os.read(key.fd, 65536)
                        except BlockingIOError:
                            continue
                        if chunk:
                            streams[key.fileobj].add(chunk)
                            continue
                        sel.unregister(key.fileobj)
                        if key.fileobj is status_file:
                            # the supervisor is done, or gone without a word: only an escaped process
                            # could hold the other pipes open now
                            lost = not _status_of(bytes(status_buf.head))
                            deadline = min(deadline, time.monotonic() + 0.5)
                    call.command = call.command or _command_pid(bytes(status_buf.head))
                    if not lost and stopped(proc.pid):
                        lost = True  # stopped by the command: it will never report
                        deadline = time.monotonic()
        finally:
            for stream in (proc.stdout, proc.stderr, status_file):
                if stream is not None:
                    stream.close()
        return lost

    @staticmethod
    def _end(proc: subprocess.Popen[bytes]) -> None:
        """The supervisor has reported (or overrun, or was stopped): make sure it and its group are gone."""
        try:
            proc.wait(timeout=0.5)
            return
        except subprocess.TimeoutExpired:
            pass
        if not stopped(proc.pid):
            proc.send_signal(signal.SIGTERM)  # the supervisor kills the command's whole tree, then exits
            try:
                proc.wait(timeout=GRACE_S)
                return
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # a stopped supervisor dies too; its tree is swept after
        except OSError:
            pass
        proc.wait()

    @staticmethod
    def _ended_text(status: dict[str, Any]) -> str:
        """What was verified about the call's processes after it (never more)."""
        lost = ("the command killed or stopped its supervisor, so memconform ended the call's processes itself; "
                if status.get("supervisor_lost") else "")
        left = status.get("left_pids") or []
        if left:
            return f"{lost}{len(left)} process(es) of the call could not be ended (pids {left[:10]})"
        return f"{lost}it and every process it started were killed (checked after the call: none is left)"


def _status_of(head: bytes) -> dict[str, Any]:
    """The supervisor's final JSON status line ({} when it never wrote one)."""
    for line in head.splitlines():
        if line.startswith(b"{"):
            try:
                status = json.loads(line)
            except ValueError:
                return {}
            return status if isinstance(status, dict) else {}
    return {}


def _command_pid(head: bytes) -> int | None:
    """The command's pid (= its process group), which the supervisor writes first: `pid N`."""
    for line in head.splitlines():
        if line.startswith(b"pid ") and line[4:].isdigit():
            return int(line[4:])
    return None
