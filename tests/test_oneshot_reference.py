"""bench/oneshot_reference.py: a SQLite-backed reference served one process per call keeps its state
between calls (what bench_cmd_lines.py's one-shot runs rely on). Called in process here; never timed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "oneshot_reference.py"


def adapter():
    spec = importlib.util.spec_from_file_location("oneshot_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call(tmp_path: Path, op: str, request: bytes, name: str = "input.json") -> tuple[int, bytes]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / name).write_bytes(request)
    code = adapter().main(["reference:amps", str(tmp_path / "state"), op, str(work / name), str(work / "output.json")])
    out = work / "output.json"
    return code, out.read_bytes() if out.exists() else b""


def test_state_survives_between_processes_and_refusals_exit_3(tmp_path: Path) -> None:
    fixture = json.loads((SCRIPT.parents[1] / "fixtures" / "amps" / "valid" / "linked-complete.json").read_text("utf-8"))
    doc = fixture.get("document", fixture)
    subject = doc["subject"]["subject_id"]
    assert doc["atoms"]
    assert call(tmp_path, "import_export", json.dumps(doc).encode())[0] == 0
    code, out = call(tmp_path, "export", json.dumps({"subject_id": subject}).encode())  # another process
    assert code == 0 and {a["atom_id"] for a in json.loads(out)["atoms"]} == {a["atom_id"] for a in doc["atoms"]}
    assert call(tmp_path, "import_export", b'{"a": 1, "a": 2}')[0] == 3  # read as strictly as a product would
    assert call(tmp_path, "no_such_operation", b"{}")[0] == 4


@pytest.mark.parametrize("body", [b"\xff", b"[1, 2"])
def test_broken_requests_are_refused(tmp_path: Path, body: bytes) -> None:
    assert call(tmp_path, "export", body)[0] == 3
