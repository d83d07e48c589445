"""Edge Memory Protocol: every plausible reading passes, nothing passes without evidence, runs repeat.

Faithful variants of the reference take the other readings of suites/emp/errata.md (a writer that picks
its own UUID v1 ids, fractional ms, deletes by rewriting, honours only one tombstone form, lets the
earlier of two equal-ts lines win, refuses a newer-major file, gives up on a held lock, offers no
update): zero failures, zero warnings. A target that refuses everything passes no check.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.kit.hostile import parse_or_reject
from memconform.run.session import execute_run
from memconform.suites.emp import format as emp
from memconform.suites.emp.mutants import PINNED_KILLS
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.targets.base import Rejected

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)


def only_type_tombstones(lines: list[tuple[int, str, Any]]) -> list[dict[str, Any]]:
    """Newest ts wins, the earlier line on a tie; only `"type": "tombstone"` deletes."""
    best: dict[str, dict[str, Any]] = {}
    for _, _, e in lines:
        if emp.readable(e) and (e["id"] not in best or e["ts"] > best[e["id"]]["ts"]):
            best[e["id"]] = e
    return [e for e in best.values() if e.get("type") != "tombstone"]


def own_body(body: Any) -> dict[str, Any]:
    """The request as the reference reads it (raw bytes parsed strictly, or refused)."""
    body = parse_or_reject(body)
    if not isinstance(body, dict) or not isinstance(body.get("entry"), dict):
        raise Rejected({"errors": ["the entry is not a JSON object"]}, "entry is not an object")
    return body


class OwnIdsRewriteDelete(ReferenceEmpApp):
    """Picks its own UUID v1 ids and fractional-ms timestamps, deletes by rewriting the file (temp
    file and rename, under the lock, every other line kept byte for byte), reads only type
    tombstones, keeps the earlier line on an equal ts, refuses a file with a newer major, gives up
    on a held lock after 0.2 s, and offers no update."""

    MAX_WAIT_S = 0.2
    update = None

    def append(self, body: Any) -> dict[str, Any]:
        body = own_body(body)
        entry = dict(body["entry"], id=str(uuid.uuid1()), ts=time.time() * 1000)
        return super().append({"path": body["path"], "entry": entry})

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        path, gone = body["path"], body["id"]
        try:
            self.acquire(path)
        except TimeoutError as exc:  # gives up cleanly on a held lock: refused, nothing written
            raise Rejected({"error": str(exc)}, "lock busy") from None
        try:
            with open(path, "rb") as fh:
                raws = fh.read().split(b"\n")
            keep = [r for r in raws if not (isinstance(e := emp.parse_line(emp.decode(r)), dict) and e.get("id") == gone)]
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".memory-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(b"\n".join(keep))
            os.replace(tmp, path)
        finally:
            self.release(path)
        return {"ok": True}

    def view(self, path: str) -> list[dict[str, Any]]:
        lines = self.lines(path)
        if any(isinstance(e, dict) and (emp.parse_version(e.get("v")) or (0, 0))[0] > emp.MAJOR for _, _, e in lines):
            raise Rejected({"error": "a line of a newer major version"}, "newer major")
        return only_type_tombstones(lines)


class TypeTombstoneWriter(ReferenceEmpApp):
    """Picks its own UUID v4 ids (reports them), writes `"type": "tombstone"` lines, integer-valued float ts."""

    TOMBSTONE_STYLE = "type-tombstone"

    def append(self, body: Any) -> dict[str, Any]:
        body = own_body(body)
        entry = dict(body["entry"], id=str(uuid.uuid4()))
        return super().append({"path": body["path"], "entry": entry})

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        super().write_lines(path, [dict(e, ts=float(e["ts"])) if abs(e["ts"]) < 2**53 else e for e in lines])


class RefusesEverything:
    def close(self) -> None:
        pass

    def __getattr__(self, op: str) -> Any:
        def refuse(body: Any = None, **params: Any) -> Any:
            raise Rejected({"error": "no"}, "refused")
        return refuse


VARIANTS = {name: f"python:{__name__}:{name}" for name in ("OwnIdsRewriteDelete", "TypeTombstoneWriter")}


def run(target: str, options: dict[str, str] | None = None) -> Any:
    return execute_run(["emp"], target, Profile.named("ci", options=options), report_dir=None)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_faithful_variant_passes_with_no_failure_and_no_warning(name: str) -> None:
    outcome = run(VARIANTS[name])
    bad = {r.check_id: (r.outcome.value, r.reason, [f.title for f in r.failures])
           for r in outcome.results if r.outcome.value in ("failed", "errored") or r.inconclusive or r.warning}
    assert bad == {}
    skipped = {r.check_id for r in outcome.results if r.outcome.value == "skipped"}
    # no update offered; no process of its own to kill: not applicable
    assert skipped <= {"emp.writer_update_same_id", "emp.writer_updates_every_class", "emp.writer_killed_mid_write"}
    assert all(r.not_applicable for r in outcome.results if r.outcome.value == "skipped")


def test_readings_seen_are_recorded() -> None:
    seen = {(r["point"], s) for r in run(VARIANTS["OwnIdsRewriteDelete"]).readings for s in r["seen"]}
    assert ("E14", "the writer picks its own id and reports it") in seen
    assert ("E1", "rewrites the file") in seen and ("E1", "type-tombstone") in seen
    assert ("E3", "the earlier line wins") in seen and ("E8", "refuses the file") in seen
    assert any(point == "E10" for point, _ in seen) and any(point == "E11" for point, _ in seen)


def test_a_target_that_refuses_everything_passes_nothing() -> None:
    outcome = execute_run(["emp"], f"python:{__name__}:RefusesEverything", Profile.named("ci"), report_dir=None)
    passed = sorted(r.check_id for r in outcome.results if r.outcome.value == "passed")
    assert passed == []
    assert outcome.exit_code != 0


def test_two_runs_in_a_row_give_the_same_verdicts() -> None:
    first, second = run("reference:emp"), run("reference:emp")
    assert {r.check_id: r.outcome.value for r in first.results} == {r.check_id: r.outcome.value for r in second.results}
    assert [r.check_id for r in first.results if r.outcome.value != "passed"] == ["emp.writer_killed_mid_write"]


@pytest.mark.parametrize("option", sorted(PINNED_KILLS))
def test_pinned_reading_catches_its_mutant(option: str) -> None:
    key, value = option.split("=")
    for mutant, checks in PINNED_KILLS[option].items():
        outcome = execute_run(["emp"], f"python:memconform.suites.emp.mutants:{mutant}", Profile.named("ci", options={key: value}),
                              report_dir=None, check_ids=sorted(checks))
        assert {r.check_id: r.outcome.value for r in outcome.results} == dict.fromkeys(checks, "failed")


def test_rule_table_equals_registered_file_checks() -> None:
    assert {c.id for c in REGISTRY.for_suite("emp") if c.kind == "document"} == {f"emp.{n}" for n in emp.RULES}
    for name, rule in emp.RULES.items():  # one spelling: the check carries the rule's own sentence
        assert REGISTRY.get(f"emp.{name}").sentence == " ".join(rule.sentence.split())


def test_invalid_utf8_line_fails_lines_utf8_only_there(tmp_path) -> None:
    from memconform.run.document_run import validate_document

    good = json.dumps({"v": "1.0", "id": str(uuid.uuid4()), "ts": 1, "src": "com.a.b", "content": "caf\u00e9"}, ensure_ascii=False)
    path = tmp_path / "memory.jsonl"
    path.write_bytes(good.encode() + b"\n" + good.encode().replace(b"\xc3\xa9", b"\xe9") + b"\n")
    results = {r.check_id: r for r in validate_document(emp.LineStream(path), "emp", Profile.named("ci"))}
    assert [f.path for f in results["emp.lines_utf8"].failures] == ["line 2"]
    assert {c for c, r in results.items() if r.outcome.value != "passed"} == {"emp.lines_utf8"}


def test_a_rule_table_row_under_another_key_is_refused() -> None:
    from memconform.core.results import HarnessError
    from memconform.core.rules import register_rules
    from memconform.core.suite import Level, SuiteSpec

    toy = SuiteSpec(name="toy", spec_title="Toy", version="1", levels=[Level("file", "File")])
    row = emp.Rule("not_a_check", "Schema", "MUST", "Required Fields", "x", None)
    with pytest.raises(HarnessError, match="row 'other' holds the rule 'not_a_check'"):
        register_rules(toy, {"other": row}, lambda rule, doc, ctx: iter(()), level="file")


# ---- every open point a check observes: each reading's answer, and one fitting none -----------------

class QueryIgnoresNear(ReferenceEmpApp):
    """E60: no semantic search; an unknown `near` is ignored."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return super().query({k: v for k, v in body.items() if k != "near"})


