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
