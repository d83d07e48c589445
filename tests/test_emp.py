"""Edge Memory Protocol v1.0: reference, mutants, fixture corpus and strategies agree."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.kit.fixtures_loader import iter_cases
from memconform.run.document_run import validate_document
from memconform.run.session import execute_run
from memconform.suites.emp import format as emp
from memconform.suites.emp.format import strategies

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

pytest_plugins = ["pytester"]

CASES = [(p, c) for p, c in iter_cases("emp") if isinstance(c, dict) and "document" in c]
FUZZ = settings(max_examples=40, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# the reference as a command: one real process per operation, so writers contend as separate apps
REFERENCE_CLI = f"cmd:{shlex.quote(sys.executable)} -m memconform.suites.emp.reference {{op}} {{input}} {{output}}"


TITLES: dict[str, set[tuple[str, str]]] = {}  # target -> (check id, failure title) seen, for branch kills


def run_against(target: str, options: dict[str, str] | None = None) -> dict[str, str]:
    outcome = execute_run(["emp"], target, Profile.named("ci", options=options), report_dir=None)
    TITLES[target] = {(r.check_id, f.title) for r in outcome.results for f in r.failures}
    return {r.check_id: r.outcome.value for r in outcome.results}


# One run in a process of its own: runs side by side in threads of one interpreter interfered (CPython
# 3.11's ast.parse, used by traceback formatting and by hypothesis, is not thread-safe: "SystemError: AST
# constructor recursion depth mismatch" errored a random check; the GIL shared by ~40 runs also
# stretched the mutants' timing), so each run gets an interpreter, as a real `memconform run` would.
RUN_ONE = """
import json, sys
from memconform.core.profile import Profile
from memconform.run.session import execute_run