class QueryRefusesNear(ReferenceEmpApp):
    """E60: no semantic search; a query carrying `near` is refused."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if "near" in body:
            raise Rejected({"error": "no semantic search"}, "near not offered")
        return super().query(body)


class QueryNearReturnsUnembedded(ReferenceEmpApp):
    """E60, fitting no reading: `near` keeps the similar entries and also every entry without a vector."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if body.get("near") is None:
            return super().query(body)
        rest = super().query({k: v for k, v in body.items() if k != "near"})
        kept = {e["id"] for e in super().query(body)}
        return [e for e in rest if e["id"] in kept or not isinstance(e.get("emb"), list)]


class QueryAnyTag(ReferenceEmpApp):
    """E62: several tags asked for: an entry holding any one of them."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        tags = body.get("tags")
        if not isinstance(tags, list) or len(tags) < 2:
            return super().query(body)
        rest = super().query({k: v for k, v in body.items() if k != "tags"})
        return [e for e in rest if set(tags) & set(e.get("tags") or [])]


class QueryNoEntryForTwoTags(ReferenceEmpApp):
    """E62, fitting no reading: a query of several tags returns nothing."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        tags = body.get("tags")
        return [] if isinstance(tags, list) and len(tags) > 1 else super().query(body)


class QueryCaseInsensitiveLabels(ReferenceEmpApp):
    """E61: tags and type compared case-insensitively."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        tags, kind = body.get("tags"), body.get("type")
        if not (isinstance(tags, list) and tags) and not (isinstance(kind, str) and kind):
            return super().query(body)
        rest = super().query({k: v for k, v in body.items() if k not in ("tags", "type")})
        if isinstance(tags, list) and tags:
            rest = [e for e in rest if {t.lower() for t in tags} <= {t.lower() for t in e.get("tags") or []}]
        if isinstance(kind, str) and kind:
            rest = [e for e in rest if str(e.get("type", "")).lower() == kind.lower()]
        return rest


class QueryUpperCaseTagAsAbsent(ReferenceEmpApp):
    """E61, fitting no reading: a tag in upper case is dropped, so every entry comes back."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        tags = body.get("tags")
        if isinstance(tags, list) and any(t != t.lower() for t in tags):
            body = {k: v for k, v in body.items() if k != "tags"}
        return super().query(body)


