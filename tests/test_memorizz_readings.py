"""MemoRizz: the other plausible readings pass, a target that refuses everything passes nothing, and two runs
on one instance already holding unrelated data give the same verdicts."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.run.session import execute_run
from memconform.suites.memorizz import format as mz
from memconform.suites.memorizz.reference import ReferenceArchiveStore
from memconform.targets.base import Rejected

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)


class OtherReadings(ReferenceArchiveStore):
    """A faithful implementation that takes the readings the reference does not: keys sorted by UTF-16 code
    units (M2), warnings and external references written as objects (M5, M6), a clone that keeps the
    namespaces (M9), conflicts naming their store as `store`, and natural ids beyond the three named
    kept as data by a clone (M4:named)."""

    def seal(self, archive: dict[str, Any]) -> dict[str, Any]:
        manifest = archive["manifest"]
        manifest["warnings"] = [{"code": "note", "message": w} for w in manifest["warnings"]]
        if "external_references" in manifest:
            manifest["external_references"] = [{"memory_type": "unknown", "id": ref}
                                               for ref in manifest["external_references"]]
        return mz.seal(archive, "utf16")

    def incoming(self, store: str, record: dict[str, Any], mapping: dict[str, str]) -> tuple[str, dict[str, Any]]:
        rid, data = super().incoming(store, record, mapping)
        if store not in mz.NATURAL_IDS_NAMED and mz.NATURAL_IDS_IMPLIED.get(store) in record["data"]:
            key = mz.NATURAL_IDS_IMPLIED[store]  # not an identity under M4:named: a clone keeps it as data
            data[key] = record["data"][key]
        return rid, data

    def new_namespace(self, old: str, mapping: dict[str, str]) -> str:
        return old

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        def renamed(report: Any) -> Any:
            if isinstance(report, dict) and isinstance(report.get("conflicts"), list):
                report["conflicts"] = [{"store": c["memory_type"], "id": c["id"]} for c in report["conflicts"]]
            return report
        try:
            return renamed(super().import_archive(body, **params))  # type: ignore[no-any-return]
        except Rejected as exc:
            renamed(exc.body)
            raise

    def problems(self, archive: Any) -> list[str]:
        found = super().problems(archive)
        if any(p.startswith("integrity_digest") for p in found) and isinstance(archive, dict):
            utf16 = mz.digest(archive, "utf16")  # it reads either key order, as it writes one
            if utf16 == archive.get("integrity", {}).get("digest"):
                found = [p for p in found if not p.startswith("integrity_digest")]
        return [p for p in found if not p.startswith("natural_id_matches") or "tool_id" not in p]


class RefusesEverything:
    """Answers every operation with a refusal: no negative check may pass against it."""

    def __getattr__(self, op: str) -> Any:
        if op.startswith("_") or op == "close":
            raise AttributeError(op)

        def refuse(body: Any = None, **params: Any) -> Any:
            raise Rejected({"error": "refused"}, "refused")
        return refuse


class Shared(ReferenceArchiveStore):
    """One instance for two runs (closing it is the test's business), already holding unrelated records."""

    def close(self) -> None:
        pass


SHARED = Shared()


def _outcomes(target: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    outcome = execute_run(["memorizz"], target, Profile.named("ci"), report_dir=None)
    return {r.check_id: (r.outcome.value, tuple(sorted(f.title for f in r.failures))) for r in outcome.results}


def test_other_readings_pass_with_no_failure_and_no_warning() -> None:
    outcome = execute_run(["memorizz"], "python:test_memorizz_readings:OtherReadings", Profile.named("ci"),
                          report_dir=None)
    bad = {r.check_id: (r.outcome.value, r.reason, [f.title for f in r.failures]) for r in outcome.results
           if r.outcome is not Outcome.PASSED}
    assert bad == {}
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"]}
    assert ("M9", "namespaces kept") in seen


def test_refusing_everything_passes_no_check() -> None:
    outcome = execute_run(["memorizz"], "python:test_memorizz_readings:RefusesEverything", Profile.named("ci"),
                          report_dir=None)
    passed = sorted(r.check_id for r in outcome.results if r.outcome is Outcome.PASSED)
    assert passed == []
    rejects = {r.check_id: r for r in outcome.results if r.check_id.split(".")[1].startswith("rejects_")}
    assert len(rejects) == 7
    assert all(r.outcome is Outcome.ERRORED and "positive control refused" in r.reason for r in rejects.values())
    assert outcome.exit_code != 0


def test_two_runs_on_one_preloaded_instance_agree() -> None:
    unrelated = mz.empty_archive(source_provider="someone-else")
    for i in range(5):
        unrelated["stores"]["knowledge_base"].append({"id": f"kb-{i}", "data": {"memory_id": "harbor-demo",
                                                                                  "content": f"unrelated {i}"}})
    unrelated["stores"]["agents"].append({"id": "agent-x", "data": {"agent_id": "agent-x", "memory_ids": ["harbor-demo"],
                                                                     "delegates": ["agent-gone"]}})
    SHARED.import_archive({"archive": mz.seal(copy.deepcopy(unrelated)), "mode": "restore"})
    first = _outcomes("python:test_memorizz_readings:SHARED")
    second = _outcomes("python:test_memorizz_readings:SHARED")
    assert first == second
    assert {k: v for k, v in first.items() if v[0] != "passed"} == {}
    left = {store: [r["id"] for r in records] for store, records in SHARED.rows().items() if records}
    assert left == {"knowledge_base": [f"kb-{i}" for i in range(5)], "agents": ["agent-x"]}  # the runs cleaned up


class ProducerOnly(ReferenceArchiveStore):
    """Exports what it holds and imports nothing (import_archive is not offered)."""

    import_archive = None  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        archive = mz.empty_archive()
        archive["stores"]["agents"].append({"id": "agent-1", "data": {"agent_id": "agent-1", "memory_ids": ["team"],
                                                                      "delegates": [], "api_key": "sk-x"}})
        for i, store in enumerate(("knowledge_base", "summaries", "personas")):
            archive["stores"][store].append({"id": f"{store}-{i}", "data": {"memory_id": "team", "content": f"c{i}"}})
        for store, record in mz.records_of(archive):
            self.write(store, record["id"], record["data"])


def test_a_producer_that_cannot_import_is_judged_on_the_selection_the_user_names() -> None:
    profile = Profile.named("ci", options={"memorizz.export_memory_id": "team"})
    outcome = execute_run(["memorizz"], "python:test_memorizz_readings:ProducerOnly", profile, report_dir=None)
    by_id = {r.check_id: r for r in outcome.results}
    assert by_id["memorizz.record_id_unique"].outcome is Outcome.PASSED
    assert by_id["memorizz.selected_export_only_selected"].outcome is Outcome.PASSED
    assert by_id["memorizz.rejects_checksum_mismatch"].not_applicable
    assert by_id["memorizz.credentials_never_exported"].outcome is not Outcome.PASSED  # nothing seeded: not shown


def test_every_check_sentence_is_a_verbatim_quote_of_the_spec() -> None:
    from pathlib import Path

    from memconform.core.registry import REGISTRY

    specs = Path(__file__).resolve().parents[1] / "fixtures" / "specs"
    source = json.loads((Path(__file__).resolve().parents[1] / "suites" / "memorizz" / "requirements.json").read_text())["source"]
    text = " ".join((specs / source).read_text("utf-8").split())
    assert [c.id for c in REGISTRY.for_suite("memorizz") if " ".join(c.sentence.split()) not in text] == []


class EmptyProducer(ReferenceArchiveStore):
    """Exports an empty store and imports nothing: there is nothing to judge an archive's records by."""

    import_archive = None  # type: ignore[assignment]


def test_an_empty_export_only_producer_is_not_assessed() -> None:
    outcome = execute_run(["memorizz"], "python:test_memorizz_readings:EmptyProducer", Profile.named("ci"),
                          report_dir=None)
    levels = {v.key: v.status for v in outcome.levels["memorizz"]}
    assert levels["archive"].startswith("not assessed") and levels["producer"].startswith("not assessed")
    assert not any(r.outcome is Outcome.FAILED for r in outcome.results)
    assert outcome.exit_code == 1


# ---- M4, M9, M10: each reading the answers show, and answers fitting none ---------------------------

class CloneNullsNamespaces(ReferenceArchiveStore):
    """M9, fitting no reading: a clone leaves its records with no namespace at all."""

    def new_namespace(self, old: str, mapping: dict[str, str]) -> str:
        return ""


class CloneScramblesToolIds(ReferenceArchiveStore):
    """M4, fitting no reading: a clone writes a tool_id that is neither the new id nor the old value."""

    def incoming(self, store: str, record: dict[str, Any], mapping: dict[str, str]) -> tuple[str, dict[str, Any]]:
        rid, data = super().incoming(store, record, mapping)
        if store == "toolbox" and "tool_id" in data and rid != record["id"]:
            data["tool_id"] = f"scrambled-{rid}"
        return rid, data


class AutomationsListOnly(ReferenceArchiveStore):
    """M10: imported agents are disabled through their automations list only."""

    def incoming(self, store: str, record: dict[str, Any], mapping: dict[str, str]) -> tuple[str, dict[str, Any]]:
        rid, data = super().incoming(store, record, mapping)
        if store == "agents":
            data["automations_enabled"] = record["data"].get("automations_enabled", True)
        return rid, data


class AutomationsLeftOn(ReferenceArchiveStore):
    """M10, fitting no reading: imported agents keep their automations enabled both ways."""

    def incoming(self, store: str, record: dict[str, Any], mapping: dict[str, str]) -> tuple[str, dict[str, Any]]:
        rid, data = super().incoming(store, record, mapping)
        if store == "agents":
            data["automations_enabled"] = record["data"].get("automations_enabled", True)
            data["automations"] = copy.deepcopy(record["data"].get("automations", []))
        return rid, data


M_CASES = [
    # (check, target, the point, the readings it shows, or None: fits no accepted reading and fails)
    ("clone_rewrites_ids", "reference:memorizz", "M9", {("M9", "namespaces rewritten")}),
    ("clone_rewrites_ids", "OtherReadings", "M9", {("M9", "namespaces kept")}),
    ("clone_rewrites_ids", "CloneNullsNamespaces", "M9", None),
    ("clone_rewrites_ids", "CloneScramblesToolIds", "M4", None),
    ("imported_automations_disabled", "reference:memorizz", "M10",
     {("M10", "automations_enabled"), ("M10", "automations[].enabled")}),
    ("imported_automations_disabled", "AutomationsListOnly", "M10", {("M10", "automations[].enabled")}),
    ("imported_automations_disabled", "AutomationsLeftOn", "M10", None),
]


@pytest.mark.parametrize(("check", "target", "point", "readings"), M_CASES,
                         ids=[f"{c}-{t.rsplit(':', 1)[-1]}" for c, t, _, _ in M_CASES])
def test_a_reading_is_recorded_only_from_the_answer(check: str, target: str, point: str,
                                                    readings: set[tuple[str, str]] | None) -> None:
    where = target if ":" in target else f"python:test_memorizz_readings:{target}"
    outcome = execute_run(["memorizz"], where, Profile.named("ci"), report_dir=None, check_ids=[check])
    (result,) = outcome.results
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"] if r["point"] == point}
    if readings is None:
        assert result.outcome is Outcome.FAILED, result.reason
        assert any(point in str(f.expected) for f in result.failures), [f.to_json() for f in result.failures]
        assert not {s for s in seen if s[1].startswith("tool_id")} if point == "M4" else seen == set(), seen
    else:
        assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
        assert seen == readings


class CloneLosesRecords(ReferenceArchiveStore):
    """A clone that keeps namespaces and reports every new id, but loses one of the notes it copied."""

    def new_namespace(self, old: str, mapping: dict[str, str]) -> str:
        return old

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        report = super().import_archive(body, **params)
        if isinstance(body, dict) and body.get("mode") == "clone":
            lost = next((new for new in report["id_map"].values() if self.exists("knowledge_base", new)), None)
            with self.db:
                self.db.execute("DELETE FROM records WHERE store = ? AND id = ?", ("knowledge_base", lost))
        return report  # type: ignore[no-any-return]


def test_the_sequences_compare_a_kept_namespace_clone_with_the_oracle() -> None:
    kept = execute_run(["memorizz"], "python:test_memorizz_readings:OtherReadings", Profile.named("ci"), report_dir=None,
                       check_ids=["model_sequences"])
    assert [r.outcome for r in kept.results] == [Outcome.PASSED]
    lossy = execute_run(["memorizz"], "python:test_memorizz_readings:CloneLosesRecords", Profile.named("ci"), report_dir=None,
                        check_ids=["model_sequences"])
    assert [r.outcome for r in lossy.results] == [Outcome.FAILED], [r.reason for r in lossy.results]


# ---- M35, M60, M61, M62 and M9 of the domain checks: each reading from the answer, and answers fitting none --

class AcceptsVersionFloat(ReferenceArchiveStore):
    """M35: `version` 1.0 read as the integer 1 (JSON has one number type)."""

    def problems(self, archive: Any) -> list[str]:
        if isinstance(archive, dict) and archive.get("version") == 1.0 and isinstance(archive["version"], float):
            return super().problems({**archive, "version": 1})  # the digest covers the archive as sent: 1.0 is 1
        return super().problems(archive)


class RefusesVersionFloatAfterWriting(ReferenceArchiveStore):
    """M35, fitting no reading: `version` 1.0 refused, after its records were written."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = body.get("archive") if isinstance(body, dict) else None
        if isinstance(archive, dict) and isinstance(archive.get("version"), float):
            for store, record in mz.records_of(archive):
                self.write(store, record["id"], record["data"])
            raise Rejected({"ok": False, "errors": ["version 1.0"]})
        return super().import_archive(body, **params)  # type: ignore[no-any-return]


def _tool_id_differs(archive: Any) -> bool:
    return any(store == "toolbox" and r["data"].get("tool_id") not in (None, r["id"]) for store, r in mz.records_of(archive))


class RefusesToolIdAfterWriting(ReferenceArchiveStore):
    """M60, fitting no reading: a `tool_id` that is not the record's id refused, after the records were written."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = body.get("archive") if isinstance(body, dict) else None
        if isinstance(archive, dict) and _tool_id_differs(archive):
            for store, record in mz.records_of(archive):
                self.write(store, record["id"], record["data"])
            raise Rejected({"ok": False, "errors": ["tool_id"]})
        return super().import_archive(body, **params)  # type: ignore[no-any-return]


class OtherExportReadings(ReferenceArchiveStore):
    """M61: an unknown agent selects nothing, `types: []` is no store, an unknown store key is ignored."""

    def select(self, body: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        if body.get("types") == []:
            return {k: [] for k in mz.STORES}
        agents = {r["id"] for r in self.rows()["agents"]}
        if body.get("agent_id") is not None and body["agent_id"] not in agents:
            return {k: [] for k in mz.STORES}
        if isinstance(body.get("types"), list):
            known = [t for t in body["types"] if t in mz.STORES]
            if not known:
                return {k: [] for k in mz.STORES}
            body = {**body, "types": known}
        return super().select(body)


class EmptyTypesAgentsOnly(ReferenceArchiveStore):
    """M61, fitting no reading: `types: []` exports the agents store only (neither every store nor none)."""

    def select(self, body: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        if body.get("types") == []:
            body = {**body, "types": ["agents"]}
        return super().select(body)


class PreviewAlwaysOk(ReferenceArchiveStore):
    """M62: a preview of conflicts under conflict=error says ok (the preview itself succeeded)."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        report = super().import_archive(body, **params)
        return {**report, "ok": True} if isinstance(body, dict) and body.get("mode") == "preview" else report


class PreviewCountsConflictsAsImported(ReferenceArchiveStore):
    """M62, fitting no answer: a preview of conflicts reports them as imported records (it wrote nothing)."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        report = super().import_archive(body, **params)
        if isinstance(body, dict) and body.get("mode") == "preview" and report.get("conflicts"):
            report = {**report, "imported": len(report["conflicts"])}
        return report  # type: ignore[no-any-return]


DOMAIN_CASES = [
    # (check, target, the point, readings that must be among those seen, or None: fits none, and the failure's words)
    ("domain_envelope_every_class", "reference:memorizz", "M35", {"archive.version:one_float refused"}),
    ("domain_envelope_every_class", "AcceptsVersionFloat", "M35", {"archive.version:one_float restored"}),
    ("domain_envelope_every_class", "RefusesVersionFloatAfterWriting", "M35", "was refused, but its records were written"),
    ("domain_records_and_manifest_every_class", "reference:memorizz", "M60", {"record.data.natural_id:tool_id_differs refused"}),
    ("domain_records_and_manifest_every_class", "OtherReadings", "M60", {"record.data.natural_id:tool_id_differs restored"}),
    ("domain_records_and_manifest_every_class", "RefusesToolIdAfterWriting", "M60", "was refused, but its records were written"),
    ("domain_export_selection", "reference:memorizz", "M61",
     {"an unknown agent refused", "types [] as every store", "an unknown store key refused"}),
    ("domain_export_selection", "OtherExportReadings", "M61",
     {"an unknown agent selects nothing", "types [] as no store", "an unknown store key exports nothing of it"}),
    ("domain_export_selection", "EmptyTypesAgentsOnly", "M61", "is not what the selection holds"),
    ("domain_import_modes", "reference:memorizz", "M62", {"a preview of conflicts under conflict=error says ok: false"}),
    ("domain_import_modes", "PreviewAlwaysOk", "M62", {"a preview of conflicts under conflict=error says ok"}),
    ("domain_import_modes", "PreviewCountsConflictsAsImported", "M62", "is not what the model allows"),
    ("domain_import_modes", "reference:memorizz", "M9", {"namespaces rewritten"}),
    ("domain_import_modes", "OtherReadings", "M9", {"namespaces kept"}),
    ("domain_import_modes", "CloneLosesRecords", "M9", "neither all beside the originals nor all elsewhere"),
]


@pytest.mark.parametrize(("check", "target", "point", "readings"), DOMAIN_CASES,
                         ids=[f"{c}-{p}-{t.rsplit(':', 1)[-1]}" for c, t, p, _ in DOMAIN_CASES])
def test_a_domain_reading_is_recorded_only_from_the_answer(check: str, target: str, point: str,
                                                           readings: set[str] | str) -> None:
    where = target if ":" in target else f"python:test_memorizz_readings:{target}"
    outcome = execute_run(["memorizz"], where, Profile.named("ci"), report_dir=None, check_ids=[check])
    (result,) = outcome.results
    seen = {s for r in outcome.readings if r["point"] == point for s in r["seen"]}
    if isinstance(readings, str):  # fits no reading: the check fails through the branch written for it
        assert result.outcome is Outcome.FAILED, result.reason
        matching = [f for f in result.failures if readings in f.title]
        assert matching, [f.title for f in result.failures]
        if point in ("M61", "M9"):  # the failure names every accepted reading
            assert all(point in str(f.expected) for f in matching), [f.to_json() for f in matching]
    else:
        assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
        assert readings <= seen, seen
        other = {"M9": {"namespaces kept", "namespaces rewritten"}}.get(point, set())
        assert not (other - readings) & seen, seen  # the other reading of a point with one answer is not recorded


# ---- every open point a MemoRizz check observes has a test giving each reading's answer and one fitting none --

POINT_TESTS = {
    "M2": "test_readings_observed.py::test_memorizz_m2_key_order_recorded_only_from_the_digest",
    "M4": "test_memorizz_readings.py::test_a_reading_is_recorded_only_from_the_answer",
    "M5": "test_readings_observed.py::test_a_problem_under_an_unpinned_reading_records_what_the_document_shows",
    "M8": "test_readings_observed.py::test_memorizz_m8_a_vector_key_without_embeddings_requested_is_recorded_or_failed_when_pinned",
    "M9": "test_memorizz_readings.py::test_a_domain_reading_is_recorded_only_from_the_answer",
    "M10": "test_memorizz_readings.py::test_a_reading_is_recorded_only_from_the_answer",
    "M35": "test_memorizz_readings.py::test_a_domain_reading_is_recorded_only_from_the_answer",
    "M60": "test_memorizz_readings.py::test_a_domain_reading_is_recorded_only_from_the_answer",
    "M61": "test_memorizz_readings.py::test_a_domain_reading_is_recorded_only_from_the_answer",
    "M62": "test_memorizz_readings.py::test_a_domain_reading_is_recorded_only_from_the_answer",
    "M34": "test_memorizz_partial_restore.py::test_the_batch_check_accepts_the_store_refusal_with_progress_and_keeps_the_rest",
}


def observed_points() -> set[str]:
    """The points suites/memorizz observes: `observe("M..")` in a check, and the `"M..:reading"` a scanner rule
    holds under (document.py observes those through a variable)."""
    import re
    from pathlib import Path

    import memconform.suites.memorizz as package

    root = Path(package.__file__).parent
    found: set[str] = set()
    for path in root.rglob("*.py"):
        text = path.read_text("utf-8")
        found |= set(re.findall(r'observe\(\s*(?:ctx,\s*)?"(M\d+)"', text))
        found |= set(re.findall(r'"(M\d+):[a-z][a-z-]*"', text))
    return found


def test_every_observed_point_has_a_readings_test() -> None:
    from pathlib import Path

    from memconform.suites.memorizz.table import TABLE

    points = observed_points() | set(TABLE.points())  # the checks ask the table (suites/memorizz/table.py)
    assert {"M9", "M35", "M60", "M61", "M62"} <= observed_points()  # the scan finds what it must
    assert sorted(points - set(POINT_TESTS)) == [], "open points a MemoRizz check observes with no readings test"
    here = Path(__file__).parent
    for point, where in POINT_TESTS.items():
        file, name = where.split("::")
        assert f"def {name}(" in (here / file).read_text("utf-8"), f"{point}: {where} does not exist"


def test_each_domain_point_has_every_readings_answer_and_one_fitting_none() -> None:
    cases: dict[str, list[set[str] | str]] = {}
    for _, _, point, readings in DOMAIN_CASES:
        cases.setdefault(point, []).append(readings)
    for point, found in cases.items():
        assert any(isinstance(r, str) for r in found), f"{point}: no answer fitting none"
        assert sum(1 for r in found if not isinstance(r, str)) >= 2, f"{point}: not every reading's answer"


class NamespaceSelectsMemories(ReferenceArchiveStore):
    """M61: with a namespace and an agent, the namespace selects the memories and the agent the agents (as the
    memorizz CLI does)."""

    def select(self, body: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        if body.get("memory_id") is None or body.get("agent_id") is None:
            return super().select(body)
        memories = super().select({k: v for k, v in body.items() if k != "agent_id"})
        return {**memories, "agents": super().select(body)["agents"]}


@pytest.mark.parametrize(("target", "reading"), [
    ("reference:memorizz", "a namespace and an agent both narrow"),
    ("python:test_memorizz_readings:NamespaceSelectsMemories", "the namespace selects the memories, the agent the agents")])
def test_a_namespace_with_an_agent_is_recorded_from_the_export(target: str, reading: str) -> None:
    """The rows that tell the two apart are pairs only `default` plans."""
    outcome = execute_run(["memorizz"], target, Profile.named("default", seed=1), report_dir=None,
                          check_ids=["domain_export_selection"])
    (result,) = outcome.results
    assert result.outcome is Outcome.PASSED, [f.to_json() for f in result.failures] or result.reason
    seen = {s for r in outcome.readings if r["point"] == "M61" for s in r["seen"]}
    both = {"a namespace and an agent both narrow", "the namespace selects the memories, the agent the agents"}
    assert seen & both == {reading}
