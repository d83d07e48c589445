"""scripts/verdict_snapshot.py `--check`: every name places one check before any row runs; a name that places
none (unknown, a bare name two suites register, a check outside the `--suite` given) is refused with exit 2,
never read as "every check" (issue 35 item 3)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import verdict_snapshot  # noqa: E402

sys.path.pop(0)


@pytest.fixture
def rows_run(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], list[str]]]:
    """The (suites, checks) each snapshot was asked for; no row runs."""
    seen: list[tuple[list[str], list[str]]] = []

    def snapshot(suites: list[str], workers: int, checks: list[str]) -> dict[str, Any]:
        seen.append((suites, checks))
        return {}

    monkeypatch.setattr(verdict_snapshot, "snapshot", snapshot)
    return seen


def _refused(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        verdict_snapshot.main(["--out", str(tmp_path / "s.json"), *argv])
    assert stopped.value.code == 2
    return capsys.readouterr().err


def test_a_check_id_runs_that_check_alone(rows_run, tmp_path: Path) -> None:
    assert verdict_snapshot.main(["--out", str(tmp_path / "s.json"), "--check", "omp.export_document_envelope"]) == 0
    assert rows_run == [(["omp"], ["omp.export_document_envelope"])]


def test_a_bare_name_one_suite_registers_is_resolved_to_its_id(rows_run, tmp_path: Path) -> None:
    assert verdict_snapshot.main(["--out", str(tmp_path / "s.json"), "--check", "export_document_envelope",
                                  "--check", "envelope_version_integer"]) == 0
    assert rows_run == [(["memoryai", "omp"], ["omp.export_document_envelope", "memoryai.envelope_version_integer"])]


def test_a_bare_name_two_suites_register_is_refused_naming_both(rows_run, tmp_path: Path, capsys) -> None:
    err = _refused(["--check", "domain_import_every_class"], tmp_path, capsys)
    assert "more than one suite" in err and "memoryai.domain_import_every_class" in err and "omp.domain_import_every_class" in err
    assert rows_run == []


def test_the_suite_given_decides_a_bare_name_two_suites_register(rows_run, tmp_path: Path) -> None:
    assert verdict_snapshot.main(["--out", str(tmp_path / "s.json"), "--suite", "omp", "--check", "domain_import_every_class"]) == 0
    assert rows_run == [(["omp"], ["omp.domain_import_every_class"])]


@pytest.mark.parametrize("name", ["export_document_envelop", "omp.no_such_check", "nothing_like_it", "omp."])
def test_an_unknown_name_is_refused_before_any_row_runs(rows_run, tmp_path: Path, capsys, name: str) -> None:
    err = _refused(["--check", name], tmp_path, capsys)
    assert f"{name!r} is no check of any suite" in err and rows_run == []


def test_a_near_miss_is_answered_with_the_names_it_may_mean(rows_run, tmp_path: Path, capsys) -> None:
    assert "did you mean export_document_envelope" in _refused(["--check", "export_document_envelop"], tmp_path, capsys)


def test_a_check_outside_the_suites_given_is_refused(rows_run, tmp_path: Path, capsys) -> None:
    err = _refused(["--suite", "memoryai", "--check", "omp.export_document_envelope"], tmp_path, capsys)
    assert "'omp.export_document_envelope' is no check of the suites memoryai" in err
    # the memoryai rows would have run every check: a suite no --check names is refused too
    assert "--suite memoryai: no --check names a check of it" in err
    err = _refused(["--suite", "memoryai", "--suite", "omp", "--check", "omp.export_document_envelope"], tmp_path, capsys)
    assert "--suite memoryai: no --check names a check of it" in err and rows_run == []


def test_an_unknown_suite_beside_a_check_is_refused(rows_run, tmp_path: Path, capsys) -> None:
    assert "unknown suite 'ompp'" in _refused(["--suite", "ompp", "--check", "omp.export_document_envelope"], tmp_path, capsys)


def test_an_unknown_suite_alone_is_refused_not_run_as_no_row(rows_run, tmp_path: Path, capsys) -> None:
    assert "--suite: unknown suite 'ompp'" in _refused(["--suite", "ompp"], tmp_path, capsys) and rows_run == []


def test_without_check_every_check_of_the_suites_runs(rows_run, tmp_path: Path) -> None:
    assert verdict_snapshot.main(["--out", str(tmp_path / "s.json"), "--suite", "omp"]) == 0
    assert rows_run == [(["omp"], [])]