class OwnVersionWriter(ReferenceEmpApp):
    """Writes the version it implements ("1.0") for an entry handed it as another 1.x (errata E65)."""

    def append(self, body: Any) -> dict[str, Any]:
        body = own_body(body)
        entry = dict(body["entry"])
        if isinstance(entry.get("v"), str) and entry["v"].startswith("1."):
            entry["v"] = "1.0"
        return super().append({"path": body["path"], "entry": entry})


class OtherMajorWriter(ReferenceEmpApp):
    """Writes "2.0" for every entry: another major is a change no reading allows."""

    def append(self, body: Any) -> dict[str, Any]:
        body = own_body(body)
        entry = dict(body["entry"])
        if isinstance(entry.get("v"), str):
            entry["v"] = "2.0"
        return super().append({"path": body["path"], "entry": entry})


class StrictTagAlphabetWriter(ReferenceEmpApp):
    """Refuses before writing a tag outside lowercase ASCII letters, digits, ':', '_', '-' (the public SDK)."""

    def append(self, body: Any) -> dict[str, Any]:
        body = own_body(body)
        tags = body["entry"].get("tags")
        if isinstance(tags, list) and any(isinstance(t, str) and not re.match(r"^[a-z0-9:_\-]+$", t) for t in tags):
            raise Rejected({"errors": ["Tags must contain only lowercase letters, numbers, colons, underscores, and hyphens"]}, "tags")
        return super().append(body)


class LowerCaseIdReader(ReferenceEmpApp):
    """Reads UUID-shaped ids case-insensitively, as RFC 4122 compares them: the view gives every id in lower case."""

    def view(self, path: str) -> list[dict[str, Any]]:
        return [dict(e, id=e["id"].lower()) if isinstance(e.get("id"), str) and emp.UUID_RE.match(e["id"]) else e
                for e in super().view(path)]


