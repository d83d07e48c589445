"""`memconform validate` reads a file once, under one size bound, and stays bounded in memory on a JSON bomb."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.kit.fixtures_loader import fixture_root


def _memorizz_file(folder: Path) -> Path:
    doc = json.loads((fixture_root() / "memorizz" / "valid" / "spec-example.json").read_text("utf-8"))["document"]
    path = folder / "archive.memorizz.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


def test_one_size_bound_for_a_file_and_its_truncated_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same --max-bytes decides for a streamed format's valid file and for its truncated copy."""
    whole = _memorizz_file(tmp_path)
    cut = tmp_path / "cut.memorizz.json"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    small = whole.stat().st_size // 4
    assert main(["validate", str(whole), "--max-bytes", str(small)]) == 2
    assert main(["validate", str(cut), "--max-bytes", str(small)]) == 2
    assert "over the limit" in capsys.readouterr().err
    assert main(["validate", str(whole)]) == 0
    capsys.readouterr()
    assert main(["validate", str(cut), "--json"]) == 1  # read once: the archive's own read says it is cut
    out = json.loads(capsys.readouterr().out)
    assert out["failed"] == ["memorizz.well_formed"] and out["format"] == "memorizz"


def _peak_mib(cmd: list[str]) -> tuple[float, int]:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("unit", [b"[],", b"{},", b"[[[]]],"], ids=["arrays", "objects", "nested"])
def test_a_json_bomb_stays_within_a_memory_bound(tmp_path: Path, unit: bytes) -> None:
    """8 MB of empty containers (Python would build ~25x that) is refused before parsing, within a few
    times the file's size."""
    bomb = tmp_path / "bomb.json"
    bomb.write_bytes(b"[" + unit * (8_000_000 // len(unit)) + b"[]]")
    small = tmp_path / "small.json"
    small.write_bytes(b"[]")
    cmd = [sys.executable, "-m", "memconform.cli.main", "validate", "--format", "amps"]
    baseline, _ = _peak_mib([*cmd, str(small)])
    peak, code = _peak_mib([*cmd, str(bomb)])
    assert code == 1
    assert peak - baseline < 4 * bomb.stat().st_size / 2**20, (peak, baseline)
