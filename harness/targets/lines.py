"""Long-lived command targets: one process for the whole run, one JSON line per request and per reply.

    cmd-lines:TEMPLATE      e.g.  cmd-lines:mytool serve --stdio

A product whose start is slow (a JVM, a model loaded, a database opened) pays it once per run
instead of once per operation, as Bowtie's harnesses do for JSON Schema validators. memconform
starts the command when the target is opened, then speaks over its stdin and stdout, one JSON
object per line, each answered by one line (stdout is the protocol: logs go to stderr):

    -> {"cmd": "start", "version": 1}
    <- {"ready": true, "version": 1}                       (anything else: the run cannot start, exit 2)
    -> {"cmd": "call", "seq": 7, "op": "export", "body": {...}, "params": {...}}
         (+ "raw": base64 of bytes sent as they are, "filename": their name, when a check sends raw bytes)
    <- {"seq": 7, "status": "ok" | "rejected" | "unsupported", "body": <the reply JSON>}
       (or "raw": base64 of a reply that is not JSON, such as text or JSON Lines; "content_type" optional)
       ("status": "error", "message": "...": the implementation failed this call; the run goes on, the call errors)
    -> {"cmd": "stop"}                                      (then stdin closes; the command should exit)

Bounds, as `cmd:` (command.py, whose supervisor and containment this reuses): the command runs under
supervise.py, in its own PID namespace where one can be had (else memconform and the supervisor are
child subreapers), with the API key in MEMCONFORM_API_KEY and in a fresh private working folder
({workdir} in the template). Each call is given the target's call deadline, never past the run or
check budget; a reply line is read within the reply byte cap (limits.max_response_bytes). A call that
overruns, a reply that is over the cap, not JSON, or for another `seq`, and a command that exits
mid-run leave the protocol out of step: the target is then broken, that call and every later one
error (never a pass), with the end of the command's stderr (secrets masked) in the message. At close
the command is asked to stop, given STOP_GRACE_S, and then it and every process it started are ended
and verified gone (contain.sweep).
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from ..core.profile import Limits
from ..core.results import HarnessError, TargetError, Unsupported
from .base import Reply, Request, Target, parse_json
from .command import (
    CAPTURE_BYTES,
    Captured,
    CommandTarget,
    _command_pid,
    _status_of,
)
from .contain import (
    LIVE_SUPERVISORS,
    STARTING,
    SUPERVISOR,
    TOKEN_VARIABLE,
    Call,
    become_subreaper,
    namespaced,
    start_ticks,
    sweep,
)
from .templates import program_problem, resolve_template

PROTOCOL_VERSION = 1
STOP_GRACE_S = 2.0  # after {"cmd": "stop"}, for the command to exit by itself before it is ended
LONGEST_RUN_S = 7 * 24 * 3600.0  # the supervisor's own deadline when the run has none


class _Broken(Exception):
    """The protocol is out of step (or the command is gone): no later call can be answered."""


class LineCommandTarget(Target):
    kind = "cmd-lines"

    def __init__(self, spec: str, limits: Limits, api_key: str | None = None, cwd: Path | None = None) -> None:
        self.limits = limits
        self.api_key = api_key
        self.template = resolve_template(spec, (cwd or Path.cwd()).resolve())
        for word in shlex.split(self.template):
            try:
                word.format(workdir="")
            except (KeyError, IndexError, ValueError):
                raise HarnessError(f"a cmd-lines: template takes {{workdir}} only (the operation and its input come "
                                   f"over stdin): {spec!r}") from None
        self.description = "cmd-lines:" + spec
        self.timeout_s = limits.call_deadline_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.processes: Call | None = None
        self.workdir: str | None = None
        self.broken: str | None = None
        self.seq = 0
        self.starts = 0  # processes started (one per run)
        self.lock = threading.Lock()
        self.stderr = Captured(secret=api_key)
        self.status = Captured(4096)
        self.pending = bytearray()  # stdout read past the last reply line
        self.status_file: Any = None
        self.left_pids: list[int] = []  # processes of the run found alive after it was ended (none, normally)

    # -- start and stop ------------------------------------------------------------------------
    def preflight(self) -> None:
        problem = program_problem(shlex.split(self.template)[0])
        if problem:
            raise HarnessError(f"the cmd-lines: target cannot start: {problem} (template {self.template!r})")
        with self.lock:
            self._ensure_started()

    def _ensure_started(self) -> None:
        if self.proc is not None or self.broken:
            return
        try:
            self._start()
            hello = self._exchange({"cmd": "start", "version": PROTOCOL_VERSION},
                                   time.monotonic() + self.clock.left("start", self.timeout_s))
        except (_Broken, TargetError) as exc:
            self._break(f"the command did not start: {exc}")
            raise HarnessError(self._with_stderr(f"the cmd-lines: target cannot start: {exc}")) from None
        answer, error = parse_json(hello)
        if error or not isinstance(answer, dict) or answer.get("ready") is not True \
                or answer.get("version") != PROTOCOL_VERSION:
            self._break("the command's start answer was not {\"ready\": true, \"version\": 1}")
            raise HarnessError(self._with_stderr(
                f"the cmd-lines: target cannot start: it answered {hello[:200]!r} to start, not "
                f'{{"ready": true, "version": {PROTOCOL_VERSION}}}'))

    def _start(self) -> None:
        become_subreaper()
        in_namespace = ["--namespace"] if namespaced() else []
        self.workdir = tempfile.mkdtemp(prefix="memconform-lines-")
        argv = [word.format(workdir=self.workdir) for word in shlex.split(self.template)]
        token = uuid.uuid4().hex
        env = {**os.environ, TOKEN_VARIABLE: token}
        if self.api_key:
            env["MEMCONFORM_API_KEY"] = self.api_key
        run_left = min(LONGEST_RUN_S, max(1.0, self.clock.run_end() - time.monotonic()))
        status_r, status_w = os.pipe()
        try:
            with STARTING:
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(SUPERVISOR), repr(run_left), str(status_w), *in_namespace,
                     "--", *argv],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.workdir,
                    env=env, start_new_session=True, pass_fds=(status_w,))
                LIVE_SUPERVISORS.add(proc.pid)
        except OSError as exc:
            os.close(status_r)
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise TargetError(f"cannot start the command supervisor: {exc}") from None
        finally:
            os.close(status_w)
        self.proc, self.starts = proc, self.starts + 1
        self.processes = Call(supervisor=proc.pid, token=token, since=start_ticks(proc.pid))
        self.status_file = os.fdopen(status_r, "rb", buffering=0)
        for stream in (proc.stdin, proc.stdout, proc.stderr, self.status_file):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)

    def close(self) -> None:
        with self.lock:
            proc, call = self.proc, self.processes
            if proc is None or call is None:
                return
            try:
                if not self.broken:
                    try:  # ask it to stop; it may take STOP_GRACE_S to exit by itself
                        self._exchange({"cmd": "stop"}, time.monotonic() + STOP_GRACE_S, reply=False)
                        self._drain_until_exit(time.monotonic() + STOP_GRACE_S)
                    except (_Broken, TargetError):
                        pass
            finally:
                for stream in (proc.stdin, proc.stdout, proc.stderr, self.status_file):
                    try:
                        if stream is not None:
                            stream.close()
                    except OSError:
                        pass
                CommandTarget._end(proc)  # the supervisor ends the command's tree (SIGTERM, then SIGKILL)
                _, left = sweep(call)  # and memconform verifies none of the run's processes is left
                LIVE_SUPERVISORS.discard(proc.pid)
                self.stderr.finish()
                self.broken = self.broken or "the target was closed"
                self.left_pids = left
                if self.workdir:
                    shutil.rmtree(self.workdir, ignore_errors=True)

    # -- one call -------------------------------------------------------------------------------
    def send(self, request: Request) -> Reply:
        op = request.op
        with self.lock:
            if self.broken:
                raise TargetError(f"{op}: not sent: {self.broken}")
            self.clock.left(op, self.timeout_s)  # a spent budget: this call errors, the command is not started for it
            self._ensure_started()
            timeout_s = self.clock.left(op, self.timeout_s)
            self.seq += 1
            message: dict[str, Any] = {"cmd": "call", "seq": self.seq, "op": op, "body": request.body,
                                       "params": dict(request.params) if request.params else {}}
            if request.raw is not None:
                message["raw"] = base64.b64encode(request.raw).decode("ascii")
            if request.filename:
                message["filename"] = request.filename
            started = time.monotonic()
            try:
                line = self._exchange(message, started + timeout_s)
            except _Broken as exc:
                if "no reply within" in str(exc):
                    self.clock.timed_out(f"{op} (cmd-lines)")
                    bound = self.clock.cut_short(started + timeout_s, self.timeout_s)
                    exc = _Broken(f"{exc} (bounded by {bound})")
                self._break(f"{op}: {exc}")
                raise TargetError(self._with_stderr(f"{op}: {exc}; the command is ended and later calls error")) from None
            return self._reply(op, line, time.monotonic() - started)

    def _reply(self, op: str, line: bytes, elapsed: float) -> Reply:
        answer, error = parse_json(line)
        if error or not isinstance(answer, dict):
            self._break(f"{op}: the reply line was {error or 'not a JSON object'}")
            raise TargetError(self._with_stderr(f"{op}: the reply line is {error or 'not a JSON object'}: {line[:200]!r}"))
        if answer.get("seq") != self.seq:
            self._break(f"{op}: a reply for seq {answer.get('seq')!r} came to seq {self.seq}")
            raise TargetError(f"{op}: the reply is for seq {answer.get('seq')!r}, not {self.seq}: the protocol is out "
                              "of step (the command is ended and later calls error)")
        self.clock.answered()
        status = answer.get("status")
        if status == "unsupported":
            raise Unsupported(op, "the command answered unsupported")
        if status not in ("ok", "rejected"):  # "error" (with a "message"), or anything else: the target erroring
            message = answer.get("message")
            said = f": {message[:500]}" if isinstance(message, str) else ""
            raise TargetError(f"{op}: the command answered status {status!r}{said}")
        said_type = answer.get("content_type")
        content_type = said_type if isinstance(said_type, str) else ""
        if "body" in answer:
            body = answer["body"]
            return Reply(status=status, body=body, raw=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                         elapsed_s=elapsed, content_type=content_type)
        raw = answer.get("raw")
        if raw is None:
            return Reply(status=status, raw=b"", elapsed_s=elapsed, content_type=content_type)
        try:  # a reply that is not JSON (text, JSON Lines), as the product sent it
            data = base64.b64decode(raw, validate=True) if isinstance(raw, str) else None
        except ValueError:
            data = None
        if data is None:
            raise TargetError(f"{op}: the reply's raw is not base64 text")
        reply = Reply(status=status, raw=data, elapsed_s=elapsed, content_type=content_type)
        reply.body, reply.parse_error = parse_json(data) if data else (None, None)
        return reply

    def _exchange(self, message: dict[str, Any], deadline: float, reply: bool = True) -> bytes:
        """Write one request line, then read one reply line (within the cap) by `deadline`."""
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        assert self.proc.stderr is not None
        out = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        cap = self.limits.max_response_bytes
        begun = time.monotonic()
        with selectors.DefaultSelector() as sel:
            sel.register(stdout, selectors.EVENT_READ)
            sel.register(stderr, selectors.EVENT_READ)
            sel.register(self.status_file, selectors.EVENT_READ)
            sel.register(stdin, selectors.EVENT_WRITE)
            while True:
                if not out and not reply:
                    return b""
                end = self.pending.find(b"\n")
                if reply and not out and end >= 0:
                    line = bytes(self.pending[:end])
                    del self.pending[:end + 1]
                    return line
                if len(self.pending) > cap:
                    raise _Broken(f"the reply line is over the cap of {cap} bytes")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Broken(f"no reply within {time.monotonic() - begun:.3g}s"
                                  if reply else "the request could not be written in time")
                for key, _ in sel.select(timeout=min(left, 0.5)):
                    if key.fileobj is stdin:
                        try:
                            written = os.write(stdin.fileno(), out)
                        except BlockingIOError:
                            continue
                        except OSError as exc:  # the command closed its stdin, or is gone
                            raise _Broken(f"the command stopped reading ({exc.strerror})") from None
                        out = out[written:]
                        if not out:
                            sel.unregister(stdin)
                        continue
                    chunk = self._read(key.fileobj, cap)
                    if key.fileobj is stdout:
                        if chunk is None:
                            continue
                        if not chunk:
                            raise _Broken("the command closed its stdout (it exited or crashed)")
                        self.pending += chunk
                    elif key.fileobj is stderr:
                        if chunk:
                            self.stderr.add(chunk)
                        elif chunk == b"":
                            sel.unregister(stderr)
                    elif chunk:
                        self._note_status(chunk)
                        ended = _status_of(bytes(self.status.head))
                        if ended:  # the supervisor reports only once the command is gone
                            raise _Broken(f"the command exited (code {ended.get('code')})")
                    elif chunk == b"":
                        raise _Broken("the command's supervisor is gone")

    @staticmethod
    def _read(stream: Any, cap: int) -> bytes | None:
        try:
            return os.read(stream.fileno(), min(cap + 1, 1 << 20))
        except BlockingIOError:
            return None

    def _note_status(self, chunk: bytes) -> None:
        """The supervisor's words: first the command's pid (its group, swept at the end), last its status."""
        self.status.add(chunk)
        if self.processes is not None and self.processes.command is None:
            self.processes.command = _command_pid(bytes(self.status.head))

    def _drain_until_exit(self, deadline: float) -> None:
        """After stop: read what the command still writes until it exits (the supervisor reports) or the deadline."""
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        while time.monotonic() < deadline and not _status_of(bytes(self.status.head)):
            for stream in (self.proc.stdout, self.proc.stderr, self.status_file):
                chunk = self._read(stream, CAPTURE_BYTES)
                if chunk and stream is self.proc.stderr:
                    self.stderr.add(chunk)
                elif chunk and stream is self.status_file:
                    self._note_status(chunk)
            time.sleep(0.02)

    def _break(self, why: str) -> None:
        """The protocol is out of step: end the command now (its processes too); every later call errors."""
        self.broken = self.broken or why
        proc, call = self.proc, self.processes
        if proc is not None and call is not None and proc.returncode is None:
            _terminate(proc)
            self.left_pids = sweep(call)[1]

    def _with_stderr(self, text: str) -> str:
        """The error text with the end of the command's stderr (what it wrote before it was ended too)."""
        stream = self.proc.stderr if self.proc is not None else None
        deadline = time.monotonic() + 0.5
        while stream is not None and not stream.closed and time.monotonic() < deadline:
            chunk = self._read(stream, CAPTURE_BYTES)
            if chunk == b"":
                self.stderr.finish()  # the end of the stream: what redaction held back is kept too
                break
            if chunk:
                self.stderr.add(chunk)
            else:
                time.sleep(0.01)
        tail = self.stderr.tail_text()
        return f"{text}; stderr: {tail!r}" if tail.strip() else text


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """End the supervisor: at once when the command is still running (SIGTERM: it kills the command's
    tree and reports), after a moment's wait when the command is gone and the supervisor is reporting."""
    CommandTarget._end(proc)
