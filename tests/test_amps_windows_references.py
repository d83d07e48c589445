"""AMPS references in windows (suites/amps/format/windows.py): a window's references are looked up as
they come once every window of the section they point into was read, else kept for the end. Either
way the findings equal the whole-file path's: both orders of the sections, dangling references in the
first and in a late window, references that cannot be ids (a list, an object), and none at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memconform.core.suite import get_suite
from memconform.kit.windows.plan import read_with_plan
from test_windowed_validate import SMALL, both_ways, write

TIMES = ("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")


def export(count: int, atoms_first: bool, faults: dict[tuple[str, int], Any]) -> dict[str, Any]:
    """`count` atoms and count // 4 artifacts, every reference resolving but where `faults` puts one
    (keyed by section and index: the reference list it gets instead)."""
    arts = count // 4
    atoms = [{"atom_id": f"atom-{i}", "kind": "fact", "text": f"fact {i}", "created_at": TIMES[0],
              "sensitivity": "public", "valid_from": TIMES[0], "valid_to": TIMES[1],
              "provenance": {"derivation": "observed", "artifact_ids": faults.get(("atoms", i), [f"art-{i % arts}"])}}
             for i in range(count)]
    artifacts = [{"artifact_id": f"art-{j}", "kind": "chat", "captured_at": TIMES[0],
                  "atom_ids": faults.get(("artifacts", j), [f"atom-{j}", f"atom-{count - 1 - j}"])}
                 for j in range(arts)]
    envelope = {"export_version": "0.1.0", "exported_at": TIMES[1], "subject": {"subject_id": "s1"}}
    sections = {"atoms": atoms, "artifacts": artifacts} if atoms_first else {"artifacts": artifacts, "atoms": atoms}
    return {**envelope, **sections}


FAULTS: dict[str, dict[tuple[str, int], Any]] = {
    "none": {},
    "dangling in a first window": {("atoms", 0): ["art-gone"], ("artifacts", 0): ["atom-gone"]},
    "dangling in late windows": {("atoms", 390): ["art-0", "art-gone"], ("artifacts", 95): ["atom-1", "atom-gone"],
                                 ("artifacts", 97): ["atom-gone-too"]},
    "a list and an object as references": {("atoms", 300): [["art-1"]], ("artifacts", 90): [{"id": "atom-1"}]},
    "unhashable after dangling": {("atoms", 200): ["art-gone"], ("atoms", 350): [["art-1"]],
                                  ("artifacts", 50): ["atom-gone"], ("artifacts", 80): [["atom-1"], "atom-gone"]},
    "dangling only in the section read second": {("artifacts", 99): ["atom-gone"], ("atoms", 399): ["art-gone"]},
    # the lookup stops at the first reference missing: a list after it in the same list is still found
    "a list after a dangling reference in one list": {("atoms", 250): ["art-gone", ["art-1"]],
                                                      ("artifacts", 60): ["atom-gone", ["atom-1"]]},
}


@pytest.mark.parametrize("atoms_first", [True, False])
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_references_across_windows_as_the_whole_file_reports_them(fault: str, atoms_first: bool,
                                                                 tmp_path: Path) -> None:
    doc = export(400, atoms_first, FAULTS[fault])
    path = write(tmp_path, "export.json", doc, None)
    assert path.stat().st_size > 20 * SMALL  # many windows in each section
    assert read_with_plan(path, path.stat().st_size, [get_suite("amps")], SMALL) is not None  # windowed indeed
    whole, windowed = both_ways(path)
    assert windowed == whole
    references = next(r for r in whole if r[0] == "amps.references_resolve")
    dangling = sorted(where for where, ref in wrong_references(FAULTS[fault]))
    # the positive control and the negative: every reference that resolves nowhere reported where it is,
    # none else (a SHOULD: failed, as the default profile reports it)
    assert sorted(failure[3] for failure in references[5]) == dangling, references
    assert references[1] == ("failed" if dangling else "passed")


def wrong_references(faults: dict[tuple[str, int], Any]) -> list[tuple[str, Any]]:
    """(path, reference) of every reference the faults put in that resolves nowhere."""
    out = []
    for (section, index), refs in faults.items():
        for at, ref in enumerate(refs):
            if not isinstance(ref, str) or "gone" in ref:
                where = "provenance.artifact_ids" if section == "atoms" else "atom_ids"
                out.append((f"$.{section}[{index}].{where}[{at}]", ref))
    return out