HERE = f"python:{__name__}:"
MUTANT = "python:memconform.suites.emp.mutants:"

# (point, check, target, the readings of that point it shows; None: the answer fits no accepted reading)
E_CASES = [
    ("E65", "writer_appends_every_class", "reference:emp", {"the writer keeps the version it is given"}),
    ("E65", "writer_appends_every_class", HERE + "OwnVersionWriter",
     {"the writer keeps the version it is given", "the writer writes its own protocol version"}),
    ("E65", "writer_appends_every_class", HERE + "OtherMajorWriter", None),
    ("E1", "reader_tombstone_deletes", "reference:emp", {"deleted-flag"}),
    ("E1", "reader_tombstone_deletes", HERE + "OwnIdsRewriteDelete", {"type-tombstone"}),
    ("E1", "reader_tombstone_deletes", MUTANT + "TombstoneIgnored", None),
    ("E1", "writer_delete_keeps_foreign", "reference:emp", {"appends a deleted-flag line"}),
    ("E1", "writer_delete_keeps_foreign", HERE + "TypeTombstoneWriter", {"appends a type-tombstone line"}),
    ("E1", "writer_delete_keeps_foreign", HERE + "OwnIdsRewriteDelete", {"rewrites the file"}),
    ("E3", "reader_equal_ts_tie", "reference:emp", {"the later line wins"}),
    ("E3", "reader_equal_ts_tie", MUTANT + "TieKeepsFirstLine", {"the earlier line wins"}),
    ("E3", "reader_equal_ts_tie", MUTANT + "TieKeepsBoth", None),
    ("E8", "reader_newer_major_refused", "reference:emp", {"leaves the line out"}),
    ("E8", "reader_newer_major_refused", HERE + "OwnIdsRewriteDelete", {"refuses the file"}),
    ("E8", "reader_newer_major_refused", MUTANT + "NewerMajorAccepted", None),
    ("E14", "writer_ts_millis", "reference:emp", {"the writer keeps the id it is given"}),
    ("E14", "writer_ts_millis", HERE + "TypeTombstoneWriter", {"the writer picks its own id and reports it"}),
    ("E13", "writer_delete_keeps_foreign", HERE + "OwnIdsRewriteDelete", {"a rewrite keeps a corrupt line"}),
    ("E6", "writer_waits_for_lock", "reference:emp", {"waits for the lock"}),
    ("E6", "writer_waits_for_lock", HERE + "OwnIdsRewriteDelete", {"gives up while the lock is held"}),
    ("E6", "writer_waits_for_lock", MUTANT + "BreaksLockOnTimeout", None),
    ("E2", "writer_stale_lock", "reference:emp", {"takes over a stale lock"}),
    ("E2", "writer_stale_lock", MUTANT + "StaleTakeoverAnsweredRefused", None),
    ("E36", "writer_appends_every_class", "reference:emp", {"an open class appended as given", "an open class refused"}),
    ("E60", "query_every_parameter_pair", "reference:emp", {"similar vectors returned", "matching nothing"}),
    ("E60", "query_every_parameter_pair", HERE + "QueryIgnoresNear", {"near ignored", "read as absent"}),
    ("E60", "query_every_parameter_pair", HERE + "QueryRefusesNear", {"semantic search not offered (refused)", "refused"}),
    ("E60", "query_every_parameter_pair", HERE + "QueryNearReturnsUnembedded", None),
    ("E61", "query_every_parameter_pair", "reference:emp", {"read as absent", "refused", "matching nothing", "exact"}),
    ("E61", "query_every_parameter_pair", HERE + "QueryCaseInsensitiveLabels",
     {"read as absent", "refused", "matching nothing", "case-insensitive"}),
    ("E61", "query_every_parameter_pair", HERE + "QueryUpperCaseTagAsAbsent", None),
    ("E62", "query_every_parameter_pair", "reference:emp", {"every given tag present"}),
    ("E62", "query_every_parameter_pair", HERE + "QueryAnyTag", {"any given tag present"}),
    ("E62", "query_every_parameter_pair", HERE + "QueryNoEntryForTwoTags", None),
    # the reference skips no BOM (the first line is lost) and reads an unterminated last line
    ("E64", "file_every_line_form", "reference:emp", {"the line is read", "the line is left out"}),
    ("E64", "file_every_line_form", MUTANT + "CorruptAborts", None),
    ("E66", "reader_returns_every_valid_class", "reference:emp", {"an upper-case UUID id is returned as written"}),
    ("E66", "reader_returns_every_valid_class", HERE + "LowerCaseIdReader",
     {"an upper-case UUID id is returned in another case (compared case-insensitively)"}),
]

