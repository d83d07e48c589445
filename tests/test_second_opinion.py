"""Second opinions: each suite against an implementation written from the spec text alone, by someone
who had not read the suite (tests/second_opinion/<spec>/), with the bugs they planted, each chosen by
thinking how implementers get the spec wrong and listed with the sentence it breaks (bugs.json).

`python scripts/second_opinion.py SPEC --record` runs the whole suite clean and with each bug on and
writes what caught each bug to tests/second_opinion/caught.json. This test keeps that table true at the
cost of one check per bug: the check that caught the bug passes on the clean implementation (the
positive control) and fails with the bug on. A bug the suite missed stays a strict xfail naming why,
so the day a check catches it the table must be updated.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

ROOT = Path(__file__).resolve().parents[1]
SO = ROOT / "tests" / "second_opinion"
CAUGHT: dict[str, dict[str, dict[str, Any]]] = json.loads((SO / "caught.json").read_text("utf-8"))


def _driver() -> Any:
    spec = importlib.util.spec_from_file_location("second_opinion_driver", ROOT / "scripts" / "second_opinion.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DRIVER = _driver()


def run_checks(spec: str, bugs: str, checks: list[str], work: Path, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str], options: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """memconform run (in process) of `checks` against the implementation with `bugs` on: check -> outcome."""
    monkeypatch.setenv("SECOND_OPINION_BUGS", bugs)  # cmd: implementations inherit it
    monkeypatch.setenv("SECOND_OPINION_STATE", str(work / "state"))
    impl = DRIVER.Implementation(spec, bugs, work)
    monkeypatch.setenv(impl.bug_env, bugs)  # an in-process target reads its author's variable (launch.json)
    if impl.cwd is not None:
        monkeypatch.chdir(impl.cwd)  # where its module is imported from
    try:
        code = main(["run", "--suite", DRIVER.suite_of(spec), "--target", impl.target, "--profile", "ci", "--report-dir", str(work / "report"),
                     *impl.args, *(a for c in checks for a in ("--check", c)), *(a for o in options for a in ("--option", o))])
    finally:
        impl.close()
        said = capsys.readouterr()
    report = work / "report" / "report.jsonl"
    assert report.is_file(), (f"exit {code}; no {report}; the work folder holds {sorted(str(p.relative_to(work)) for p in work.rglob('*'))[:40]}; "
                              f"stdout {said.out[-2000:]!r}; stderr {said.err[-2000:]!r}")
    lines = [json.loads(line) for line in report.read_text("utf-8").splitlines()]
    return {r["check_id"]: r["outcome"] for r in lines if r.get("type") == "result"}


CASES = [(spec, bug, entry) for spec, bugs in sorted(CAUGHT.items()) for bug, entry in sorted(bugs.items())]


def test_every_planted_bug_is_in_the_table() -> None:
    for spec in sorted(p.name for p in SO.iterdir() if (p / "bugs.json").is_file()):
        planted = {b["name"] for b in json.loads((SO / spec / "bugs.json").read_text("utf-8"))}
        assert planted == set(CAUGHT.get(spec, {})), f"{spec}: run scripts/second_opinion.py {spec} --record"


# (spec, pinned options) -> the checks that caught a bug under them: one clean run each
CONTROLS = sorted({(spec, tuple(e.get("options", ()))) for spec, _, e in CASES if "check" in e})


@pytest.mark.parametrize("spec,options", CONTROLS, ids=[f"{s}{'+' + ','.join(o) if o else ''}" for s, o in CONTROLS])
def test_catching_checks_pass_on_the_clean_implementation(spec: str, options: tuple[str, ...], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    entries = [e for s, _, e in CASES if s == spec and "check" in e and tuple(e.get("options", ())) == options]
    checks = sorted({e["check"] for e in entries})
    before = sorted({c for e in entries for c in e.get("after", ())} - set(checks))  # what a catcher needs run first
    outcomes = run_checks(spec, "", [*before, *checks], tmp_path, monkeypatch, capsys, options)
    assert {c: outcomes.get(c) for c in checks} == {c: "passed" for c in checks}


def _marks(entry: dict[str, Any]) -> list[Any]:
    if "missed" in entry:  # a gap of the suite, named: strict, so the day a check catches it the table must change
        return [pytest.mark.xfail(reason=entry["missed"], strict=True)]
    if "not_a_deviation" in entry:  # the planted "bug" breaks no sentence under any reading: nothing to catch
        return [pytest.mark.skip(reason=entry["not_a_deviation"])]
    return []


@pytest.mark.parametrize("spec,bug,entry", [pytest.param(spec, bug, entry, id=f"{spec}:{bug}", marks=_marks(entry))
                                            for spec, bug, entry in CASES])
def test_planted_bug_is_caught(spec: str, bug: str, entry: dict[str, Any], tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    if "check" not in entry:
        pytest.fail(f"{spec}: {bug} is not caught by any check ({entry.get('missed')})")
    # "after": checks that must run first (a bug that shows only once something was stored)
    checks = [*entry.get("after", ()), entry["check"]]
    outcomes = run_checks(spec, bug, checks, tmp_path, monkeypatch, capsys, entry.get("options", ()))
    assert outcomes.get(entry["check"]) == "failed", (bug, outcomes)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


def test_the_key_is_passed_as_one_argument(tmp_path: Path) -> None:
    """A random key may start with "-" (token_urlsafe's alphabet): `--api-key KEY` would then read it as an
    option and the run end in a usage error; `--api-key=KEY` cannot be misread."""
    impl = DRIVER.Implementation("omp2", "", tmp_path)
    try:
        assert "--api-key" not in impl.args and any(a.startswith("--api-key=") for a in impl.args), impl.args
    finally:
        impl.close()


def test_a_server_started_its_authors_way_gets_a_fresh_key_written_nowhere(tmp_path: Path) -> None:
    """omp3 takes its key from OMP_API_KEY (launch.json): a fresh key per start, in no file of the work
    folder (its log and port file included), and the server answers with it."""
    import urllib.request

    keys = []
    for n in range(2):
        (tmp_path / str(n)).mkdir()
        impl = DRIVER.Implementation("omp3", "", tmp_path / str(n))
        try:
            key = next(a.removeprefix("--api-key=") for a in impl.args if a.startswith("--api-key="))
            keys.append(key)
            assert impl.target.startswith("http://127.0.0.1:"), impl.target
            request = urllib.request.Request(f"{impl.target}/v1/memories", headers={"Authorization": f"Bearer {key}"})
            with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - loopback, the URL the driver built
                assert answer.status == 200
        finally:
            impl.close()
        written = [p.read_bytes() for p in (tmp_path / str(n)).rglob("*") if p.is_file()]
        assert written and not any(key.encode() in data for data in written)
    assert keys[0] != keys[1] and all(len(k) >= 32 for k in keys)
