"""The AMPS rule scan a column at a time (rules.scan_columns) against the walk atom by atom
(rules.walk): whenever the columns answer, they answer what the walk does, and an export with any
problem is always left to the walk (which says what and where)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memconform.suites.amps.format import rules

ABSENT = object()
TIMES = ["2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-01T01:00:00+01:00", "2024-01-01T00:00:00.5Z",
         "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01t00:00:00z", "2024-01-01", "9999-12-31T23:59:59Z",
         "0001-01-01T00:00:00Z", "2024-01-01T23:59:60Z", "", None, 5, [], {"at": "2024-01-01T00:00:00Z"}, ABSENT]
IDS = ["a0", "a1", "a2", "r0", "r1", "gone"]


def put(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not ABSENT:
        target[key] = value


@st.composite
def atoms(draw: Any, index: int) -> Any:
    if draw(st.integers(0, 40)) == 0:
        return draw(st.sampled_from([None, "atom", 3, []]))
    atom: dict[str, Any] = {"atom_id": f"a{index}"}
    put(atom, "sensitivity", draw(st.sampled_from(["public", ABSENT])))
    put(atom, "valid_from", draw(st.sampled_from(TIMES)))
    put(atom, "valid_to", draw(st.sampled_from(TIMES)))
    put(atom, "text", draw(st.sampled_from(["short", "x" * 500, "y" * 501, 7, ABSENT])))
    prov: Any = {}
    put(prov, "derivation", draw(st.sampled_from(["stated", "inferred", "observed", None, ABSENT])))
    put(prov, "artifact_ids", draw(st.sampled_from([["r0"], ["r0", "r1"], [], ["gone"], "r0", [["r0"]], ABSENT])))
    put(prov, "extractor", draw(st.sampled_from(["model", "", 3, ABSENT])))
    prov = draw(st.sampled_from([prov] * 8 + ["not an object", ABSENT]))
    put(atom, "provenance", prov)
    for key in draw(st.lists(st.sampled_from(["x-unsourced", "x-provider"]), max_size=1)):
        atom[key] = True
    return atom


@st.composite
def exports(draw: Any) -> Any:
    count = draw(st.integers(0, 6))
    doc: dict[str, Any] = {"export_version": "0.1.0", "atoms": [draw(atoms(i)) for i in range(count)]}
    artifacts = []
    for name in ("r0", "r1")[:draw(st.integers(0, 2))]:
        art: dict[str, Any] = {"artifact_id": name}
        put(art, "atom_ids", draw(st.sampled_from([["a0"], ["a0", "a1"], [], ["gone"], "a0", ABSENT])))
        artifacts.append(art)
    doc["artifacts"] = artifacts
    return doc


@st.composite
def clean_atoms(draw: Any, index: int) -> Any:
    """An atom no rule finds fault with, in the forms an export may take."""
    start = draw(st.sampled_from(["2024-01-01T00:00:00Z", "2024-01-01T00:00:00+01:00", "2023-12-31T23:00:00.25Z"]))
    end = draw(st.sampled_from(["2024-01-02T00:00:00Z", "2024-03-01T00:00:00-05:00", None, ABSENT, "not a time"]))
    atom: dict[str, Any] = {"atom_id": f"a{index}", "sensitivity": "public", "valid_from": start}
    put(atom, "valid_to", end)
    put(atom, "text", draw(st.sampled_from(["short", "x" * 500, 7, ABSENT])))
    derivation = draw(st.sampled_from(["stated", "inferred", "observed"]))
    prov: dict[str, Any] = {"derivation": derivation}
    if derivation != "stated" or draw(st.booleans()):
        prov["artifact_ids"] = draw(st.sampled_from([["r0"], ["r0", "r1"]]))
    if derivation == "inferred":
        prov["extractor"] = "model"
    atom["provenance"] = prov
    return atom


@st.composite
def mostly_clean_exports(draw: Any) -> Any:
    count = draw(st.integers(1, 8))
    faulty = draw(st.integers(-count, count - 1))  # below 0: no faulty atom
    listed = draw(st.sampled_from([["a0"], [], ABSENT]))
    art: dict[str, Any] = {"artifact_id": "r0"}
    put(art, "atom_ids", listed)
    return {"atoms": [draw(atoms(i) if i == faulty else clean_atoms(i)) for i in range(count)],
            "artifacts": [art, {"artifact_id": "r1"}]}


@settings(max_examples=300)
@given(st.one_of(exports(), mostly_clean_exports()))
def test_the_columns_answer_as_the_walk_does(doc: Any) -> None:
    walked = rules.walk(doc)
    columns = rules.scan_columns(doc)
    if columns is not None:
        assert not walked.problems and walked.zero_length == 0
        assert columns == walked
    assert rules.scan(doc) == walked


def test_a_time_that_is_a_list_or_an_object_is_no_instant_for_the_columns_either() -> None:
    """An interval end that cannot be a set member (a list, an object) is no date-time, as the walk reads
    it: the columns once put every end in a set and raised TypeError, an error on all six rules."""
    atom = {"atom_id": "a0", "sensitivity": "public", "valid_from": [], "valid_to": "2024-01-02T00:00:00Z",
            "text": "t", "provenance": {"derivation": "stated"}}
    for doc in ({"atoms": [atom], "artifacts": []},
                {"atoms": [{**atom, "valid_from": "2024-01-01T00:00:00Z", "valid_to": {"at": 1}}], "artifacts": []}):
        columns = rules.scan_columns(doc)
        assert columns is not None and "valid_to_not_before_valid_from" not in columns.observed
        assert columns == rules.walk(doc) == rules.scan(doc)


def test_the_columns_answer_a_clean_export_and_leave_a_faulty_one_to_the_walk() -> None:
    atom = {"atom_id": "a0", "sensitivity": "public", "valid_from": "2024-01-01T00:00:00Z",
            "valid_to": "2024-01-02T00:00:00Z", "text": "t",
            "provenance": {"derivation": "inferred", "artifact_ids": ["r0"], "extractor": "m"}}
    doc = {"atoms": [atom], "artifacts": [{"artifact_id": "r0", "atom_ids": ["a0"]}]}
    clean = rules.scan_columns(doc)
    assert clean is not None and clean.observed["valid_to_not_before_valid_from"] == 1
    assert clean.observed["references_resolve"] == 2
    for key, value in (("valid_to", "2024-01-01T00:00:00Z"), ("text", "z" * 501)):
        faulty = {"atoms": [{**atom, key: value}], "artifacts": doc["artifacts"]}
        assert rules.scan_columns(faulty) is None
        assert rules.scan(faulty).problems


@settings(max_examples=150)
@given(st.one_of(exports(), mostly_clean_exports()))
def test_references_counted_for_a_window_as_with_stand_ins(doc: Any) -> None:
    """A window's atoms, references counted not looked up (suites/amps/format/windows.py), against the
    path before it: every cited id given a stand-in artifact. The same counts, and the same None (a
    problem of another rule) wherever the references are ids."""
    atoms_only = {"atoms": doc["atoms"]}
    cited = [ref for a in doc["atoms"] if isinstance(a, dict) and isinstance(p := a.get("provenance"), dict)
             and isinstance(refs := p.get("artifact_ids"), list) for ref in refs]
    try:
        stand_ins = [{"artifact_id": ref} for ref in set(cited)]
    except TypeError:  # a reference that is no id: the window takes the stand-in path
        return
    handed: list[list[Any]] = []
    counted = rules.scan_columns({**atoms_only, "artifacts": []}, references_judged_elsewhere=True, cited=handed)
    with_stand_ins = rules.scan_columns({**atoms_only, "artifacts": stand_ins})
    assert counted == with_stand_ins
    if counted is not None:  # the window is handed the atoms' references it resolves later, each list once
        assert handed == [refs for a in doc["atoms"] if type(refs := a["provenance"].get("artifact_ids")) is list and refs]


def test_references_counted_are_counted_not_resolved() -> None:
    atom = {"atom_id": "a0", "sensitivity": "public", "valid_from": "2024-01-01T00:00:00Z", "text": "t",
            "provenance": {"derivation": "observed", "artifact_ids": ["elsewhere", "r9"]}}
    doc = {"atoms": [atom], "artifacts": []}
    assert rules.scan_columns(doc) is None  # looked up: nothing here resolves them
    counted = rules.scan_columns(doc, references_judged_elsewhere=True)
    assert counted is not None and counted.observed["references_resolve"] == 2


# ---- the columns given a window the schema found no error in (schema_held) ----------------------------------

VALID_TIMES = ["2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-01T01:00:00+01:00", "2024-01-01T00:00:00.5Z",
               "2024-02-29T00:00:00Z", "2024-01-01t00:00:00z", "9999-12-31T23:59:59Z", "2024-01-01T23:59:60Z"]


@st.composite
def schema_valid_atoms(draw: Any, index: int) -> Any:
    """Atoms the published schema accepts, with what each rule looks at varied: problems of every rule
    (no sources, no extractor, an empty one, no labels, an interval ending before or as it begins) among
    clean ones, so the columns answer both ways."""
    atom: dict[str, Any] = {"atom_id": f"a{index}", "kind": "fact", "created_at": VALID_TIMES[0],
                            "text": draw(st.sampled_from(["short", "x" * 500, "", "é" * 500]))}
    clean = draw(st.integers(0, 3)) > 0  # most atoms draw only what no rule refuses: clean windows come up too
    put(atom, "sensitivity", draw(st.sampled_from(["public", "medical"] + ([] if clean else [ABSENT]))))
    put(atom, "valid_from", "2024-01-01T00:00:00Z" if clean else draw(st.sampled_from([*VALID_TIMES, ABSENT])))
    put(atom, "valid_to", draw(st.sampled_from(["2024-01-02T00:00:00Z", "9999-12-31T23:59:59Z", None, ABSENT]
                                               + ([] if clean else VALID_TIMES))))
    put(atom, "confidence", draw(st.sampled_from([0, 0.5, 1, ABSENT])))
    prov: dict[str, Any] = {"derivation": draw(st.sampled_from(["stated", "inferred", "observed"]))}
    put(prov, "artifact_ids", draw(st.sampled_from([["r0"], ["r0", "r1"], ["gone"]] + ([] if clean else [[], ABSENT]))))
    put(prov, "extractor", draw(st.sampled_from(["model"] + ([] if clean else ["", ABSENT]))))
    put(prov, "human_reviewed", draw(st.sampled_from([True, ABSENT])))
    atom["provenance"] = prov
    if draw(st.booleans()):
        atom["x-provider"] = {"score": 1}
    return atom


@st.composite
def schema_valid_windows(draw: Any) -> Any:
    return [draw(schema_valid_atoms(i)) for i in range(draw(st.integers(0, 6)))]


def schema_holds(atoms: list[Any]) -> bool:
    from memconform.suites.amps.format import section_schema_errors

    return section_schema_errors("atoms", atoms, 0) == []


@settings(max_examples=300)
@given(schema_valid_windows())
def test_the_columns_answer_the_same_when_the_schema_held(atoms: list[Any]) -> None:
    """A window the schema found no error in: the columns skipping the types it settles answer what the
    columns checking them answer, as a window (references counted, their lists handed over) and whole."""
    assert schema_holds(atoms)
    handed_held: list[list[Any]] = []
    handed: list[list[Any]] = []
    window = {"atoms": atoms, "artifacts": []}
    held = rules.scan_columns(window, references_judged_elsewhere=True, cited=handed_held, schema_held=True)
    assert held == rules.scan_columns(window, references_judged_elsewhere=True, cited=handed)
    assert handed_held == handed
    whole = {"atoms": atoms, "artifacts": [{"artifact_id": "r0", "atom_ids": ["a0"]}, {"artifact_id": "r1"}]}
    assert rules.scan_columns(whole, schema_held=True) == rules.scan_columns(whole)


CLEAN_ATOM = {"atom_id": "a0", "kind": "fact", "text": "t", "created_at": "2024-01-01T00:00:00Z", "sensitivity": "public",
              "valid_from": "2024-01-01T00:00:00Z", "valid_to": "2024-01-02T00:00:00Z",
              "provenance": {"derivation": "inferred", "artifact_ids": ["r0"], "extractor": "m"}}


def with_change(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    atom = {**CLEAN_ATOM, "provenance": dict(CLEAN_ATOM["provenance"])}
    holder: dict[str, Any] = atom["provenance"] if path[0] == "provenance" else atom
    if value is ABSENT:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return atom


@pytest.mark.parametrize(("path", "value"), [
    (("provenance", "artifact_ids"), ABSENT), (("provenance", "artifact_ids"), []),  # inferred_has_sources
    (("provenance", "extractor"), ABSENT), (("provenance", "extractor"), ""),  # inferred names no extractor
    (("sensitivity",), ABSENT), (("valid_from",), ABSENT),  # atom_labels
    (("valid_to",), "2023-12-31T00:00:00Z"), (("valid_to",), "2024-01-01T00:00:00Z"),  # valid_to before / at
    (("valid_to",), "2024-01-01T00:00:00+01:00"),  # an hour before valid_from, in another shape
])
def test_a_rule_problem_in_a_schema_valid_window_is_left_to_the_walk(path: tuple[str, ...], value: Any) -> None:
    """The negative controls: what the schema allows and a rule refuses still sends the window to `walk`."""
    faulty = with_change(path, value)
    assert schema_holds([faulty])
    window = {"atoms": [CLEAN_ATOM, faulty], "artifacts": []}
    assert rules.scan_columns(window, references_judged_elsewhere=True, schema_held=True) is None
    assert rules.walk({"atoms": [faulty], "artifacts": [{"artifact_id": "r0"}]}).problems


def test_a_clean_schema_valid_window_is_answered_by_the_columns() -> None:
    """The positive control: the same window without the problem is counted, as the full columns count it."""
    assert schema_holds([CLEAN_ATOM])
    window = {"atoms": [CLEAN_ATOM, with_change(("valid_to",), None)], "artifacts": []}
    held = rules.scan_columns(window, references_judged_elsewhere=True, schema_held=True)
    assert held is not None and held == rules.scan_columns(window, references_judged_elsewhere=True)
    assert held.observed["text_at_most_500"] == 2 and held.observed["valid_to_not_before_valid_from"] == 1


def amend(change: Any) -> dict[str, Any]:
    from memconform.suites.amps.format import schema

    copied = copy.deepcopy(schema())
    change(copied)
    return copied


def _defs(root: dict[str, Any]) -> dict[str, Any]:
    return root["$defs"]


@pytest.mark.parametrize(("name", "change"), [
    ("text may be longer", lambda s: _defs(s)["Atom"]["properties"]["text"].update(maxLength=501)),
    ("text of any length", lambda s: _defs(s)["Atom"]["properties"]["text"].pop("maxLength")),
    ("text of any type", lambda s: _defs(s)["Atom"]["properties"]["text"].pop("type")),
    ("text not required", lambda s: _defs(s)["Atom"]["required"].remove("text")),
    ("provenance not required", lambda s: _defs(s)["Atom"]["required"].remove("provenance")),
    ("an atom of any type", lambda s: _defs(s)["Atom"].pop("type")),
    ("a provenance of any type", lambda s: _defs(s)["Provenance"].pop("type")),
    ("derivation not required", lambda s: _defs(s)["Provenance"]["required"].remove("derivation")),
    ("a derivation of another name", lambda s: _defs(s)["Provenance"]["properties"]["derivation"]["enum"].append(
        "guessed")),
    ("a derivation of any value", lambda s: _defs(s)["Provenance"]["properties"]["derivation"].pop("enum")),
    ("artifact_ids an array or a string", lambda s: _defs(s)["Provenance"]["properties"]["artifact_ids"].update(
        type=["array", "string"])),
    ("extractor of any type", lambda s: _defs(s)["Provenance"]["properties"]["extractor"].pop("type")),
    ("valid_from may be null", lambda s: _defs(s)["Atom"]["properties"]["valid_from"].update(type=["string", "null"])),
    ("valid_to of any type", lambda s: _defs(s)["Atom"]["properties"]["valid_to"].pop("type")),
    ("the first atoms by prefixItems", lambda s: s["properties"]["atoms"].update(prefixItems=[True])),
    ("an atom with an $id of its own", lambda s: _defs(s)["Atom"].update({"$id": "https://example.org/atom"})),
    ("the atoms' array with an $id of its own", lambda s: s["properties"]["atoms"].update(
        {"$id": "https://example.org/atoms"})),
    ("atoms by a reference that resolves nowhere", lambda s: s["properties"]["atoms"]["items"].update(
        {"$ref": "#/$defs/Missing"})),
    ("atoms by an escaped reference this reading does not undo", lambda s: s["properties"]["atoms"]["items"].update(
        {"$ref": "#/$defs/%41tom"})),
])
def test_a_schema_saying_less_settles_no_column(name: str, change: Any) -> None:
    from memconform.suites.amps.format import columns_settled, schema, settles_columns

    assert columns_settled() and settles_columns(schema())  # the published schema settles them
    assert not settles_columns(amend(change)), name


def test_what_a_schema_says_behind_a_reference_or_more_narrowly_still_settles_them() -> None:
    from memconform.suites.amps.format import settles_columns

    def behind_a_reference(s: dict[str, Any]) -> None:
        _defs(s)["Text"] = _defs(s)["Atom"]["properties"]["text"]
        _defs(s)["Atom"]["properties"]["text"] = {"$ref": "#/$defs/Text"}

    def narrower(s: dict[str, Any]) -> None:
        _defs(s)["Atom"]["properties"]["text"]["maxLength"] = 100
        _defs(s)["Atom"]["properties"]["valid_to"]["type"] = "string"
        _defs(s)["Provenance"]["properties"]["derivation"] = {"const": "inferred"}

    assert settles_columns(amend(behind_a_reference)) and settles_columns(amend(narrower))
