"""Every `--json` output is one object naming its kind and version, valid under the JSON Schema shipped for it
(harness/schemas/cli-<output>.schema.json), errors included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from memconform.cli.json_output import OUTPUTS, schema_path
from memconform.cli.main import main
from memconform.core.results import Outcome
from test_diff import _write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _schema(output: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(schema_path(output).read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _printed(capsys: pytest.CaptureFixture[str], argv: list[str], codes: tuple[int, ...]) -> dict[str, Any]:
    code = main(argv)
    assert code in codes, (argv, code)
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def _valid(doc: dict[str, Any], output: str) -> None:
    assert (doc["output"], doc["version"]) == (output, 1)
    jsonschema.Draft202012Validator(_schema(output)).validate(doc)


def test_every_output_has_a_schema_shipped_with_the_package() -> None:
    for output in OUTPUTS:
        assert _schema(output)["properties"]["output"] == {"const": output}


def test_validate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = next((FIXTURES / "memoryai" / "valid").glob("*.json"))
    case = json.loads(good.read_text("utf-8"))
    doc = tmp_path / "bundle.json"
    doc.write_text(json.dumps(case.get("document", case)), "utf-8")
    out = _printed(capsys, ["validate", str(doc), "--json", "--format", "memoryai"], (0, 1))
    _valid(out, "validate")
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "memoryai-bundle", "version": 7}', "utf-8")
    out = _printed(capsys, ["validate", str(broken), "--json", "--format", "memoryai"], (1,))
    _valid(out, "validate")
    assert out["verdict"] == "invalid" and out["failed"] and out["results"]


def test_list_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    out = _printed(capsys, ["list", "--json"], (0,))
    _valid(out, "list")
    assert {c["suite"] for c in out["checks"]} >= {"memoryai", "omp", "memorizz", "amps", "emp"}
    out = _printed(capsys, ["list", "--options", "--json"], (0,))
    _valid(out, "options")
    assert any(o["name"] == "memoryai.dna_rule" for o in out["options"])


def test_coverage_and_domain_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    _valid(_printed(capsys, ["coverage", "--json"], (0, 1)), "coverage")
    _valid(_printed(capsys, ["coverage", "--domain", "--suite", "memoryai", "--json"], (0, 1)), "coverage-domain")


def test_diff(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", {"memoryai.a": (Outcome.PASSED, "")}, "conformant", ["x"])
    b = _write(tmp_path / "b.jsonl", {"memoryai.a": (Outcome.FAILED, "broke")}, "not conformant", ["x"])
    out = _printed(capsys, ["diff", str(a), str(b), "--json"], (1,))
    _valid(out, "diff")
    assert out["worse"] is True and out["newly_failing"][0]["check"] == "memoryai.a"


def test_an_error_is_json_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for argv in (["validate", str(tmp_path / "absent.json"), "--json"], ["list", "--suite", "nosuch", "--json"],
                 ["coverage", "--suite", "nosuch", "--json"]):
        out = _printed(capsys, argv, (2,))
        _valid(out, "error")


def test_the_schemas_refuse_what_is_not_their_output() -> None:
    """Negative control: a document without its version, or of another kind, is refused by the schema."""
    schema = _schema("list")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"output": "list", "checks": []}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"output": "coverage", "version": 1, "checks": []}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"output": "list", "version": 1, "checks": [{"id": "x"}]}, schema)


def test_the_list_schema_knows_every_keyword() -> None:
    from memconform.core.results import Keyword

    keywords = _schema("list")["properties"]["checks"]["items"]["properties"]["keyword"]["enum"]
    assert sorted(keywords) == sorted(k.value for k in Keyword)


def _matrix_v1(path: Path, cls: str, outcome: str, level: str) -> str:
    """A matrix.json of version 1 (the oldest `matrix diff` reads): one sentence, one implementation's level."""
    doc = {"matrix_version": 1, "implementations": [{"id": "v", "levels": [{"suite": "amps", "level": "1", "status": level}]}],
           "sentences": [{"id": "AMPS-SCHEMA-01", "class": cls, "outcomes": {"v": outcome}}]}
    path.write_text(json.dumps(doc), "utf-8")
    return str(path)


def test_matrix_diff(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    old = _matrix_v1(tmp_path / "old.json", "all-pass", "passed", "conformant")
    out = _printed(capsys, ["matrix", "diff", old, old, "--json"], (0,))
    _valid(out, "matrix-diff")
    assert out["gate_fails"] is False and not out["new_splits"] and not out["regressions"]
    worse = _matrix_v1(tmp_path / "worse.json", "split", "failed", "not conformant")
    out = _printed(capsys, ["matrix", "diff", old, worse, "--json"], (1,))
    _valid(out, "matrix-diff")
    assert out["gate_fails"] is True and out["new_splits"] == [{"sentence": "AMPS-SCHEMA-01", "was": "all-pass"}]
    assert {r.get("sentence") or r.get("level") for r in out["regressions"]} == {"AMPS-SCHEMA-01", "amps 1"}
    silent = _matrix_v1(tmp_path / "silent.json", "all-pass", "errored", "conformant")
    out = _printed(capsys, ["matrix", "diff", old, silent, "--json"], (1,))
    _valid(out, "matrix-diff")
    assert out["new_not_assessed"] == [{"implementation": "v", "sentence": "AMPS-SCHEMA-01", "from": "passed", "reason": ""}]
    out = _printed(capsys, ["matrix", "diff", old, str(tmp_path / "absent.json"), "--json"], (2,))
    _valid(out, "error")


def test_port(capsys: pytest.CaptureFixture[str]) -> None:
    out = _printed(capsys, ["port", "--from", "reference:memoryai", "--to", "reference:emp", "--json"], (0,))
    _valid(out, "port")
    assert out["ok"] is True and out["findings"] == [] and len(out["ledgers"]) == 2
    ledger = json.loads(schema_path("port").parent.joinpath("ledger.schema.json").read_text("utf-8"))
    for x in out["ledgers"]:
        jsonschema.Draft202012Validator(ledger).validate(x)
    trimming = "python:test_portability_port:ContentTrimmingEmp"  # A trims what it holds: a loss no ledger predicts
    out = _printed(capsys, ["port", "--from", trimming, "--from-format", "emp", "--to", "reference:amps", "--json"], (1,))
    _valid(out, "port")
    assert out["ok"] is False and any(f["where"] == "A" for f in out["findings"])
    out = _printed(capsys, ["port", "--from", "reference:memoryai", "--to", "nosuch:x", "--json"], (2,))
    _valid(out, "error")


def test_the_new_schemas_refuse_a_document_of_the_old_shape() -> None:
    """Negative control for the two outputs that had no version: their old bare objects are refused."""
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"new_splits": [], "new_not_assessed": [], "regressions": [], "fixed": [], "reclassified": []},
                            _schema("matrix-diff"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"from": "a", "to": "b", "ok": True, "notes": [], "findings": [], "ledgers": []}, _schema("port"))
