"""pytest plugin: the same checks and verdicts as `memconform run`, as pytest tests.

    pytest --pyargs memconform.suites.memoryai --mc-target http://127.0.0.1:8000 --mc-profile ci

Precedence: flag > environment (MEMCONFORM_TARGET, ...) > ini (memconform_target, ...) > default.
An errored check is a pytest *error* (raised in setup), a failed check a pytest failure, a
skipped or not-applicable check a pytest skip with its reason.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

SETTINGS = {
    # name: (flag, env, ini, default, help)
    "target": ("--mc-target", "MEMCONFORM_TARGET", "memconform_target", None, "target string (default: reference:<suite>)"),
    "profile": ("--mc-profile", "MEMCONFORM_PROFILE", "memconform_profile", "ci", "profile: ci, default, thorough, strict"),
    "report_dir": ("--mc-report-dir", "MEMCONFORM_REPORT_DIR", "memconform_report_dir", None, "write report.jsonl here"),
    "api_key": ("--mc-api-key", "MEMCONFORM_API_KEY", "memconform_api_key", None, "bearer token for the target (redacted)"),
    "seed": ("--mc-seed", "MEMCONFORM_SEED", "memconform_seed", None, "hypothesis seed"),
}
STASH_KEY = pytest.StashKey[dict[str, Any]]()


class CheckErrored(Exception):
    """The target or the harness could not run the check: reported as a pytest error, never a pass."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memconform", "memconform conformance suites")
    for name, (flag, env, ini, default, help_text) in SETTINGS.items():
        group.addoption(flag, dest=f"mc_{name}", default=None, help=f"{help_text} [env {env}, ini {ini}]")
        parser.addini(ini, help=help_text, default=default)
    group.addoption("--mc-option", dest="mc_option", action="append", default=[], metavar="NAME=VALUE",
                    help="a reading of ambiguous spec text (memconform list --options)")


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
    config.stash[STASH_KEY] = {"contexts": {}, "writer": None}


def pytest_sessionstart(session: pytest.Session) -> None:
    _state(session.config)  # bad settings are a usage error before any test runs


def _state(config: pytest.Config) -> dict[str, Any]:
    state = config.stash[STASH_KEY]
    if "profile" in state:
        return state
    from .core.model import HarnessError
    from .core.profile import Profile

    name, source = _setting(config, "profile")
    seed, seed_source = _setting(config, "seed")
    options = dict(o.split("=", 1) for o in config.getoption("mc_option") if "=" in o)
    try:
        state["profile"] = Profile.named(name, seed=int(seed) if seed else None, options=options)
        state["profile"].validate_options()
    except (HarnessError, ValueError) as exc:
        raise pytest.UsageError(f"memconform: {exc} (profile from {source}, seed from {seed_source})") from None
    state["target"] = _setting(config, "target")[0]
    state["api_key"] = _setting(config, "api_key")[0]
    report_dir = _setting(config, "report_dir")[0]
    if report_dir:
        from pathlib import Path

        from .core.redact import Redactor
        from .core.report import ReportWriter

        writer = ReportWriter(Path(report_dir) / "report.jsonl", Redactor([state["api_key"]] if state["api_key"] else []))
        p = state["profile"]
        writer.header(target=state["target"] or "reference:<suite>", suites=[], profile=p.name, seed=p.seed,
                      options=p.effective_options(), command="pytest (memconform plugin)")
        state["writer"] = writer
        state["results"] = []
    return state


def pytest_report_header(config: pytest.Config) -> str:
    profile, _ = _setting(config, "profile")
    target, _ = _setting(config, "target")
    seed, _ = _setting(config, "seed")
    return f"memconform: target {target or 'reference:<suite>'}, profile {profile}, seed {seed or 'profile default'}"


def _context(config: pytest.Config, suite_name: str) -> Any:
    state = _state(config)
    if suite_name not in state["contexts"]:
        from .core.redact import Redactor
        from .core.runner import Context
        from .core.suite import get_suite
        from .session import reproduce_base
        from .targets import open_target

        suite = get_suite(suite_name)
        target_str = state["target"] or f"reference:{suite_name}"
        profile = state["profile"]
        target = open_target(target_str, suite.routes, profile.limits, state["api_key"])
        redactor = Redactor([state["api_key"]] if state["api_key"] else [])
        ctx = Context(suite=suite, target=target, profile=profile, redactor=redactor)
        ctx.reproduce_base = reproduce_base(suite_name, target_str, profile, None, redactor)
        if suite.preflight is not None:
            try:
                suite.preflight(ctx)  # a refused key: every test of the suite errors with this one line
            except Exception:
                target.close()
                raise
        state["contexts"][suite_name] = ctx
    return state["contexts"][suite_name]


def suite_tests(suite_name: str) -> Any:
    """The parametrized test for a suite's test module: one pytest test per registered check."""
    from .core.registry import REGISTRY

    ids = [c.id for c in REGISTRY.for_suite(suite_name)]

    @pytest.mark.parametrize("check_id", ids)
    def test_check(check_id: str, memconform_result: Any) -> None:
        from .core.model import Outcome
        from .core.report import render_failure_text

        result = memconform_result
        if result.outcome is Outcome.SKIPPED:
            pytest.skip(("not applicable: " if result.not_applicable else "") + result.reason)
        if result.outcome is Outcome.FAILED:
            pytest.fail(render_failure_text(result.to_json()), pytrace=False)
        assert result.outcome is Outcome.PASSED, result.outcome

    return test_check


@pytest.fixture
def memconform_result(request: pytest.FixtureRequest) -> Any:
    from .core.model import Outcome
    from .core.registry import REGISTRY
    from .core.report import render_failure_text
    from .core.runner import run_checks

    check = REGISTRY.get(request.node.callspec.params["check_id"])
    ctx = _context(request.config, check.suite)
    result = next(run_checks([check], ctx))
    state = _state(request.config)
    if state.get("writer"):
        state["writer"].result(result)
        state["results"].append(result)
    if result.outcome is Outcome.ERRORED:
        raise CheckErrored(render_failure_text(result.to_json()))
    return result


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STASH_KEY, None)
    if not state:
        return
    writer = state.get("writer")
    if writer:
        from .core.model import Outcome
        from .core.runner import level_verdicts
        from .core.suite import get_suite

        results = state["results"]
        counts = {o.value: sum(1 for r in results if r.outcome is o) for o in Outcome}
        levels = []
        for suite_name in dict.fromkeys(r.suite for r in results):
            own = [r for r in results if r.suite == suite_name]
            levels += [{"suite": suite_name, "level": v.key, "title": v.title, "verdict": v.line()}
                       for v in level_verdicts(get_suite(suite_name), own)]
        notes = [{"suite": name, "note": ctx.redactor.text(n)} for name, ctx in state.get("contexts", {}).items()
                 if ctx.suite.run_notes is not None for n in ctx.suite.run_notes(ctx)]
        writer.footer(counts, levels, 1 if any(r.blocking for r in results) else 0, notes)
        writer.close()
    for ctx in state.get("contexts", {}).values():
        ctx.target.close()
