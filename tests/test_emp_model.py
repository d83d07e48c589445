"""The EMP model (suites/emp/model.py) as an oracle: the views it accepts after appends, updates and deletes
by several apps, with ties and both tombstone forms, under the default readings and pinned ones."""

from __future__ import annotations

import random
import uuid

from memconform.suites.emp import format as emp
from memconform.suites.emp import model as m

LATER = m.Readings(ts_tie="later-line")


def line(entry_id: str, ts: int, content: str, src: str = "com.example.a", **extra: object) -> dict[str, object]:
    return {"v": "1.0", "id": entry_id, "ts": ts, "src": src, "content": content, **extra}


def ids(n: int) -> list[str]:
    return [str(uuid.UUID(int=i + 1, version=4)) for i in range(n)]


def test_newest_ts_wins_whatever_the_file_order() -> None:
    a, = ids(1)
    f = m.File().append(line(a, 20, "new")).append(line(a, 10, "old", src="com.example.b"))
    assert m.view_answers(f.lines) == {a: (line(a, 20, "new"),)}
    assert m.view_problems([line(a, 10, "old", src="com.example.b")], m.view_answers(f.lines))  # the older line fails
    assert m.view_problems([line(a, 20, "new")], m.view_answers(f.lines)) == []


def test_a_tie_accepts_either_line_by_default_and_only_the_later_one_pinned() -> None:
    a, = ids(1)
    f = m.File().append(line(a, 5, "first")).append(line(a, 5, "second", src="com.example.b"))
    assert [e["content"] for e in m.view_answers(f.lines)[a] if e] == ["first", "second"]
    assert [e["content"] for e in m.view_answers(f.lines, LATER)[a] if e] == ["second"]
    both = [line(a, 5, "first"), line(a, 5, "second", src="com.example.b")]
    assert any("2 times" in p for p in m.view_problems(both, m.view_answers(f.lines)))  # exactly one entry
    assert m.view_problems([], m.view_answers(f.lines)) == [f"id {a!r} is missing; expected 'first' (ts 5) or 'second' (ts 5)"]


def test_every_form_of_a_delete_gives_the_same_view_and_the_pinned_form_alone_deletes() -> None:
    a, b = ids(2)
    f = m.File().append(line(a, 1, "keep")).append(line(b, 2, "gone"))
    forms = f.delete_forms(b, 3, "com.example.a")
    assert len(forms) == 3  # two tombstone forms and the rewrite
    assert {tuple(m.view_answers(g.lines)) for g in forms} == {(a, b), (a,)}  # the rewrite leaves no line of b
    assert all(m.view_answers(g.lines).get(b, (None,)) == (None,) for g in forms)
    typed = f.append(emp.tombstone(b, 3, "com.example.a", "type-tombstone"))
    assert m.view_answers(typed.lines, m.Readings(tombstone="deleted-flag"))[b][0]["type"] == "tombstone"


def test_a_tombstone_is_ordered_by_its_ts() -> None:
    """E4 both ways: an older line after the tombstone stays deleted, a newer one brings the id back."""
    a, = ids(1)
    deleted = m.File().append(line(a, 1, "x")).append(emp.tombstone(a, 5, "com.example.a"))
    assert m.view_answers(deleted.append(line(a, 3, "late")).lines) == {a: (None,)}
    assert m.view_answers(deleted.append(line(a, 9, "again")).lines) == {a: (line(a, 9, "again"),)}
    tie = deleted.append(line(a, 5, "tied"))
    assert m.view_answers(tie.lines) == {a: (None, line(a, 5, "tied"))}
    assert m.view_answers(tie.lines, LATER) == {a: (line(a, 5, "tied"),)}


def test_update_keeps_the_id_and_other_fields_and_needs_a_newer_ts() -> None:
    a, = ids(1)
    f = m.File().append(line(a, 1, "x", tags=["ui"]))
    assert f.update_problems(a, 1) == ["the update's ts 1 is not newer than the entry's 1"]
    assert f.update_problems(ids(2)[1], 9) and f.update_problems(a, 2) == []
    assert m.view_answers(f.update(a, {"content": "y"}, 2).lines) == {a: (line(a, 2, "y", tags=["ui"]),)}


def test_a_query_answers_from_the_resolved_view() -> None:
    """E9: an id whose older version matches but whose newest line does not is not returned."""
    a, b = ids(2)
    f = (m.File().append(line(a, 1, "Dark Mode", tags=["ui"], type="preference")).append(line(a, 2, "light"))
         .append(line(b, 3, "dark theme", tags=["ui"])))
    got = m.query_answers(f.lines, {"text": "DARK"})
    assert got == {a: (None,), b: (line(b, 3, "dark theme", tags=["ui"]),)}
    assert m.query_answers(f.lines, {"tags": ["ui"], "start": 3, "end": 3})[b] != (None,)
    assert m.query_answers(f.lines, {"type": "preference"}) == {a: (None,), b: (None,)}
    assert m.view_problems([line(a, 1, "Dark Mode", tags=["ui"], type="preference")], got)  # the old version fails


def test_lines_no_reader_uses_cost_only_themselves_and_a_newer_major_may_refuse_the_file() -> None:
    a, b = ids(2)
    f = m.File(("not json", None, {"v": "2.0", "id": b, "ts": 1, "content": "future"})).append(line(a, 1, "x"))
    assert m.view_answers(f.lines) == {a: (line(a, 1, "x"),)}
    assert m.may_refuse(f.lines) and not m.may_refuse(f.lines[-1:])


