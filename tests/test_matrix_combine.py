"""`memconform matrix combine`: misaligned reports refused by name; classes; badges; the diff gate."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main
from memconform.core.profile import Profile
from memconform.core.results import HarnessError
from memconform.matrix import shards as sh
from memconform.matrix.badges import badges
from memconform.matrix.classify import Clusters, classify, groups_of
from memconform.matrix.combine import combine, read_all, validate_matrix
from memconform.matrix.diff import diff_matrices
from memconform.matrix.render_md import render_markdown
from memconform.run.session import execute_run

CHECKS = ["amps.schema_valid", "amps.delete_cascades"]


@pytest.fixture(scope="module")
def base_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("base")
    execute_run(["amps"], None, Profile.named("ci"), folder / "report", check_ids=CHECKS)
    return folder / "report" / "report.jsonl"


def sealed(lines: list[str]) -> str:
    """The report text of these lines with its footer's digest chain over them (as the run that wrote a report
    configured otherwise would have sealed it)."""
    body = [x for x in lines if x and json.loads(x)["type"] != "footer"]
    out = []
    for x in lines:
        line = json.loads(x) if x else None
        if line is not None and line["type"] == "footer" and "chain" in line:
            line["chain"] = {"algorithm": "sha256", "lines": len(body),
                             "value": hashlib.sha256("".join(b + "\n" for b in body).encode("utf-8")).hexdigest()}
            x = json.dumps(line)
        out.append(x)
    return "\n".join(out)


def published(base: Path, folder: Path, name: str, **header: Any) -> Path:
    """A vendor's own report: `<folder>/<name>/report/report.jsonl`, its header changed as given."""
    lines = base.read_text("utf-8").split("\n")
    head = json.loads(lines[0])
    head.update(header)
    lines[0] = json.dumps(head)
    path = folder / name / "report" / "report.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(sealed(lines), "utf-8")
    return path


@pytest.mark.parametrize("change, error", [
    ({"harness_version": "0.0.9"}, sh.HarnessVersionMismatch),
    ({"profile": "thorough"}, sh.ProfileMismatch),
    ({"seed": 1}, sh.SeedMismatch),
    ({"options": {"amps.import_semantics": "replace"}}, sh.OptionsMismatch),
])
def test_misaligned_reports_are_refused_by_name(base_report: Path, tmp_path: Path, change: dict[str, Any],
                                                error: type[sh.MisalignedReports]) -> None:
    a = published(base_report, tmp_path, "vendor-a")
    b = published(base_report, tmp_path, "vendor-b", **change)
    with pytest.raises(error, match=error.__name__):
        combine(read_all([a, b]))


