"""`memconform port` between the embedded references: every directed pair exports, translates, imports,
exports and translates back with no loss the ledger does not predict; a target that drops what it was
given is named as the place the loss appeared."""

from __future__ import annotations

import json
from typing import Any

import pytest
from memconform.cli.main import main
from memconform.portability.formats import formats
from memconform.portability.port import port
from memconform.suites.emp.reference import ReferenceEmpApp

PAIRS = [(a, b) for a in formats() for b in formats() if a != b]


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_port_between_references(a, b):
    result = port(f"reference:{a}", f"reference:{b}")
    assert result.there is not None and result.back is not None
    assert result.there.ledger.records_in > 0, "the seed reached A and came out of its export"
    assert [f.line() for f in result.findings] == []


def test_omp_embeddings_dropped_by_the_memoryai_consumer_are_a_note_naming_the_sentence():
    result = port("reference:omp", "reference:memoryai")
    assert result.ok
    assert any("embedding" in n and "SHOULD drop embeddings" in n for n in result.notes)


class MetaDroppingEmp(ReferenceEmpApp):
    """An EMP writer that loses every entry's meta: what a translation carried there does not survive it."""

    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        entry = {k: v for k, v in body["entry"].items() if k != "meta"}
        return super().append({**body, "entry": entry})


class ContentTrimmingEmp(ReferenceEmpApp):
    """An EMP writer that trims what it is given: A's own export no longer matches what A was given."""

    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        return super().append({**body, "entry": {**body["entry"], "content": body["entry"]["content"][:3]}})


def test_a_target_that_drops_carried_fields_is_named_as_b():
    result = port("reference:memoryai", f"python:{__name__}:MetaDroppingEmp", fmt_b="emp")
    assert not result.ok
    assert {f.where for f in result.findings} >= {"B"}
    assert any(f.where == "B" and f.field in ("dna", "protection", "created_at") for f in result.findings)


def test_a_source_that_changes_what_it_holds_is_named_as_a():
    result = port(f"python:{__name__}:ContentTrimmingEmp", "reference:amps", fmt_a="emp")
    assert any(f.where == "A" for f in result.findings)


def test_cli_port_exit_codes(capsys):
    assert main(["port", "--from", "reference:amps", "--to", "reference:emp"]) == 0
    assert "every loss was predicted by the ledger" in capsys.readouterr().out
    assert main(["port", "--from", "reference:memoryai", "--to", f"python:{__name__}:MetaDroppingEmp",
                 "--to-format", "emp", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["findings"] and len(out["ledgers"]) == 2


def test_portability_live_matrix(tmp_path):
    md = tmp_path / "m.md"
    assert main(["portability", "--live", "--md", str(md)]) == 0
    live = md.read_text().split("## Live ports between the embedded references")[1]
    assert live.count("every loss predicted") == 20


def test_a_planted_translation_bug_is_named_as_the_translation():
    from memconform.portability.planted import dna_dropped

    result = port("reference:memoryai", "reference:omp", writers={"omp": dna_dropped("omp")})
    assert any(f.where == "translation" and "DNA" in str(f.got) for f in result.findings)
    assert port("reference:memoryai", "reference:omp").ok, "the control: the real translator"
