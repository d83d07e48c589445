"""pytest plugin: the same Session, checks, verdicts, exit code and report files as `memconform run`.

    pytest --pyargs memconform.suites.memoryai --mc-target http://127.0.0.1:8000 --mc-profile ci

Precedence: flag > environment (MEMCONFORM_TARGET, ...) > ini (memconform_target, ...) > default.
Outcomes as pytest shows them:
- passed: passed; failed (a deciding check): a pytest failure; errored: a pytest *error* (raised in
  setup); skipped, not applicable or inconclusive: a pytest skip with its reason;
- a target that cannot start (dead, refused key, failed preflight): one `memconform: error:` line and
  the session ends with exit 2, not one identical error per check;
- a failure of a SHOULD/MAY rule that no level requires (a warning; outside `strict`): *xfailed*,
  with "warning" and the failure text as its reason (`pytest -rx` lists them). It is not a pass
  and does not fail the run, exactly as `memconform run` counts it.
When memconform checks ran, pytest's exit status is memconform's exit code (0, 1, 2: the verdict
policy of core/verdicts.py), or 1 when some other test in the same session failed. The header
shows the seed actually used; with --mc-report-dir the plugin writes report.jsonl, junit.xml and
summary.md, as the CLI does.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

SETTINGS = {
    # name: (flag, env, ini, default, help)
    "target": ("--mc-target", "MEMCONFORM_TARGET", "memconform_target", None, "target string (default: reference:<suite>)"),
    "profile": ("--mc-profile", "MEMCONFORM_PROFILE", "memconform_profile", "ci", "profile: ci, default, thorough, strict"),
    "report_dir": ("--mc-report-dir", "MEMCONFORM_REPORT_DIR", "memconform_report_dir", None,
                   "write report.jsonl, junit.xml and summary.md here"),
    "api_key": ("--mc-api-key", "MEMCONFORM_API_KEY", "memconform_api_key", None, "bearer token for the target (redacted)"),
    "seed": ("--mc-seed", "MEMCONFORM_SEED", "memconform_seed", None, "hypothesis seed"),
}
STASH_KEY = pytest.StashKey[dict[str, Any]]()
SUITE_TEST_ATTR = "_memconform_suite"


class CheckErrored(Exception):
    """The target or the harness could not run the check: reported as a pytest error, never a pass."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memconform", "memconform conformance suites")
    for name, (flag, env, ini, default, help_text) in SETTINGS.items():
        group.addoption(flag, dest=f"mc_{name}", default=None, help=f"{help_text} [env {env}, ini {ini}]")
        parser.addini(ini, help=help_text, default=default)
    group.addoption("--mc-option", dest="mc_option", action="append", default=[], metavar="NAME=VALUE",
                    help="a reading of ambiguous spec text (memconform list --options)")
    group.addoption("--mc-require-hooks", dest="mc_require_hooks", action="store_true", default=False,
                    help="a level not assessed for want of a memconform test hook fails the session")


def _setting(config: pytest.Config, name: str) -> tuple[Any, str]:
    flag, env, ini, default, _ = SETTINGS[name]
    value = config.getoption(f"mc_{name}")
    if value is not None:
        return value, flag
    if os.environ.get(env):
        return os.environ[env], f"${env}"
    value = config.getini(ini)
    if value not in (None, ""):
        return value, f"ini {ini}"
    return default, "default"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "memconform(check_id): a memconform conformance check")
    config.stash[STASH_KEY] = {"session": None, "suites": [], "nodeids": set(), "other_failed": False}


def pytest_sessionstart(session: pytest.Session) -> None:
    state = _state(session.config)  # bad settings are a usage error before any test runs
    if state["report_dir"] and not _xdist_worker(session.config):  # workers start after this: no stale part merged
        import shutil
        from pathlib import Path

        from ..run.report_folder import workers_folder

        shutil.rmtree(workers_folder(Path(state["report_dir"])), ignore_errors=True)


def _state(config: pytest.Config) -> dict[str, Any]:
    state = config.stash[STASH_KEY]
    if "profile" in state:
        return state
    from ..core.profile import Profile
    from ..core.results import HarnessError

    name, source = _setting(config, "profile")
    seed, seed_source = _setting(config, "seed")
    options = dict(o.split("=", 1) for o in config.getoption("mc_option") if "=" in o)
    try:
        profile = Profile.named(name, seed=int(seed) if seed else None, options=options)
        profile.require_hooks = bool(config.getoption("mc_require_hooks"))
        profile.validate_options()
    except (HarnessError, ValueError) as exc:
        raise pytest.UsageError(f"memconform: {exc} (profile from {source}, seed from {seed_source})") from None
    state["profile"] = profile
    state["target"] = _setting(config, "target")[0]
    state["api_key"] = _setting(config, "api_key")[0]
    state["report_dir"] = _setting(config, "report_dir")[0]
    return state


def pytest_report_header(config: pytest.Config) -> str:
    state = _state(config)
    profile = state["profile"]
    return (f"memconform: target {state['target'] or 'reference:<suite>'}, profile {profile.name}, "
            f"seed {profile.seed}" + (f", report {state['report_dir']}" if state["report_dir"] else ""))


def pytest_collection_finish(session: pytest.Session) -> None:
    """The suites of the selected checks, in order: the report header names them, as the CLI's does."""
    from ..core.registry import REGISTRY

    state = session.config.stash[STASH_KEY]
    for item in session.items:
        fn = getattr(item, "function", None)
        callspec = getattr(item, "callspec", None)
        if fn is None or callspec is None or not hasattr(fn, SUITE_TEST_ATTR):
            continue
        state["nodeids"].add(item.nodeid)
        suite = REGISTRY.get(callspec.params["check_id"]).suite
        if suite not in state["suites"]:
            state["suites"].append(suite)