def test_the_cli_names_the_misalignment_in_one_line(base_report: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    a = published(base_report, tmp_path, "vendor-a")
    b = published(base_report, tmp_path, "vendor-b", profile="thorough")
    assert main(["matrix", "combine", str(a), str(b), "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ProfileMismatch" in err[0] and "vendor-b" in err[0]
    assert not (tmp_path / "m" / "matrix.json").exists()


def test_a_different_suite_version_and_the_same_shard_twice_are_refused(base_report: Path, tmp_path: Path) -> None:
    a = published(base_report, tmp_path, "vendor-a")
    lines = [json.loads(x) for x in base_report.read_text("utf-8").split("\n") if x]
    for line in lines:
        if line["type"] == "result":
            line["spec"] = "AI Memory Portability Standard v0.2"
    b = tmp_path / "vendor-b" / "report" / "report.jsonl"
    b.parent.mkdir(parents=True)
    b.write_text(sealed([json.dumps(x) for x in lines]), "utf-8")
    with pytest.raises(sh.SuiteVersionMismatch):
        combine(read_all([a, b]))
    twice = shutil.copytree(tmp_path / "vendor-a", tmp_path / "again" / "vendor-a")
    with pytest.raises(sh.DuplicateShard):
        combine(read_all([a, twice / "report" / "report.jsonl"]))


def test_vendor_reports_combine_under_their_folder_names(base_report: Path, tmp_path: Path) -> None:
    docs = [published(base_report, tmp_path, n) for n in ("vendor-a", "vendor-b")]
    doc = combine(read_all([tmp_path]))  # a folder holding them is read too
    assert [i["id"] for i in doc["implementations"]] == ["vendor-a", "vendor-b"]
    validate_matrix(doc)
    assert len(docs) == 2 and doc["counts"].get("all-pass", 0) >= 1


# --- classes, from outcome tables ---------------------------------------------------------------------
@pytest.mark.parametrize("outcomes, links, expected", [
    ({"a": "passed", "b": "passed", "c": "passed"}, {}, "all-pass"),
    ({"a": "failed", "b": "warning"}, {}, "all-fail"),
    ({"a": "passed", "b": "passed", "c": "failed"}, {}, "lone-fail"),
    ({"a": "passed", "b": "failed", "c": "failed"}, {"b": ["c"]}, "lone-fail"),  # b and c share code
    ({"a": "passed", "b": "passed", "c": "failed", "d": "failed"}, {}, "split"),
    ({"a": "passed", "b": "passed", "c": "failed", "d": "failed"}, {"c": ["d"]}, "lone-fail"),
    ({"a": "passed", "b": "failed", "c": "failed"}, {}, "mixed"),
    ({"a": "not applicable", "b": "not assessed"}, {}, "not assessed"),
    ({"a": "passed", "b": "not assessed"}, {}, "all-pass"),  # classed by what was assessed
])
def test_classes(outcomes: dict[str, str], links: dict[str, list[str]], expected: str) -> None:
    clusters = Clusters(links)
    assert classify(groups_of(outcomes, {}, clusters), clusters) == expected


# --- badges and the diff gate --------------------------------------------------------------------------
def _doc(base_report: Path, tmp_path: Path) -> dict[str, Any]:
    return combine(read_all([published(base_report, tmp_path, n) for n in ("vendor-a", "vendor-b")]),
                   generated_at="2026-12-03T10:00:00Z")


def test_badges_one_svg_and_one_shields_endpoint_per_implementation_and_level(base_report: Path, tmp_path: Path) -> None:
    doc = _doc(base_report, tmp_path)
    made = badges(doc)
    levels = sum(len(i["levels"]) for i in doc["implementations"])
    assert levels and len(made) == 2 * levels
    endpoint = json.loads(next(v for k, v in made.items() if k.endswith(".json")))
    assert set(endpoint) == {"schemaVersion", "label", "message", "color"} and endpoint["schemaVersion"] == 1
    assert "spec 0.1.0" in endpoint["message"] and "memconform 0.1.0" in endpoint["message"]
    assert "2026-12-03" in endpoint["message"]


def test_diff_exits_1_on_a_new_split_or_a_regression_and_0_otherwise(base_report: Path, tmp_path: Path) -> None:
    old = _doc(base_report, tmp_path)
    assert diff_matrices(old, old) == {"new_splits": [], "new_not_assessed": [], "regressions": [], "fixed": [],
                                       "reclassified": []}
    new = json.loads(json.dumps(old))
    target = next(x for x in new["sentences"] if x["outcomes"].get("vendor-b") == "passed")
    target["outcomes"]["vendor-b"] = "failed"
    target["class"] = "split"
    changes = diff_matrices(old, new)
    assert changes["new_splits"] == [{"sentence": target["id"], "was": "all-pass"}]
    assert changes["regressions"] == [{"implementation": "vendor-b", "sentence": target["id"], "from": "passed",
                                       "to": "failed"}]
    (tmp_path / "old.json").write_text(json.dumps(old), "utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), "utf-8")
    assert main(["matrix", "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 1
    assert main(["matrix", "diff", str(tmp_path / "old.json"), str(tmp_path / "old.json")]) == 0
    assert diff_matrices(new, old)["fixed"] and not diff_matrices(new, old)["regressions"]


def test_markdown_opens_with_the_editors_queue_and_escapes_target_text(base_report: Path, tmp_path: Path) -> None:
    doc = _doc(base_report, tmp_path)
    doc["sentences"][0]["quote"] = "a | b\n```\n<script>"
    text = render_markdown(doc)
    first_section = text.split("\n## ")[1]
    assert first_section.startswith("The editor's queue")
    assert "a \\| b" in text and "\n```\n<script>" not in text


def test_one_point_holding_several_questions_is_read_as_one_row_each() -> None:
    from memconform.matrix.combine import sub_point

    assert sub_point("O2", "keyword match: all-words") == ("O2 keyword match", "all-words")
    assert sub_point("O2", "search default limit 20") == ("O2", "search default limit 20")
    assert sub_point("E1", "deleted-flag") == ("E1", "deleted-flag")
    assert sub_point("X", "trailing: ") == ("X", "trailing: ")


@pytest.mark.parametrize("meta, words", [
    ("[1, 2]", "not an object"),
    ('{"implementation": "../../etc", "suite": "amps", "status": "ran", "seed": 1}', "implementation is not an id"),
    ('{"implementation": "a", "suite": "amps", "status": "passed", "seed": 1}', "status"),
    ('{"implementation": "a", "suite": "amps", "status": "ran", "seed": "1"}', "seed"),
    ("{" + " " * (1 << 20) + "}", "larger than"),
])
def test_a_shard_record_from_elsewhere_is_checked_before_use(tmp_path: Path, meta: str, words: str) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "shard.json").write_text(meta, "utf-8")
    with pytest.raises(HarnessError, match=words):
        read_all([tmp_path / "s"])


def test_without_a_transcript_the_exchange_is_the_saved_sequence(base_report: Path, tmp_path: Path) -> None:
    from memconform.matrix.combine import Cell

    report = published(base_report, tmp_path, "vendor-a")
    [shard] = read_all([report])
    assert shard.report is not None
    line = next(r for r in shard.report.results if r["check_id"] == "amps.delete_cascades")
    line.update(outcome="failed", transcript=[], failures=[{"title": "cascade lost", "received": 1, "expected": 2, "path": "$"}])
    steps = [{"op": f"step {n}", "body": {"x": "y" * 1000}} for n in range(20)]
    (report.parent / "sequences").mkdir()
    (report.parent / "sequences" / "amps.delete_cascades-0123456789ab.json").write_text(
        json.dumps({"format": "memconform-sequence", "steps": steps, "diverged_at": 15}), "utf-8")
    cell = Cell()
    cell.add(shard)
    shown = cell.exchange(["amps.delete_cascades"])
    assert shown is not None and shown["sequence"] == "amps.delete_cascades-0123456789ab.json"
    assert shown["failure"] == "cascade lost" and shown["outcome"] == "failed"
    assert len(shown["transcript"]) == 12 and '"step 15"' in shown["transcript"][-1]  # up to the divergence
    assert all(len(t) <= 400 for t in shown["transcript"])