from dataclasses import replace
profile = Profile.named("ci")
# the verdicts are under test, not the machine's load: a run budget no busy machine spends (ci's 240 s was spent
# by ~30 runs' worth of processes on two shared cores, and the last checks errored "not run")
profile.limits = replace(profile.limits, run_deadline_s=900.0)
outcome = execute_run(["emp"], sys.argv[1], profile, report_dir=None)
print(json.dumps({r.check_id: [r.outcome.value, sorted({f.title for f in r.failures}), r.reason] for r in outcome.results}))
"""


def run_in_process(target: str) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", RUN_ONE, target], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    TITLES[target] = {(check, title) for check, (_, titles, _) in results.items() for title in titles}
    REASONS[target] = {check: reason for check, (_, _, reason) in results.items() if reason}
    return {check: outcome for check, (outcome, _, _) in results.items()}


REASONS: dict[str, dict[str, str]] = {}  # target -> check id -> why it errored or was skipped, for messages


@pytest.fixture(scope="module")
def all_outcomes() -> dict[str, dict[str, str]]:
    # each run works in its own temporary files and mostly waits on locks: run them side by side,
    # each in its own process (the threads here only wait for them)
    targets = {"reference-cli": REFERENCE_CLI}
    with ThreadPoolExecutor(max_workers=len(targets)) as pool:
        runs = {name: pool.submit(run_in_process, target) for name, target in targets.items()}
        return {name: run.result() for name, run in runs.items()}


def test_reference_as_a_command_passes_every_check(all_outcomes: dict[str, dict[str, str]]) -> None:
    """One real process per operation, so writers contend as separate apps (in process: the contract test)."""
    outcomes = all_outcomes["reference-cli"]
    ids = {c.id for c in REGISTRY.for_suite("emp")}
    assert set(outcomes) == ids
    assert {k: v for k, v in outcomes.items() if v != "passed"} == {}


@pytest.mark.parametrize("options", [
    {"emp.ts_tie": "later-line", "emp.id_version": "v4", "emp.ts_form": "integer", "emp.encrypted_prefix": "reserved"},
    {"emp.tombstone": "type-tombstone", "emp.stale_lock_s": "60"}, {"emp.tombstone": "deleted-flag", "emp.stale_lock_s": "10"}])
def test_reference_passes_under_other_readings(options: dict[str, str]) -> None:
    outcomes = run_against("reference:emp", options)
    assert outcomes and {k: v for k, v in outcomes.items() if v != "passed" and k != "emp.writer_killed_mid_write"} == {}


@pytest.mark.parametrize("options, verdict", [({}, "passed"), ({"emp.ts_tie": "later-line"}, "failed")])
def test_tie_reading_any_accepts_either_line(options: dict[str, str], verdict: str) -> None:
    outcome = execute_run(["emp"], "python:memconform.suites.emp.mutants:TieKeepsFirstLine",
                          Profile.named("ci", options=options), report_dir=None,
                          check_ids=["emp.reader_equal_ts_tie"])
    assert [r.outcome.value for r in outcome.results] == [verdict]


def test_fixtures_have_both_verdicts() -> None:
    assert {c["verdict"] for _, c in CASES} == {"valid", "invalid"}


def test_fixtures_match_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path

    import memconform
    schema = json.loads((Path(memconform.__file__).parent / "schemas" / "fixtures.schema.json").read_text())
    for _, case in CASES:
        jsonschema.validate(case, schema)


def test_corrupt_line_reported_by_number_and_rest_checked() -> None:
    doc = '{"v":"1.0","id":\n{"v":"1.0","id":"x","ts":1,"src":"com.a.b","content":"c"}\n'
    results = {r.check_id: r for r in validate_document(list(emp.iter_text(doc)), "emp", Profile.named("ci"))}
    assert [f.path for f in results["emp.lines_are_json_objects"].failures] == ["line 1"]
    assert [f.path for f in results["emp.id_uuid4"].failures] == ["line 2"]


def test_detect() -> None:
    assert emp.detect(b'{"v":"1.0","id":"a","ts":1,"src":"com.a.b","content":""}\n')
    assert not emp.detect(b'{"export_version": "0.1"}')


@FUZZ
@given(strategies.files)
def test_strategy_files_are_valid(text: str) -> None:
    for _, _, e in emp.iter_text(text):
        assert isinstance(e, dict) and list(emp.field_errors(e)) == []


@FUZZ
@given(strategies.invalid_lines)
def test_invalid_lines_break_their_check(labelled: tuple[str, str]) -> None:
    check, raw = labelled
    assert check in {rule for rule, _ in emp.field_errors(json.loads(raw))}


def test_resolve_newest_ts_and_tombstones() -> None:
    a = {"v": "1.0", "id": "a", "ts": 2, "src": "com.x.y", "content": "new"}
    lines = [(1, "", a), (2, "", dict(a, ts=1, content="old")), (3, "", "bad"),
             (4, "", {"v": "1.0", "id": "b", "ts": 1, "src": "com.x.y", "content": "gone"}),
             (5, "", emp.tombstone("b", 2, "com.x.y", "type-tombstone"))]
    assert [e["content"] for e in emp.resolve(lines)] == ["new"]


def test_validate_command_streams_the_file_and_reports_line_numbers(tmp_path, capsys) -> None:
    from memconform.cli.inspecting import open_stream
    from memconform.cli.main import main

    good = {"v": "1.0", "id": "6f1c2a4e-8b2d-4c1e-9f3a-2b7d5e6a1c93", "ts": 1, "src": "com.a.b", "content": "c"}
    path = tmp_path / "memory.jsonl"
    path.write_text(json.dumps(good) + "\n" + '{"v":"1.0","id":\n' + json.dumps(dict(good, ts="1")) + "\n")
    name, doc = open_stream(path, None)
    assert name == "emp" and isinstance(doc, emp.LineStream)  # opened, not loaded
    assert main(["validate", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    paths = {r["check_id"]: [f["path"] for f in r["failures"]] for r in report["results"]}
    assert paths == {"emp.lines_are_json_objects": ["line 2"], "emp.ts_millis": ["line 3"]}


def test_file_checks_list_a_bounded_number_of_offenders() -> None:
    bad = json.dumps({"v": "1", "id": "6f1c2a4e-8b2d-4c1e-9f3a-2b7d5e6a1c93", "ts": 1, "src": "com.a.b", "content": ""})
    doc = list(emp.iter_text((bad + "\n") * (emp.REPORT_CAP + 5)))
    results = {r.check_id: r for r in validate_document(doc, "emp", Profile.named("ci"))}
    failures = results["emp.version_format"].failures
    assert len(failures) == emp.REPORT_CAP + 1
    assert failures[-1].received == 5 and failures[0].path == "line 1"


def test_reference_writer_starts_a_new_line_after_a_torn_one(tmp_path) -> None:
    from memconform.suites.emp.reference import ReferenceEmpApp

    path = tmp_path / "memory.jsonl"
    path.write_text('{"v":"1.0","id":"')
    ReferenceEmpApp().append({"path": str(path), "entry": {"id": "6f1c2a4e-8b2d-4c1e-9f3a-2b7d5e6a1c93", "content": "x"}})
    assert [type(e).__name__ for _, _, e in emp.iter_lines(path)] == ["LineError", "dict"]


@FUZZ
@given(st.one_of(strategies.entries, strategies.invalid_lines.map(lambda pair: json.loads(pair[1]))))
def test_fast_path_agrees_with_field_errors(entry: dict) -> None:
    assert emp.line_is_clean(entry) == (list(emp.field_errors(entry)) == [])


@pytest.mark.parametrize("change", [{"ts": True}, {"ts": -1}, {"v": "1.0\n"}, {"v": "01.0"}, {"emb": [True]},
                                    {"tags": "ui"}, {"content": "encrypted:AES:%%"}, {"src": "app"}, {"meta": None},
                                    {"id": "6f1c2a4e-8b2d-4c1e-9f3a-2b7d5e6a1c93\n"}, {"src": "com.a.b\n"}])
def test_fast_path_rejects_what_field_errors_reports(change: dict) -> None:
    entry = {"v": "1.0", "id": "6f1c2a4e-8b2d-4c1e-9f3a-2b7d5e6a1c93", "ts": 1, "src": "com.a.b", "content": "c", **change}
    assert not emp.line_is_clean(entry) and list(emp.field_errors(entry)) != []


def test_a_writer_that_gives_up_cleanly_on_a_held_lock_passes() -> None:
    """errata: after its own timeout a writer may refuse the append, as long as it writes nothing."""
    from memconform.core.runner import Context, run_one
    from memconform.core.suite import get_suite
    from memconform.suites.emp.reference import ReferenceEmpApp
    from memconform.targets.pyobj import PythonTarget

    class GivesUpQuickly(ReferenceEmpApp):
        MAX_WAIT_S = 0.2

    ctx = Context(suite=get_suite("emp"), target=PythonTarget(GivesUpQuickly(), "gives-up"), profile=Profile.named("ci"))
    result = run_one(REGISTRY.get("emp.writer_waits_for_lock"), ctx)
    assert result.outcome.value == "passed", (result.reason, [f.title for f in result.failures])
    assert any("returned before release" in line for line in result.transcript)


def test_pytest_entry_runs_every_check_on_the_reference(pytester) -> None:
    result = pytester.runpytest_subprocess("--pyargs", "memconform.suites.emp", "-q", "-p", "no:cacheprovider")
    # in process there is no writer process to kill: emp.writer_killed_mid_write is not applicable
    result.assert_outcomes(passed=len(REGISTRY.for_suite("emp")) - 1, skipped=1)
