"""Naming a file's format needs each suite's SuiteSpec and format, not its checks: a suite's checks
import the first time they are asked for (SuiteSpec.checks_module); what lives in a checks module (emp's
document_source, memoryai's replay) the SuiteSpec names as `Later("module:attr")`, imported on first call.

Each test runs in a fresh interpreter: this one has every suite's checks loaded already (conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from memconform.core.suite import get_suite, suite_names

SUITES = ("amps", "emp", "memorizz", "memoryai", "omp")


def fresh(code: str) -> dict:
    """What `code` (a Python body ending in `out = {...}`) leaves in `out`, run in a new interpreter."""
    body = textwrap.dedent(code) + "\nimport json; print(json.dumps(out))\n"
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_built_in_suite_names_its_checks_module():
    for name in SUITES:
        assert name in suite_names()
        assert get_suite(name).checks_module == f"memconform.suites.{name}.checks"


def test_loading_every_suite_imports_no_checks():
    out = fresh("""
        import sys
        from memconform.core.suite import all_suites
        names = [s.name for s in all_suites()]
        out = {"names": names, "checks": sorted(m for m in sys.modules if ".checks" in m and m.startswith("memconform.suites."))}
    """)
    assert set(SUITES) <= set(out["names"])
    assert out["checks"] == []


def test_naming_a_format_imports_no_checks(tmp_path):
    """`validate`'s own first step on a MemoRizz archive: every suite's detect, no check module."""
    from memconform.kit.fixtures_loader import fixture_root

    case = json.loads((fixture_root() / "memorizz" / "valid" / "spec-example.json").read_text("utf-8"))
    archive = tmp_path / "archive.json"
    archive.write_text(json.dumps(case["document"]), "utf-8")
    out = fresh(f"""
        import sys
        from pathlib import Path
        from memconform.run.validate import name_format, parse_json
        raw = Path({str(archive)!r}).read_bytes()
        named = name_format(Path("x.json"), raw, parse_json(raw), None)
        out = {{"suite": named.suite.name, "how": named.how,
               "checks": sorted(m for m in sys.modules if ".checks" in m and m.startswith("memconform.suites."))}}
    """)
    assert (out["suite"], out["how"]) == ("memorizz", "detected")
    assert out["checks"] == []


def test_asking_for_one_suites_checks_imports_that_suite_only():
    out = fresh("""
        import sys
        from memconform.core.registry import REGISTRY
        from memconform.core.suite import all_suites
        all_suites()
        count = len(REGISTRY.for_suite("memorizz"))
        out = {"count": count,
               "suites": sorted({m.split(".")[2] for m in sys.modules if m.startswith("memconform.suites.")
                                 and ".checks" in m})}
    """)
    assert out["count"] > 10
    assert out["suites"] == ["memorizz"]


def test_what_lives_in_checks_modules_is_named_on_the_suite_and_imported_late():
    """No checks module sets anything on its SuiteSpec (a package's __init__ holds no logic): the SuiteSpec
    names emp's document source and memoryai's replay, and naming them imports no check."""
    out = fresh("""
        import sys
        from memconform.core.suite import Later, get_suite
        emp, memoryai = get_suite("emp"), get_suite("memoryai")
        named = [repr(emp.document_source), repr(memoryai.replay)]
        loaded = sorted(m for m in sys.modules if m.startswith("memconform.suites.") and ".checks" in m)
        out = {"named": named, "later": [isinstance(emp.document_source, Later), isinstance(memoryai.replay, Later)],
               "loaded": loaded}
    """)
    assert out["later"] == [True, True] and out["loaded"] == []
    assert out["named"] == ["Later('memconform.suites.emp.checks.writer:written_file')",
                            "Later('memconform.suites.memoryai.checks.profile:roundtrip_once')"]


def test_the_same_checks_in_the_same_order_as_importing_the_checks_module():
    """Loading on demand registers exactly what importing the check modules the checks package lists (its
    `__all__`, in order) registers, in run order."""
    out = fresh("""
        import importlib
        from memconform.core.suite import get_suite
        lazy = {n: list(get_suite(n).registered()) for n in ("omp", "emp")}
        out = {"lazy": lazy}
    """)
    eager = fresh("""
        import importlib
        for n in ("omp", "emp"):
            package = importlib.import_module(f"memconform.suites.{n}.checks")
            for module in package.__all__:
                importlib.import_module(f"memconform.suites.{n}.checks.{module}")
        from memconform.core.suite import get_suite
        out = {"eager": {n: list(get_suite(n)._checks) for n in ("omp", "emp")}}
    """)
    assert out["lazy"] == eager["eager"]
    assert all(out["lazy"][n] for n in ("omp", "emp"))


def test_entry_points_read_from_the_folders_are_importlib_metadatas():
    from importlib import metadata

    from memconform.core import suite as suite_module

    ours = {name: ep.value for name, ep in suite_module._entry_points().items()}
    theirs: dict[str, str] = {}
    for ep in metadata.entry_points(group=suite_module.ENTRY_POINT_GROUP):
        theirs.setdefault(ep.name, ep.value)
    assert ours == theirs
    assert set(SUITES) <= set(ours)


def test_an_entry_points_file_is_read_by_its_group_only():
    from memconform.core.entry_point_files import _group_in

    text = ("# a comment\n[console_scripts]\ntoy = toy.cli:main\n\n[memconform.suites]\n"
            "toy = toy_suite.checks:SUITE\n; another comment\nother=pkg.mod:make [extra]\n[pytest11]\nx = y\n")
    assert _group_in(text) == [("toy", "toy_suite.checks:SUITE"), ("other", "pkg.mod:make [extra]")]


def test_a_distribution_found_twice_counts_once_and_the_first_wins(tmp_path, monkeypatch):
    from memconform.core import suite as suite_module

    for folder, value in (("first", "new.mod:SUITE"), ("second", "old.mod:SUITE")):
        dist = tmp_path / folder / "toy_suite-1.0.dist-info"
        dist.mkdir(parents=True)
        (dist / "entry_points.txt").write_text(f"[memconform.suites]\ntoy = {value}\n", "utf-8")
    (tmp_path / "second" / "toy_suite-0.9.dist-info").mkdir()
    (tmp_path / "second" / "toy_suite-0.9.dist-info" / "entry_points.txt").write_text(
        "[memconform.suites]\nstale = old.gone:SUITE\n", "utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "first"), str(tmp_path / "second")])
    assert suite_module._declared_on_sys_path() == [("toy", "new.mod:SUITE")]
    point = suite_module._entry_points()["toy"]
    assert (point.name, point.module) == ("toy", "new.mod")


def test_entry_points_are_read_again_once_a_folder_on_sys_path_changes(tmp_path, monkeypatch):
    """Read once while sys.path and its folders stay as they were; a distribution installed since (its
    folder's modification time changes) or a folder put on sys.path is found."""
    import os

    from memconform.core import entry_point_files
    from memconform.core import suite as suite_module

    reads: list[int] = []
    read = entry_point_files._read_declared
    monkeypatch.setattr(entry_point_files, "_read_declared", lambda: reads.append(1) or read())
    folder = tmp_path / "site"
    (folder / "toy_suite-1.0.dist-info").mkdir(parents=True)
    (folder / "toy_suite-1.0.dist-info" / "entry_points.txt").write_text("[memconform.suites]\ntoy = a.b:SUITE\n", "utf-8")
    monkeypatch.setattr(sys, "path", [str(folder)])
    assert suite_module._declared_on_sys_path() == [("toy", "a.b:SUITE")]
    assert suite_module._declared_on_sys_path() == [("toy", "a.b:SUITE")]
    assert len(reads) == 1  # the second answer came from the first reading
    (folder / "other_suite-2.0.dist-info").mkdir()
    (folder / "other_suite-2.0.dist-info" / "entry_points.txt").write_text("[memconform.suites]\nother = c.d:SUITE\n", "utf-8")
    os.utime(folder, ns=(0, os.stat(folder).st_mtime_ns + 1))  # a coarse clock cannot hide the install
    assert sorted(suite_module._declared_on_sys_path() or []) == [("other", "c.d:SUITE"), ("toy", "a.b:SUITE")]
    second = tmp_path / "more"
    (second / "third_suite-1.0.dist-info").mkdir(parents=True)
    (second / "third_suite-1.0.dist-info" / "entry_points.txt").write_text("[memconform.suites]\nthird = e.f:SUITE\n", "utf-8")
    monkeypatch.setattr(sys, "path", [str(folder), str(second)])
    assert ("third", "e.f:SUITE") in suite_module._declared_on_sys_path()
    assert len(reads) == 3


def test_a_zip_on_sys_path_takes_importlib_metadatas_search(tmp_path, monkeypatch):
    from memconform.core import suite as suite_module

    archive = tmp_path / "lib.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip archive
    monkeypatch.setattr(sys, "path", [*sys.path, str(archive)])
    assert suite_module._declared_on_sys_path() is None
    assert set(SUITES) <= set(suite_module._entry_points())


def test_naming_a_format_does_not_import_importlib_metadata():
    out = fresh("""
        import sys
        from memconform.core.suite import all_suites
        all_suites()
        out = {"imported": "importlib.metadata" in sys.modules}
    """)
    assert out["imported"] is False
