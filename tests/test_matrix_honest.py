"""The matrix never mistakes an error, a spent budget or a split for agreement (issue 32, Matrix items 6-7;
issue 31's matrix items): reports planted from one real AMPS run, each changed the way a starved shard,
a budget-cut failure, two readings of one point or a forged footer would change it."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main
from memconform.core.profile import Profile
from memconform.core.report import Report
from memconform.core.results import HarnessError
from memconform.matrix.cells import Cell
from memconform.matrix.classify import Clusters, classify, followers, groups_of, split_points
from memconform.matrix.combine import _ranked, combine, read_all
from memconform.matrix.diff import diff_matrices
from memconform.matrix.render_md import render_markdown
from memconform.run.rendered import write_rendered
from memconform.run.session import execute_run

CHECKS = ["amps.schema_valid", "amps.delete_cascades"]
SPENT = "not run: the run budget (240 s) is spent"
ONLY_SCHEMA = "AMPS-SCHEMA-01"  # observed by amps.schema_valid alone
ONLY_CASCADE = "AMPS-PRIV-05"  # observed by amps.delete_cascades alone


@pytest.fixture(scope="module")
def base_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("base")
    execute_run(["amps"], None, Profile.named("ci"), folder / "report", check_ids=CHECKS)
    return folder / "report" / "report.jsonl"


Change = Callable[[list[dict[str, Any]]], None]


def planted(base: Path, folder: Path, name: str, change: Change | None = None) -> Path:
    """A vendor's report `<folder>/<name>/report/report.jsonl`, its lines changed by `change`, rendered again
    (report.html and the rest) from the changed lines."""
    lines = [json.loads(x) for x in base.read_text("utf-8").split("\n") if x]
    if change is not None:
        change(lines)
    # the vendor seals its forgery again: the footer's digest chain is no secret, anyone can recompute it
    # (combine still recomputes every level from the results, which is what these tests hold)
    body = [json.dumps(x) for x in lines if x["type"] != "footer"]
    for x in lines:
        if x["type"] == "footer" and "chain" in x:
            x["chain"] = {"algorithm": "sha256", "lines": len(body),
                          "value": hashlib.sha256("".join(b + "\n" for b in body).encode("utf-8")).hexdigest()}
    path = folder / name / "report" / "report.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", "utf-8")
    write_rendered(path.parent, Report.from_path(path))
    return path


def results(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [x for x in lines if x["type"] == "result"]


def starved(lines: list[dict[str, Any]]) -> None:
    """The run budget ran out before any check started (a shard beside others on a busy machine)."""
    for x in results(lines):
        x.update(outcome="errored", reason=SPENT, failures=[], transcript=[])


def cut_failure(lines: list[dict[str, Any]]) -> None:
    """delete_cascades failed because a call was given 28 ms by the check budget, not for what was answered."""
    for x in results(lines):
        if x["check_id"] == "amps.delete_cascades":
            x.update(outcome="failed", failures=[{
                "title": "export: command did not finish within 0.028s (bounded by the check budget of 60 s)",
                "received": None, "expected": "an answer", "path": "$"}])


def plain_failure(lines: list[dict[str, Any]]) -> None:
    for x in results(lines):
        if x["check_id"] == "amps.delete_cascades":
            x.update(outcome="failed", failures=[{"title": "the observed memory survived its source's deletion",
                                                  "received": 1, "expected": 0, "path": "$.memories"}])


def sentence(doc: dict[str, Any], sid: str) -> dict[str, Any]:
    return next(x for x in doc["sentences"] if x["id"] == sid)


# --- a spent budget, an error: not assessed, with the reason, never a pass ----------------------------
def test_a_shard_whose_run_budget_is_spent_is_not_assessed_never_all_pass(base_report: Path, tmp_path: Path) -> None:
    alone = combine(read_all([planted(base_report, tmp_path, "starved", starved)]))
    assert alone["sentences"] and all(x["class"] == "not assessed" for x in alone["sentences"])
    assert all(x["outcomes"] == {"starved": "not assessed"} for x in alone["sentences"])
    assert sentence(alone, ONLY_SCHEMA)["not_assessed"] == {"starved": SPENT}
    leaders = [x for x in alone["sentences"] if x["same_as"] is None]  # one observation counts once
    assert alone["not_assessed_cells"] == len(leaders) < len(alone["sentences"])

    doc = combine(read_all([planted(base_report, tmp_path / "b", "clean"),
                            planted(base_report, tmp_path / "b", "starved", starved)]))
    x = sentence(doc, ONLY_SCHEMA)
    assert x["outcomes"] == {"clean": "passed", "starved": "not assessed"}
    assert x["class"] == "all-pass"  # classed by what was assessed ...
    assert x["not_assessed"] == {"starved": SPENT}  # ... and saying what was not
    assert all("starved" not in g["implementations"] for g in x["groups"])
    lead = [y for y in doc["sentences"] if y["same_as"] is None]
    assert all("starved" in y["not_assessed"] for y in lead)
    assert doc["not_assessed_cells"] == sum(len(y["not_assessed"]) for y in lead) > len(lead)  # clean's unrun checks too
    md = render_markdown(doc)
    assert f"{doc['not_assessed_cells']} cells (implementation x sentence) were not assessed" in md
    assert "not run: the run budget (240 s) is spent" in md  # the reason, as Markdown text


def test_a_failure_cut_short_by_a_budget_is_no_lone_failure_and_a_real_one_is(base_report: Path, tmp_path: Path) -> None:
    clean = [planted(base_report, tmp_path, n) for n in ("a", "b", "c")]
    doc = combine(read_all([*clean, planted(base_report, tmp_path, "cut", cut_failure)]))
    x = sentence(doc, ONLY_CASCADE)
    assert x["outcomes"]["cut"] == "not assessed" and x["not_assessed"]["cut"].startswith("cut short by a budget")
    assert x["class"] == "all-pass"
    control = combine(read_all([*clean, planted(base_report, tmp_path, "buggy", plain_failure)]))
    assert sentence(control, ONLY_CASCADE)["class"] == "lone-fail"  # the same failure, decided by the target


def test_a_sentence_is_passed_only_when_every_check_of_it_was_assessed(base_report: Path, tmp_path: Path) -> None:
    def half(lines: list[dict[str, Any]]) -> None:
        for x in results(lines):
            if x["check_id"] == "amps.delete_cascades":
                x.update(outcome="errored", reason="target error: connection reset by peer", failures=[])

    [shard] = read_all([planted(base_report, tmp_path, "half", half)])
    cell = Cell()
    cell.add(shard)
    assert cell.assess(["amps.schema_valid"]).outcome == "passed"
    both = cell.assess(["amps.schema_valid", "amps.delete_cascades"])
    assert both.outcome == "not assessed" and both.reason == "errored: target error: connection reset by peer"
    # a check left out of the run (--check) is no evidence either way; with none of its checks run, not assessed
    assert cell.assess(["amps.schema_valid", "amps.rejects_malformed_export"]).outcome == "passed"
    assert cell.assess(["amps.rejects_malformed_export"]).reason == "none of its checks was selected for the run"


# --- splits per reading point ---------------------------------------------------------------------------
def tags_reading(any_or_all: str, unrelated: str) -> Change:
    """The footer says the implementation read the tag filter as `any_or_all`, and an unrelated point its own way."""
    def change(lines: list[dict[str, Any]]) -> None:
        footer = lines[-1]
        footer["readings"] = [
            {"suite": "amps", "point": "P7", "seen": [f"tag filter: {any_or_all}"], "checks": ["amps.delete_cascades"]},
            {"suite": "amps", "point": "P8", "seen": [unrelated], "checks": ["amps.delete_cascades"]}]
    return change


def test_two_readings_of_one_point_are_a_split_whatever_other_points_do_and_diff_fails(base_report: Path,
                                                                                      tmp_path: Path) -> None:
    plain = [planted(base_report, tmp_path / "old", n) for n in ("i1", "i2", "i3", "i4", "i5")]
    old = combine(read_all(plain), generated_at="2026-12-03T10:00:00Z")
    assert sentence(old, ONLY_CASCADE)["class"] == "all-pass"
    readings = [("any", "u1"), ("any", "u2"), ("all", "u3"), ("all", "u4"), ("all", "u5")]  # every P8 reading differs
    new = combine(read_all([planted(base_report, tmp_path / "new", f"i{n}", tags_reading(*r))
                            for n, r in enumerate(readings, 1)]), generated_at="2026-12-03T10:00:00Z")
    x = sentence(new, ONLY_CASCADE)
    assert x["class"] == "split" and x["split_points"] == ["P7 tag filter"]
    assert [(g["readings"], g["implementations"]) for g in x["groups"]] == [
        ({"P7 tag filter": ["all"]}, ["i3", "i4", "i5"]), ({"P7 tag filter": ["any"]}, ["i1", "i2"])]
    row = next(r for r in new["readings"] if r["point"] == "P7 tag filter")
    assert row["needs_erratum"] is True
    cascade = {y["id"] for y in new["sentences"] if "amps.delete_cascades" in y["checks"]}  # the rest not run here
    assert {(c["sentence"], c["was"]) for c in diff_matrices(old, new)["new_splits"]} == {(i, "all-pass") for i in cascade}
    (tmp_path / "old.json").write_text(json.dumps(old), "utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), "utf-8")
    assert main(["matrix", "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 1
    assert main(["matrix", "diff", str(tmp_path / "new.json"), str(tmp_path / "new.json")]) == 0


def test_a_reading_a_failure_of_the_same_point_contradicts_follows_nothing(base_report: Path, tmp_path: Path) -> None:
    """A shard whose check recorded a reading and failed in the same run is no follower of that reading (core/readings.py
    contradictions): it cannot make a split. The control: the same reading with the check passing is followed."""
    def failed_after_reading(lines: list[dict[str, Any]]) -> None:
        tags_reading("any", "u1")(lines)
        plain_failure(lines)

    for name, change, expected in (("followed", tags_reading("any", "u1"), {"P7 tag filter": ["any"], "P8": ["u1"]}),
                                   ("contradicted", failed_after_reading, {})):
        [shard] = read_all([planted(base_report, tmp_path, name, change)])
        cell = Cell()
        cell.add(shard)
        assert cell.readings_for(["amps.delete_cascades"]) == expected, name


@pytest.mark.parametrize("counts, expected", [
    ((2, 3), "split"), ((1, 4), "all-pass"), ((2, 1), "all-pass"), ((1, 1), "all-pass")])
def test_a_point_splits_only_with_two_readings_each_followed_twice(counts: tuple[int, int], expected: str) -> None:
    impls = [f"i{n}" for n in range(sum(counts))]
    readings = {i: {"P7": ["any" if n < counts[0] else "all"], "P8": [f"u{n}"]} for n, i in enumerate(impls)}
    outcomes = dict.fromkeys(impls, "passed")
    clusters = Clusters({})
    points = followers(outcomes, readings)
    splitting = split_points(points, clusters)
    assert classify(groups_of(outcomes, readings, clusters, points, splitting), clusters, splitting) == expected


def test_a_split_point_of_implementations_sharing_code_counts_once() -> None:
    readings = {i: {"P7": [r]} for i, r in (("a", "any"), ("b", "any"), ("c", "all"), ("d", "all"))}
    outcomes = dict.fromkeys(readings, "passed")
    shared = Clusters({"b": ["a"]})
    assert split_points(followers(outcomes, readings), shared) == []
    assert split_points(followers(outcomes, readings), Clusters({})) == ["P7"]


# --- one observation counts once ------------------------------------------------------------------------
def test_one_observation_counts_once() -> None:
    def x(sid: str, checks: list[str], cls: str) -> dict[str, Any]:
        return {"id": sid, "suite": "omp", "checks": checks, "class": cls, "disagreement": 0.0, "groups": [],
                "rank": 0, "same_as": None, "also": []}

    ranked = _ranked([x("OMP-7-03", ["omp.rate_limited_per_key"], "lone-fail"),
                      x("OMP-4-06", ["omp.rate_limited_per_key"], "lone-fail"),
                      x("OMP-1-01", ["omp.other"], "lone-fail")])
    assert [(s["id"], s["rank"], s["same_as"]) for s in ranked] == [
        ("OMP-1-01", 1, None), ("OMP-4-06", 2, None), ("OMP-7-03", 2, "OMP-4-06")]
    assert ranked[1]["also"] == ["OMP-7-03"]


def test_counts_and_cells_not_assessed_count_an_observation_once(base_report: Path, tmp_path: Path) -> None:
    doc = combine(read_all([planted(base_report, tmp_path, "starved", starved)]))
    followers_ = [x for x in doc["sentences"] if x["same_as"]]
    assert followers_  # AMPS-SCHEMA-14, -15, ... share amps.schema_valid alone with AMPS-SCHEMA-01
    assert sum(doc["counts"].values()) == len(doc["sentences"]) - len(followers_)
    assert doc["not_assessed_cells"] == len(doc["sentences"]) - len(followers_)


# --- diff: a new cell not assessed fails the gate -----------------------------------------------------
def test_diff_exits_1_on_a_new_cell_not_assessed(base_report: Path, tmp_path: Path) -> None:
    old = combine(read_all([planted(base_report, tmp_path / "old", "v")]), generated_at="2026-12-03T10:00:00Z")
    new = combine(read_all([planted(base_report, tmp_path / "new", "v", starved)]), generated_at="2026-12-03T10:00:00Z")
    changes = diff_matrices(old, new)
    assert {"implementation": "v", "sentence": ONLY_SCHEMA, "from": "passed", "reason": SPENT} in changes["new_not_assessed"]
    assert not changes["new_splits"] and not changes["regressions"]
    (tmp_path / "old.json").write_text(json.dumps(old), "utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), "utf-8")
    assert main(["matrix", "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 1
    assert main(["matrix", "diff", str(tmp_path / "new.json"), str(tmp_path / "old.json")]) == 0  # assessed again


# --- verdicts recomputed from result lines; versions not produced here marked -------------------------------
def forged_footer(lines: list[dict[str, Any]]) -> None:
    plain_failure(lines)
    for lv in lines[-1]["levels"]:
        lv["status"] = "conformant"
    lines[-1]["exit_code"] = 0


def test_combine_recomputes_levels_from_results_not_the_footer(base_report: Path, tmp_path: Path) -> None:
    from memconform.matrix.badges import badges

    doc = combine(read_all([planted(base_report, tmp_path, "forger", forged_footer)]))
    [impl] = doc["implementations"]
    by_level = {lv["level"]: lv["status"] for lv in impl["levels"]}
    assert by_level and "not conformant" in by_level.values()
    made = badges(doc)
    conformant = [name for name, text in made.items() if name.endswith(".json") and '"message": "conformant' in text]
    assert not any(impl["levels"][n]["status"] == "not conformant" and impl["levels"][n]["level"] in name
                   for n in range(len(impl["levels"])) for name in conformant)
    honest = combine(read_all([planted(base_report, tmp_path / "h", "honest", plain_failure)]))
    assert honest["implementations"][0]["levels"] == impl["levels"]  # the footer's claim changed nothing


def test_reports_of_another_harness_version_are_unverified(base_report: Path, tmp_path: Path) -> None:
    def older(lines: list[dict[str, Any]]) -> None:
        lines[0]["harness_version"] = "0.0.9"

    doc = combine(read_all([planted(base_report, tmp_path, "old", older)]))
    assert doc["verified"] is False and doc["harness_version"] == "0.0.9" and doc["combined_by"] != "0.0.9"
    from memconform.matrix.badges import badges

    made = badges(doc)
    assert all("unverified" in text for name, text in made.items())
    assert "**Unverified:**" in render_markdown(doc)
    same = combine(read_all([planted(base_report, tmp_path / "s", "same")]))
    assert same["verified"] is True and not any("unverified" in t for t in badges(same).values())


# --- handed files: a symlink out, a FIFO, an oversized file: one clear error ------------------------------
@pytest.mark.parametrize("kind", ["symlink-out", "fifo", "oversized"])
def test_a_shard_report_that_is_not_a_plain_file_inside_the_folder_is_refused(
        base_report: Path, tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "shards" / "vendor" / "report"
    folder.mkdir(parents=True)
    report = folder / "report.jsonl"
    if kind == "symlink-out":
        outside = tmp_path / "elsewhere.jsonl"
        outside.write_bytes(base_report.read_bytes())
        report.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(report)
    else:
        with report.open("wb") as fh:
            fh.truncate((256 << 20) + 1)  # sparse: nothing is written, and nothing may be read
    code = main(["matrix", "combine", str(tmp_path / "shards"), "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "refused" in err[0] and "report.jsonl" in err[0], err
    assert not (tmp_path / "m" / "matrix.json").exists()


def test_a_symlink_inside_the_folder_is_read(base_report: Path, tmp_path: Path) -> None:
    """The positive control: a link that stays inside the folder named is an ordinary report."""
    real = planted(base_report, tmp_path / "shards", "real")
    linked = tmp_path / "shards" / "linked" / "report"
    linked.mkdir(parents=True)
    (linked / "report.jsonl").symlink_to(real)
    assert {s.implementation for s in read_all([tmp_path / "shards"])} == {"real", "linked"}


# --- matrix.md: data never becomes markup --------------------------------------------------------------------
def test_matrix_md_escapes_html_and_markdown_from_data(base_report: Path, tmp_path: Path) -> None:
    doc = combine(read_all([planted(base_report, tmp_path, "v", starved)]))
    payload = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) **bold** | `code` \x1b]52;c;AAAA\x07"
    doc["sentences"][0]["quote"] = payload
    doc["sentences"][0]["id"] = payload
    doc["implementations"][0]["runs"][0]["reason"] = payload
    doc["sentences"][0]["not_assessed"] = {"v": payload}
    text = render_markdown(doc)
    for raw in ("<img", "[click](javascript", "**bold**", "`code`", "\x1b", "\x07", "| `"):
        assert raw not in text, raw
    assert "&lt;img src=x onerror=alert(1)&gt;" in text and "\\[click\\](javascript:alert(1))" in text


def test_diff_reads_a_version_1_matrix_and_refuses_a_broken_one(base_report: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    new = combine(read_all([planted(base_report, tmp_path / "new", "v")]), generated_at="2026-12-03T10:00:00Z")
    old = {"matrix_version": 1, "implementations": [{"id": "v", "levels": []}],
           "sentences": [{"id": ONLY_SCHEMA, "class": "all-pass", "outcomes": {"v": "errored"}}]}
    (tmp_path / "old.json").write_text(json.dumps(old), "utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), "utf-8")
    assert main(["matrix", "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0  # assessed now
    assert main(["matrix", "diff", str(tmp_path / "new.json"), str(tmp_path / "old.json")]) == 1  # errored: not assessed
    assert "NOT ASSESSED v " + ONLY_SCHEMA in capsys.readouterr().out
    old["sentences"][0]["outcomes"] = "errored"
    (tmp_path / "old.json").write_text(json.dumps(old), "utf-8")
    assert main(["matrix", "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 2
    assert "not a matrix.json" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["1. item", "12) x", "- a", "+ b", "# h", "=", "a-b.c (x)", "<b>&amp;", "[x](javascript:y)",
                                  "![i](x.png)", "*e* _u_ ~s~ `k`", "> q", "a | b", "<!-- c -->", "\\*", "https://x.test/<a>"])
def test_md_text_renders_back_to_itself(text: str) -> None:
    """Escaped for Markdown, any text renders (CommonMark, raw HTML allowed) as exactly that text, no markup."""
    import html as html_lib

    markdown_it = pytest.importorskip("markdown_it")
    from memconform.matrix.text import md

    rendered = markdown_it.MarkdownIt("commonmark", {"html": True}).render(md(text)).strip()
    assert rendered.startswith("<p>") and rendered.endswith("</p>"), rendered
    inner = rendered[3:-4]
    assert "<" not in inner, rendered  # no element at all
    assert html_lib.unescape(inner) == text


def test_a_real_failure_beside_a_budget_cut_one_still_decides() -> None:
    from memconform.matrix.outcomes import of_result

    cut = {"title": "search: not sent: the check budget (60 s) is spent", "received": None, "expected": 1, "path": "$"}
    real = {"title": "the memory came back without its tags", "received": [], "expected": ["a"], "path": "$.tags"}
    more = {"title": "... and at least 1000 more failures of this check (counting stopped: the check budget (60 s) "
                     "is spent)", "received": None, "expected": None, "path": "$"}
    line = {"check_id": "omp.x", "outcome": "failed", "reason": "", "failures": [real, cut, more]}
    assert of_result(line).outcome == "failed"
    assert of_result({**line, "failures": [real, more]}).outcome == "failed"  # the runner's count is no cut
    assert of_result({**line, "failures": [cut, more]}).outcome == "not assessed"
    in_received = {"title": "no answer", "received": "search: did not finish within 0.028s (bounded by the run budget "
                                                      "of 240 s)", "expected": "an answer", "path": "$"}
    assert of_result({**line, "failures": [in_received]}).outcome == "not assessed"


def test_diff_sends_no_control_character_from_a_handed_file_to_the_terminal(base_report: Path, tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    old = combine(read_all([planted(base_report, tmp_path / "old", "v")]), generated_at="2026-12-03T10:00:00Z")
    new = json.loads(json.dumps(old))
    x = sentence(new, ONLY_SCHEMA)
    x["outcomes"]["v"] = "not assessed"
    x["not_assessed"]["v"] = "errored: \x1b]52;c;cGF5bG9hZA==\x07 \x1b[2J \x9b31m"  # OSC 52, clear screen, C1 CSI
    (tmp_path / "old.json").write_text(json.dumps(old), "utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), "utf-8")
    for extra in ([], ["--json"]):
        assert main(["matrix", "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), *extra]) == 1
        out = capsys.readouterr().out
        assert not any(ch in out for ch in "\x1b\x07\x9b"), repr(out)
    assert main(["matrix", "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 1
    assert "\\u001b]52;c;" in capsys.readouterr().out  # shown, visibly (as JSON writes it)


def test_combine_names_a_shard_report_changed_after_it_was_written(base_report: Path, tmp_path: Path) -> None:
    """A report edited after its run (the chain left as the run wrote it) is refused by name, never combined."""
    path = planted(base_report, tmp_path, "edited")
    text = path.read_text("utf-8")
    first_result = next(line for line in text.split("\n") if '"type": "result"' in line)
    path.write_text(text.replace(first_result, first_result.replace('"reason": ""', '"reason": "edited"', 1), 1), "utf-8")
    with pytest.raises(HarnessError, match="changed after it was written"):
        read_all([path.parent.parent])
    assert read_all([planted(base_report, tmp_path / "ok", "untouched").parent.parent])  # the control