def test_the_model_agrees_with_the_reference_resolve_under_later_line_for_n_writers() -> None:
    """Random interleavings of three apps' appends, updates (some on equal ts) and deletes of both forms:
    the reference's resolve (which takes later-line) is one of the model's answers, and the only one
    once the tie reading is pinned."""
    rng = random.Random(7)
    pool = ids(6)
    for _ in range(200):
        f = m.File()
        for _ in range(rng.randint(1, 14)):
            i, src, ts = rng.choice(pool), rng.choice(["com.example.a", "com.example.b", "com.example.c"]), rng.randint(1, 6)
            if rng.random() < 0.25:
                f = rng.choice(f.delete_forms(i, ts, src))
            else:
                f = f.append(line(i, ts, f"c{rng.random()}", src=src))
        numbered = [(n, "", e) for n, e in enumerate(f.lines, 1)]
        reference = emp.resolve(numbered)
        assert m.view_problems(reference, m.view_answers(f.lines)) == []
        pinned = m.view_answers(f.lines, LATER)
        assert all(len(options) == 1 for options in pinned.values())
        assert m.view_problems(reference, pinned) == []


def test_the_readings_a_run_pins_narrow_the_answers() -> None:
    """Readings.pinned reads the run's options (emp.ts_tie, emp.tombstone); the defaults accept every reading."""
    options = {"ts_tie": "later-line", "tombstone": "type-tombstone"}
    pinned = m.Readings.pinned(options.__getitem__)
    assert pinned == m.Readings(ts_tie="later-line", tombstone="type-tombstone")
    assert m.Readings.pinned({"ts_tie": "any", "tombstone": "either"}.__getitem__) == m.DEFAULT
    a, = ids(1)
    flagged = m.File().append(line(a, 1, "x")).append(emp.tombstone(a, 2, "com.example.a", "deleted-flag"))
    assert m.view_answers(flagged.lines) == {a: (None,)}
    assert m.view_answers(flagged.lines, pinned)[a][0]["meta"] == {"deleted": True}  # an ordinary line under the pin


# ---- the query's parameters, N apps at once, a write cut short -----------------------------------

def test_a_query_returns_an_identical_vector_may_return_a_similar_one_never_one_without() -> None:
    a, b, c = ids(3)
    f = m.File().append(line(a, 1, "x", emb=[1.0, 0.0])).append(line(b, 2, "y", emb=[0.0, 1.0])).append(line(c, 3, "z"))
    answers = m.query_answers(f.lines, {"near": [1.0, 0.0]})
    assert answers == {a: (line(a, 1, "x", emb=[1.0, 0.0]),), b: (line(b, 2, "y", emb=[0.0, 1.0]), None), c: (None,)}


def test_several_tags_under_every_and_any() -> None:
    a, b = ids(2)
    f = m.File().append(line(a, 1, "x", tags=["ui", "theme"])).append(line(b, 2, "y", tags=["ui"]))
    every = m.query_answers(f.lines, {"tags": ["ui", "theme"]})
    anyone = m.query_answers(f.lines, {"tags": ["ui", "theme"]}, m.Readings(query_tags="any"))
    assert every[b] == (None,) and anyone[b] == (line(b, 2, "y", tags=["ui"]),)
    assert m.query_answers(f.lines, {"tags": ["UI"]}, m.Readings(case="insensitive"))[b] != (None,)
    assert m.query_answers(f.lines, {"tags": ["UI"]})[b] == (None,)


def test_odd_values_have_each_reading_and_a_refusal() -> None:
    assert set(m.odd_value_readings({"tags": []}, "tags")) == {"refused", "read as absent", "matching nothing"}
    assert set(m.odd_value_readings({"start": None}, "start")) == {"refused", "read as absent"}
    assert set(m.odd_value_readings({"start": "5"}, "start")) == {"refused", "compared as the number"}
    assert m.odd_value_readings({"start": "5"}, "start")["compared as the number"][0] == {"start": 5.0}
    assert set(m.odd_value_readings({"type": "EVENT"}, "type")) == {"refused", "matching nothing", "exact", "case-insensitive"}
    assert "near ignored" in m.odd_value_readings({"near": [1.0]}, "near")


def test_n_apps_at_once_keep_every_acknowledged_write_and_may_keep_a_refused_one() -> None:
    a, b, c = ids(3)
    writes = [(a, line(a, 1, "a"), True), (b, line(b, 2, "b"), False), (c, line(c, 3, "c"), True)]
    answers = m.concurrent_answers(writes, [(c, True)])
    assert answers[a] == (line(a, 1, "a"),) and answers[c] == (None,)
    assert set(map(str, answers[b])) == {str(line(b, 2, "b")), "None"}
    assert m.view_problems([line(a, 1, "a")], answers) == []
    assert m.view_problems([], answers) == [f"id {a!r} is missing; expected 'a' (ts 1)"]
    assert m.concurrent_answers([(a, line(a, 1, "a"), True)], [(a, False)])[a] == (line(a, 1, "a"), None)


def test_a_write_cut_short_leaves_the_file_before_or_after_it() -> None:
    a, b = ids(2)
    before = m.File().append(line(a, 1, "victim"))
    updated = m.any_of([before, *m.write_results(before, "update", a, {"content": "new"}, 2, "com.example.a")])
    assert {e["content"] for e in updated[a] if e} == {"victim", "new"}
    deleted = m.any_of([before, *m.write_results(before, "delete", a, {}, 2, "com.example.a")])
    assert deleted[a] == (line(a, 1, "victim"), None)
    appended = m.any_of([before, *m.write_results(before, "append", b, line(b, 2, "cut"), 2, "com.example.a")])
    assert appended[b] == (None, line(b, 2, "cut"))
