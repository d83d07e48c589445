"""Command targets: one process per operation, files in and out, the process group killed on timeout.

Protocol (see README "Target protocols"):
    cmd:TEMPLATE        e.g.  cmd:mytool {op} --in {input} --out {output}
    cmd:@FILE.json      {"ops": {"export": "tmpl", "import": "tmpl"}, "timeout_s": 30}
Placeholders: {op}, {input} (a file holding the request JSON or document), {output} (where the
command writes its reply JSON), {workdir} (a private folder for this call).
Exit codes: 0 done, 3 rejected (the reply may still hold a report), 4 operation not offered;
anything else, or a timeout, is the target erroring.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from ..core.model import HarnessError, TargetError, Unsupported
from ..core.profile import Limits
from .base import Reply, Target

EXIT_OK, EXIT_REJECTED, EXIT_UNSUPPORTED = 0, 3, 4


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


class CommandTarget(Target):
    kind = "cmd"

    def __init__(self, spec: str, limits: Limits, api_key: str | None = None) -> None:
        self.limits = limits
        self.api_key = api_key
        self.templates: dict[str, str] = {}
        self.default_template: str | None = None
        self.timeout_s = limits.call_deadline_s
        if spec.startswith("@"):
            path = Path(spec[1:])
            try:
                config = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise HarnessError(f"cannot read the command target file {path}: {exc}") from None
            self.templates = dict(config.get("ops", {}))
            self.default_template = config.get("default")
            self.timeout_s = float(config.get("timeout_s", self.timeout_s))
        else:
            self.default_template = spec
        if not self.templates and not self.default_template:
            raise HarnessError("a cmd: target needs a command template")
        self.description = "cmd:" + spec

    def call(
        self,
        op: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        raw: bytes | None = None,
        filename: str | None = None,
    ) -> Reply:
        template = self.templates.get(op, self.default_template)
        if template is None:
            raise Unsupported(op, "no command template for it")
        with tempfile.TemporaryDirectory(prefix="memconform-cmd-") as workdir:
            work = Path(workdir)
            input_path = work / (filename or "input.json")
            output_path = work / "output.json"
            request = raw if raw is not None else json.dumps(
                body if body is not None else (params or {}), ensure_ascii=False
            ).encode("utf-8")
            input_path.write_bytes(request)
            values = {"op": op, "input": str(input_path), "output": str(output_path), "workdir": workdir}
            try:
                argv = [token.format(**values) for token in shlex.split(template)]
            except (KeyError, ValueError) as exc:
                raise HarnessError(f"bad command template {template!r}: {exc}") from None
            env = dict(os.environ)
            env["MEMCONFORM_OP"] = op
            for key, value in (params or {}).items():
                env[f"MEMCONFORM_PARAM_{key.upper()}"] = str(value)
            if self.api_key:
                env["MEMCONFORM_API_KEY"] = self.api_key
            started = time.monotonic()
            try:
                proc = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    cwd=workdir, env=env, start_new_session=True,
                )
            except OSError as exc:
                raise TargetError(f"cannot start {argv[0]!r}: {exc}") from None
            try:
                _, stderr = proc.communicate(timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                raise TargetError(f"{op}: command did not finish within {self.timeout_s}s; its process group was killed") from None
            elapsed = time.monotonic() - started
            code = proc.returncode
            if code == EXIT_UNSUPPORTED:
                raise Unsupported(op, "command exited 4")
            if code not in (EXIT_OK, EXIT_REJECTED):
                raise TargetError(f"{op}: command exited {code}; stderr: {stderr[-300:].decode('utf-8', 'replace')!r}")
            out = b""
            if output_path.exists():
                if output_path.stat().st_size > self.limits.max_response_bytes:
                    raise TargetError(f"{op}: output exceeds the cap of {self.limits.max_response_bytes} bytes")
                out = output_path.read_bytes()
            reply = Reply(status="ok" if code == EXIT_OK else "rejected", raw=out, elapsed_s=elapsed)
            if out:
                try:
                    reply.body = json.loads(out)
                except ValueError:
                    reply.body = None  # not JSON: checks that need JSON will say so via Reply.json()
            return reply