# points where every answer the observation sees fits one reading by construction: the answer that fits
# none is failed by the check's other comparisons (named here), so no case of its own exists
EVERY_ANSWER_FITS = {
    "E13": "a rewrite either keeps the corrupt line or drops it; what else it does to lines is "
           "emp.writer_delete_keeps_foreign's byte comparison (RewriteReencodes, RewriteDropsForeign)",
    "E14": "a reply names the id given, another id, or none; an id the file does not hold is failed where it is read",
    "E66": "an upper-case id is found as written or in lower case; one found neither way is the check's missing line",
}
# points whose readings and an answer fitting none are fed by a test file of their own
TESTED_ELSEWHERE = {"E36": "tests/test_emp_domain_readings.py"}


@pytest.mark.slow
@pytest.mark.parametrize(("point", "check", "target", "readings"), E_CASES,
                         ids=[f"{p}-{c}-{t.rsplit(':', 1)[-1]}" for p, c, t, _ in E_CASES])
def test_each_reading_is_recorded_from_the_answer_and_none_fails(point: str, check: str, target: str,
                                                                  readings: set[str] | None) -> None:
    outcome = execute_run(["emp"], target, Profile.named("ci"), report_dir=None, check_ids=[f"emp.{check}"])
    (result,) = outcome.results
    seen = {s for r in outcome.readings if r["point"] == point for s in r["seen"]}
    if readings is None:
        assert result.outcome.value == "failed", result.reason
    else:
        assert result.outcome.value == "passed", [f.title for f in result.failures] or result.reason
        assert seen == readings


@pytest.mark.slow
def test_a_writer_refusing_tags_outside_the_strict_alphabet_is_a_reading_but_its_reader_is_not() -> None:
    outcome = execute_run(["emp"], HERE + "StrictTagAlphabetWriter", Profile.named("ci"), report_dir=None,
                          check_ids=["emp.writer_appends_every_class", "emp.writer_deletes_every_class"])
    verdicts = {r.check_id: r.outcome.value for r in outcome.results}
    assert verdicts == {"emp.writer_appends_every_class": "passed", "emp.writer_deletes_every_class": "passed"}, \
        [f.title for r in outcome.results for f in r.failures]
    assert "an open class refused" in {s for r in outcome.readings if r["point"] == "E36" for s in r["seen"]}


def observed_points(suite: str) -> set[str]:
    """The open points the suite's code observes: the point ids on a line that hands one to ctx.observe,
    to a helper that does (telling, judge_odd, batch_failures.judge), or names a check's OPEN_POINT."""
    import re

    import memconform.suites as suites

    calls = re.compile(r"observe\(|telling\(|judge_odd\(|batch_failures\.judge\(|OPEN_POINT = ")
    point = re.compile(r'"([AE]\d+)"')
    found: set[str] = set()
    for path in (Path(suites.__file__).parent / suite).rglob("*.py"):
        for line in path.read_text("utf-8").splitlines():
            if calls.search(line):
                found |= set(point.findall(line))
    return found


def test_every_observed_emp_point_has_a_readings_test() -> None:
    """A point some check observes has a case for each reading tested here and one answer fitting none
    (or says why no answer can fit none)."""
    points = observed_points("emp")
    assert {"E1", "E3", "E60", "E61", "E62"} <= points  # the scan sees the points it should
    shown = {p for p, _, _, readings in E_CASES if readings is not None} | set(TESTED_ELSEWHERE)
    none = {p for p, _, _, readings in E_CASES if readings is None} | set(EVERY_ANSWER_FITS) | set(TESTED_ELSEWHERE)
    for point, where in TESTED_ELSEWHERE.items():  # that file exists and speaks of the point
        assert point in (Path(__file__).parent / Path(where).name).read_text("utf-8")
    assert sorted(points - shown) == [], "observed points no test shows a reading of"
    assert sorted(points - none) == [], "observed points no test feeds an answer fitting no reading"
