import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir
from junit_schema import describe, invalid_junit_files
from memconform.core.suite import all_suites

ROOT = Path(__file__).resolve().parents[1]

# Checks run in the order they register, which is the order each suite's entry module imports its check
# modules. A test module that imports a check module first (test_omp_openapi imports fuzz_checks) would
# register those checks first and change the run order of every later in-process run; load every suite
# through its entry point, with its checks, before any test module is collected, as the CLI and the plugin do.
for _suite in all_suites():
    _suite.load_checks()


# Hypothesis keeps its files (example database, constants cache) in ./.hypothesis unless told otherwise:
# the tests run from the checkout, so they go to a temporary folder of this process (subprocesses inherit it)
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = tempfile.mkdtemp(prefix="memconform-tests-hypothesis-")
    atexit.register(shutil.rmtree, os.environ["HYPOTHESIS_STORAGE_DIRECTORY"], True)
set_hypothesis_home_dir(os.environ["HYPOTHESIS_STORAGE_DIRECTORY"])  # hypothesis's plugin may have read ./ already
# Hypothesis fails an example that takes over 200 ms (its default deadline): a verdict the machine's load decides
# (test_omp_model's paging test failed so at load 30). The tests' own @given run without one, as the profiles'
# runs do (core/profile.py); a test that wants a deadline still names it in its settings.
settings.register_profile("memconform-tests", deadline=None)
settings.load_profile("memconform-tests")

# Check and run budgets are there for hostile targets; a test asserting a verdict must not depend on how busy
# the machine is (a 60 s check budget ran out at load 10-12 on 2 cores). Every run the tests start, in this
# process or a subprocess that inherits the environment, gets the profiles' budgets times ten; a test about
# budgets gives its own on the command line (never scaled) or clears this (zoo_support.run_cli does).
LIFTED_BUDGETS = "10"
os.environ.setdefault("MEMCONFORM_BUDGET_SCALE", LIFTED_BUDGETS)

# `-n auto` (the README's test command) starts two workers more than there are cores. Much of the suite waits
# rather than computes (a target's deadline running out, a server or subprocess answering, a lock on a result
# made once): measured quiet on 2 cores, one worker per core kept 1.1 of the 2 cores busy (pytest 625 s wall for
# ~700 CPU s). Two more workers fill those waits. PYTEST_XDIST_AUTO_NUM_WORKERS still decides when it is set.
EXTRA_WORKERS = 2


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or config.getoption("numprocesses", None) != "auto":
        return None  # xdist's own answer: the variable, or the logical count for -n logical
    return len(os.sched_getaffinity(0)) + EXTRA_WORKERS


CHECKOUT_REPORTS = ROOT / "reports" / "latest"
# tool caches and virtual environments: written by the tools that run the tests, not by the tests
NOT_THE_CHECKOUTS = (".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox")


def checkout_files(root: Path = ROOT) -> dict[str, int]:
    """Every file of the checkout with its modification time (tool caches and virtual environments aside)."""
    found: dict[str, int] = {}
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in NOT_THE_CHECKOUTS and not d.endswith(".egg-info")
                         and not d.lstrip(".").startswith("venv") and not (Path(folder, d) / "pyvenv.cfg").exists()]
        for name in names:
            with contextlib.suppress(OSError):
                found[os.path.relpath(os.path.join(folder, name), root)] = os.stat(os.path.join(folder, name)).st_mtime_ns
    return found


def writes_into_checkout(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """What appeared, changed or went away between two looks at the checkout."""
    return sorted([f"new: {p}" for p in after.keys() - before.keys()]
                  + [f"changed: {p}" for p in after.keys() & before.keys() if after[p] != before[p]]
                  + [f"gone: {p}" for p in before.keys() - after.keys()])


CHECKOUT_BEFORE = checkout_files()


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
    """Nothing written into the checkout; the rest of the temporary tree (tmp_path_factory folders,
    pytester runs): every junit.xml valid under the same schema."""
    written = writes_into_checkout(CHECKOUT_BEFORE, checkout_files())
    if written:  # tests write under tmp_path only: the checkout is read, never written
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            shown = "\n  ".join(written[:20]) + (f"\n  ... {len(written) - 20} more" if len(written) > 20 else "")
            reporter.write_line(f"the tests wrote into the checkout {ROOT}:\n  {shown}", red=True)
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
