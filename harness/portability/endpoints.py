"""Each format's export and import through a live target, by the operations its suite uses
(suites/<spec>/client.py): MemoryAI export/import_bundle, OMP GET /v1/export and POST /v1/import,
MemoRizz export/import_archive (restore), AMPS import_export/export {subject_id}, EMP append/resolve on a
memory.jsonl file the harness prepares."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

from memconform.core.profile import Profile
from memconform.core.results import TargetError
from memconform.core.runner import Context  # the port builds and owns its own contexts
from memconform.core.suite import get_suite
from memconform.targets import open_target


@dataclass
class Endpoint:
    """One live implementation of one format: its target and what it was given (to export it back)."""

    fmt: str
    spec: str
    ctx: Context
    subject_ids: list[str] = field(default_factory=list)
    emp_path: str = ""

    def close(self) -> None:
        self.ctx.target.close()


def open_endpoint(spec: str, fmt: str, api_key: str | None = None, profile: Profile | None = None) -> Endpoint:
    """One target, opened as `run` opens it: its routes, the profile's limits and options (an OMP credentials
    file: --option omp.credentials=FILE), and the API key it is called with."""
    suite = get_suite(fmt)
    profile = profile or Profile.named("ci")
    target = open_target(spec, suite.routes, profile.limits, api_key)
    try:
        target.preflight()
    except BaseException:
        target.close()
        raise
    ctx = Context(suite=suite, target=target, profile=profile)
    ctx.add_secret(api_key)
    end = Endpoint(fmt, spec, ctx)
    if fmt == "emp":
        end.emp_path = os.path.join(tempfile.mkdtemp(prefix="memconform-port-"), "memory.jsonl")
        open(end.emp_path, "wb").close()
    return end


def export(end: Endpoint) -> Any:
    """The target's export: a document of its format (EMP: the resolved file as JSON Lines)."""
    call = end.ctx.target.call
    if end.fmt == "memoryai":
        return call("export", {"scope": "full"}).accepted_json(dict, "memoryai export")
    if end.fmt == "omp":
        from memconform.suites.omp import client

        return client.export(end.ctx, record=False).accepted_json(dict, "omp export")
    if end.fmt == "memorizz":
        return call("export", {}).accepted_json(dict, "memorizz export")
    if end.fmt == "amps":
        docs = [call("export", {"subject_id": s}).accepted_json(dict, "amps export") for s in end.subject_ids]
        return _one_amps(docs)
    entries = call("resolve", {"path": end.emp_path}).accepted_json(list, "emp resolve")
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)


def _one_amps(docs: list[dict[str, Any]]) -> dict[str, Any]:
    if not docs:
        raise TargetError("nothing was imported into the AMPS target, so there is no subject to export")
    return docs[0]


def import_(end: Endpoint, doc: Any) -> None:
    """Give the target a document of its format; a refusal is the target's answer, raised as TargetError."""
    call = end.ctx.target.call
    if end.fmt == "memoryai":
        reply = call("import_bundle", doc)
    elif end.fmt == "omp":
        from memconform.suites.omp import client

        reply = client.import_(end.ctx, doc)
    elif end.fmt == "memorizz":
        reply = call("import_archive", {"archive": doc, "mode": "restore", "conflict": "error"})
    elif end.fmt == "amps":
        end.subject_ids.append(doc["subject"]["subject_id"])
        reply = call("import_export", doc)
    else:
        for line in doc.splitlines():
            if line.strip():
                reply = call("append", {"path": end.emp_path, "entry": json.loads(line)})
                if not reply.ok:
                    raise TargetError(f"emp append was refused: {reply.raw[:300]!r}")
        return
    if not reply.ok:
        status = getattr(reply, "status", None)
        raise TargetError(f"{end.fmt} import was refused{f' ({status})' if status else ''}: {reply.raw[:300]!r}")