def _session(config: pytest.Config) -> Any:
    state = _state(config)
    if state["session"] is None:
        from pathlib import Path

        from ..run.session import Session

        report_dir = Path(state["report_dir"]) if state["report_dir"] else None
        worker = _xdist_worker(config)
        if worker and report_dir is not None:  # pytest-xdist: each worker its own stream, merged at the end
            from ..run.report_folder import workers_folder

            state["session"] = Session(state["suites"], state["target"], state["profile"],
                                       workers_folder(report_dir) / worker, state["api_key"],
                                       command="pytest (memconform plugin)", report_name=report_dir)
            return state["session"]
        state["session"] = Session(state["suites"], state["target"], state["profile"], report_dir, state["api_key"],
                                   command="pytest (memconform plugin)")
    return state["session"]


def suite_tests(suite_name: str) -> Any:
    """The parametrized test for a suite's test module: one pytest test per registered check."""
    from ..core.registry import REGISTRY

    ids = [c.id for c in REGISTRY.for_suite(suite_name)]

    @pytest.mark.parametrize("check_id", ids)
    def test_check(check_id: str, memconform_result: Any) -> None:
        from ..core.results import Outcome
        from ..render.groups import failure_text as render_failure_text

        result = memconform_result
        if result.outcome is Outcome.SKIPPED:
            label = "inconclusive: " if result.inconclusive else "not applicable: " if result.not_applicable else ""
            pytest.skip(label + result.reason)
        if result.outcome is Outcome.FAILED and result.warning:
            pytest.xfail("warning: " + render_failure_text(result.to_json()))
        if result.outcome is Outcome.FAILED:
            pytest.fail(render_failure_text(result.to_json()), pytrace=False)
        assert result.outcome is Outcome.PASSED, result.outcome

    setattr(test_check, SUITE_TEST_ATTR, suite_name)
    return test_check


@pytest.fixture
def memconform_result(request: pytest.FixtureRequest) -> Any:
    from ..core.registry import REGISTRY
    from ..core.results import HarnessError, Outcome
    from ..render.groups import failure_text as render_failure_text

    check = REGISTRY.get(request.node.callspec.params["check_id"])
    session = _session(request.config)
    try:
        result = session.run_check(check)
    except HarnessError as exc:  # a refused key or a dead target: one line and the run ends (exit 2), as the CLI's
        pytest.exit(f"memconform: error: {session.redactor.text(str(exc))}", returncode=2)
    if result.outcome is Outcome.ERRORED:
        raise CheckErrored(render_failure_text(result.to_json()))
    return result



@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    outcome = yield
    rep = outcome.get_result()
    state = item.config.stash.get(STASH_KEY, None)
    if state is not None and rep.failed and item.nodeid not in state["nodeids"]:
        state["other_failed"] = True


def _xdist_worker(config: pytest.Config) -> str | None:
    return getattr(config, "workerinput", {}).get("workerid")


def _merge_xdist(session: pytest.Session, state: dict[str, Any]) -> None:
    """The xdist controller runs no check: it merges the workers' streams into the one report."""
    from pathlib import Path

    from ..run.workers import merge_worker_reports

    if _xdist_worker(session.config) or not state.get("report_dir") or "profile" not in state:
        return
    outcome = merge_worker_reports(Path(state["report_dir"]), state["target"], state["profile"], state["api_key"],
                                   "pytest (memconform plugin, xdist)")
    if outcome is None:
        return
    state["outcome"] = outcome
    state["merged"] = outcome
    if int(session.exitstatus) in (0, 1):
        session.exitstatus = 1 if int(session.exitstatus) == 1 and outcome.exit_code == 0 else outcome.exit_code


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(STASH_KEY, None)
    if state and state["session"] is None:
        _merge_xdist(session, state)
    if not state or state["session"] is None:
        return
    sess = state["session"]
    from ..run.session import Tampered

    try:
        outcome = sess.finish()
    except Tampered as exc:  # the run's folder changed under it: nothing swapped in, exit 2, one line
        import sys

        print(f"memconform: error: {exc}", file=sys.stderr)
        outcome = sess.outcome
    finally:
        sess.close()
    state["outcome"] = outcome
    if int(exitstatus) in (0, 1):  # not interrupted, not a usage or internal error of pytest's own
        session.exitstatus = 1 if state["other_failed"] and outcome.exit_code == 0 else outcome.exit_code


def pytest_terminal_summary(terminalreporter: Any) -> None:
    state = terminalreporter.config.stash.get(STASH_KEY, None)
    if not state or state.get("outcome") is None:
        return
    terminalreporter.section("memconform verdicts")
    from ..core.redact import Redactor
    from ..render.terminal import render_terminal

    report = state["session"].outcome.report if state["session"] is not None else (
        state["merged"].report if state.get("merged") is not None else None)
    redactor = state["session"].redactor if state["session"] is not None else Redactor(
        [state["api_key"]] if state["api_key"] else [])
    if report is not None:  # the layout `memconform run` prints: causes, readings, the verdicts last, the paths
        terminalreporter.write(redactor.text(render_terminal(report, state["report_dir"] or None)))
    elif state["report_dir"]:
        terminalreporter.write_line(f"report: {state['report_dir']}/report.jsonl")
    terminalreporter.write_line(f"memconform exit code: {state['outcome'].exit_code}")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STASH_KEY, None)
    if state and state["session"] is not None:
        state["session"].close()
