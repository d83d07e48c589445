from collections.abc import Iterator
from pathlib import Path

import pytest
from junit_schema import describe, invalid_junit_files
from memconform.core.suite import all_suites

ROOT = Path(__file__).resolve().parents[1]

# Checks run in the order they register, which is the order each suite's entry module imports its check
# modules. A test module that imports a check module first (test_omp_openapi imports fuzz_checks) would
# register those checks first and change the run order of every later in-process run; load every suite
# through its entry point before any test module is collected, as the CLI and the plugin do.
all_suites()


CHECKOUT_REPORTS = ROOT / "reports" / "latest"


def _stamp(folder: Path) -> tuple[float, ...]:
    return tuple(sorted(p.stat().st_mtime for p in folder.rglob("*"))) if folder.is_dir() else ()


CHECKOUT_REPORTS_BEFORE = _stamp(CHECKOUT_REPORTS)


@pytest.fixture(autouse=True)
def _reports_outside_the_checkout(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A run with no --report-dir (CLI or plugin) writes under a temporary folder, never reports/latest."""
    monkeypatch.setenv("MEMCONFORM_REPORT_DIR", str(tmp_path_factory.mktemp("reports")))


@pytest.fixture(autouse=True)
def _junit_written_is_valid(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test that used tmp_path: every junit.xml it wrote there is valid under the Jenkins schema."""
    yield
    tmp = request.node.funcargs.get("tmp_path") if hasattr(request.node, "funcargs") else None
    if isinstance(tmp, Path):
        invalid = invalid_junit_files(tmp)
        assert not invalid, "junit.xml invalid under tests/data/junit-10.xsd:\n" + describe(invalid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The rest of the temporary tree (tmp_path_factory folders, pytester runs): the same schema."""
    if _stamp(CHECKOUT_REPORTS) != CHECKOUT_REPORTS_BEFORE:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"a test wrote into the checkout: {CHECKOUT_REPORTS}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    factory = getattr(session.config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None) if factory is not None else None
    if basetemp is None:
        return
    invalid = invalid_junit_files(Path(basetemp))
    if invalid:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("junit.xml invalid under tests/data/junit-10.xsd:\n" + describe(invalid), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
