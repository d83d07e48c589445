"""Every saved failure replays from an installed wheel (issue 31, item 8).

The wheel is built offline (tests/dist_build.py) and installed in a fresh virtual environment, where
memconform comes only from the wheel (its dependencies are this environment's): no suite's checks are
imported in advance, as they are when tests run from the checkout. Against a known-broken mutant, each
suite's model-based check fails and saves its sequence, memoryai's round-trip check saves its
failing example and OMP's fuzzer its failing requests (examples/*.json: a status-code failure, and one each of
invalid data accepted, valid data refused and a request without the key accepted); `memconform replay FILE
--target MUTANT` from the installed CLI reproduces each
(exit 1) and `--target reference:SUITE` finds nothing (exit 0). The figures are printed
(`-s` shows them): reproduced/total per suite.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from actions_local import make_venv
from dist_build import dist_of_the_session, missing_tools

pytestmark = [pytest.mark.slow, pytest.mark.mutants,
              pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools()))]

KEY = ["--api-key", "sk-handed-replay-0123456789"]  # the OMP fuzzer needs a key; the mutants take any
# suite -> (mutant, the check whose failure is saved, the folder it is saved in, extra run words, extra replay words)
SAVED = {
    "memoryai": [("DedupAgainstLastImportOnly", "memoryai.model_sequences", "sequences", [], []),
                 ("RoundtripLosesData", "memoryai.roundtrip_equivalent", "examples", [], ["--suite", "memoryai"])],
    "amps": [("ArtifactsReplacedPerImport", "amps.model_sequences", "sequences", [], [])],
    "memorizz": [("SkipMeansAbort", "memorizz.model_sequences", "sequences", [], [])],
    "emp": [("RewritesFromCache", "emp.writer_model_sequences", "sequences", [], [])],
    "omp": [("stale_search_index", "omp.model_based_sequences", "sequences", [], []),
            ("not_found_as_200", "omp.fuzz_status_codes", "examples", KEY, KEY),
            # judged by how the request was generated: what was judged saved as data (fuzzing/judged.py)
            ("no_validation", "omp.fuzz_negative_data_rejected", "examples", KEY, KEY),
            ("tags_ascii_only", "omp.fuzz_valid_data_accepted", "examples", KEY, KEY),
            ("auth_skipped", "omp.fuzz_ignored_auth", "examples", KEY, KEY)],
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(the folder of the installed `memconform`, the environment to run it in), the wheel's only."""
    work = tmp_path_factory.mktemp("wheel")
    out, returncode, log = dist_of_the_session(tmp_path_factory)
    assert returncode == 0, log[-6000:]
    wheel = next(out.glob("*.whl"))
    bin_dir = make_venv(work / "venv")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCONFORM_", "PIP_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env.update({"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1", "CI": "true"})
    # --ignore-installed: the venv sees the test run's own site-packages (for the dependencies), which in CI hold a
    # plain install of memconform; pip must still put the wheel's copy (and its `memconform` script) in this venv
    pip = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--ignore-installed", str(wheel)],
                         capture_output=True,
                         text=True, env=env, timeout=600, check=False)
    assert pip.returncode == 0, pip.stdout[-2000:] + pip.stderr[-2000:]
    return bin_dir, env


def memconform(installed: tuple[Path, dict[str, str]], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    bin_dir, env = installed
    return subprocess.run([str(bin_dir / "memconform"), *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=900, check=False)


def test_the_installed_cli_is_the_wheels(installed: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    bin_dir, env = installed
    where = subprocess.run([str(bin_dir / "python"), "-c", "import memconform; print(memconform.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=True).stdout
    assert str(bin_dir.parent) in where, where  # not the checkout's editable install


@pytest.mark.parametrize("suite", sorted(SAVED))
def test_every_saved_failure_replays_from_the_installed_wheel(installed: tuple[Path, dict[str, str]], tmp_path: Path,
                                                               suite: str) -> None:
    reproduced, total = 0, 0
    for mutant, check, folder, run_extra, extra in SAVED[suite]:
        target = f"python:memconform.suites.{suite}.mutants:{mutant}"
        report = tmp_path / check
        run = memconform(installed, tmp_path, "run", "--suite", suite, "--target", target, "--check", check,
                         "--profile", "ci", "--report-dir", str(report), *run_extra)
        assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
        saved = sorted((report / folder).glob("*.json"))
        assert saved, (folder, run.stdout[-3000:])
        for path in saved:
            total += 1
            again = memconform(installed, tmp_path, "replay", str(path), "--target", target, *extra)
            assert again.returncode == 1, again.stdout[-3000:] + again.stderr[-2000:]
            assert "no comparator" not in again.stderr and "internal error" not in again.stderr
            reproduced += 1
            clean = memconform(installed, tmp_path, "replay", str(path), "--target", f"reference:{suite}", *extra)
            assert clean.returncode == 0, clean.stdout[-3000:] + clean.stderr[-2000:]
    print(f"replay from the installed wheel: {suite} {reproduced}/{total} reproduced on the mutant, "
          f"0/{total} on the reference")
    assert reproduced == total > 0
