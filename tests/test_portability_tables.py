"""The mapping tables: valid under their schema, one row per canonical field, every sentence verbatim in its
spec, type crosswalks whose stated ambiguities are the real ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from memconform.portability.canonical import FIELDS, TYPES
from memconform.portability.formats import formats, portable
from memconform.portability.tables import table, table_problems

SPECS = Path(__file__).resolve().parents[1] / "fixtures" / "specs"


def _flat(text: str) -> str:
    """Whitespace runs as one space: the spec texts wrap lines and pad code columns; the words are verbatim."""
    return re.sub(r"\s+", " ", text).strip()


def _sentences(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (v if k == "sentences" else _sentences(v))]
    if isinstance(value, list):
        return [s for item in value for s in _sentences(item)]
    return []


@pytest.mark.parametrize("fmt", formats())
def test_table_is_valid_and_complete(fmt):
    raw = json.loads(portable(fmt).mapping.read_text(encoding="utf-8"))
    assert table_problems(fmt, raw) == []
    assert set(table(fmt).rows) == set(FIELDS)


def test_a_table_missing_a_field_or_quoting_nothing_is_refused():
    raw = json.loads(portable("omp").mapping.read_text(encoding="utf-8"))
    raw["fields"] = [r for r in raw["fields"] if r["canonical"] != "dna"]
    raw["fields"][0]["sentences"] = []
    problems = table_problems("omp", raw)
    assert any("sentences" in p for p in problems)
    raw["fields"][0]["sentences"] = ["content: string"]
    assert "no row for canonical field 'dna'" in table_problems("omp", raw)


@pytest.mark.parametrize("fmt", formats())
def test_every_quoted_sentence_is_verbatim_in_the_spec(fmt):
    raw = json.loads(portable(fmt).mapping.read_text(encoding="utf-8"))
    spec = _flat((SPECS / raw["spec_file"]).read_text(encoding="utf-8"))
    quoted = _sentences(raw)
    assert len(quoted) > 20
    missing = [s for s in quoted if _flat(s) not in spec]
    assert missing == [], f"not verbatim in {raw['spec_file']}"


def test_the_verbatim_check_can_fail():
    spec = _flat((SPECS / "open-memory-protocol-v0.1.md").read_text(encoding="utf-8"))
    assert _flat("Max 10,000 chars.") in spec
    assert _flat("Max 10000 chars.") not in spec


@pytest.mark.parametrize("fmt", formats())
def test_crosswalk_names_a_native_type_for_every_canonical_type(fmt):
    t = table(fmt)
    for canonical in TYPES:
        native = t.type_from_canonical(canonical)
        assert isinstance(native, str) and native
        if fmt == "omp":
            assert native in ("episodic", "semantic", "procedural")
        if fmt == "amps":
            assert native in ("fact", "preference", "relationship", "belief", "goal", "skill")


@pytest.mark.parametrize("fmt", formats())
def test_stated_ambiguities_are_the_non_injective_directions(fmt):
    """Every native value several canonical types fall onto is listed as ambiguous, with all of them."""
    t = table(fmt)
    onto: dict[str, set[str]] = {}
    for canonical in TYPES:
        onto.setdefault(t.type_from_canonical(canonical), set()).add(canonical)
    stated = {a["native"]: set(a["canonical"]) for a in t.raw["types"]["ambiguous"]}
    for native, canonicals in onto.items():
        if len(canonicals) > 1:
            assert stated.get(native) == canonicals, f"{fmt}: {native} receives {sorted(canonicals)}"
    for native, canonicals in stated.items():
        if native in onto:
            assert len(canonicals) > 1 and not all(t.type_exact(c) for c in canonicals)


def test_omp_semantic_takes_three_dna_types():
    t = table("omp")
    assert {t.type_from_canonical(c) for c in ("preference", "decision", "identity")} == {"semantic"}
    assert not any(t.type_exact(c) for c in ("preference", "decision", "identity"))
