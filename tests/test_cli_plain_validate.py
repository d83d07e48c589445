"""`memconform validate` read without the whole command line (harness/cli/main.py `plain_validate`): the
same namespace as the full parser wherever it reads the line, the full parser (and its messages)
everywhere else, and a validation that imports none of the other subcommands' machinery."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import build_parser, plain_validate
from memconform.kit.fixtures_loader import fixture_root

READ_PLAINLY = [
    ["validate", "f.json"],
    ["validate", "f.json", "--format", "memoryai"],
    ["validate", "--format=amps", "f.json", "--json"],
    ["validate", "f.json", "--max-bytes", "10", "--profile", "strict"],
    ["validate", "f.json", "--option", "memoryai.dna_rule=type-only", "--check", "a", "--check", "memoryai.b"],
    ["validate", "f.json", "--form", "emp"],  # an abbreviation both parsers read alike
    ["validate", "-"],
    ["validate", "--json", "--max-bytes=12", "f.json", "--json", "--f=memorizz", "--format", "emp"],  # the last wins
    ["validate", "f.json", "--opt", "a=b", "--option=c=d", "--ch=x", "--p", "strict", "--m", " 7 "],
]
LEFT_TO_THE_FULL_PARSER = [
    [], ["run"], ["list"], ["validate"], ["validate", "-h"], ["validate", "f.json", "--help"], ["validate", "--he"],
    ["validate", "f.json", "--bogus"], ["validate", "f.json", "g.json"], ["validate", "f.json", "--max-bytes", "x"],
    ["validate", "--", "f.json"], ["validate", "f.json", "--format"], ["--help", "validate"],
    ["validate", "f.json", "--json=yes"], ["validate", "f.json", "--format", "--json"], ["validate", "f.json", "-x"],
    ["validate", "f.json", "--check", "-x"], ["validate", "-5"], ["validate", "f.json", "--max-bytes=1e3"],
    ["validate", "f.json", "--h"], ["Validate", "f.json"],
    ["validate", "f.json", "--format="], ["validate", "", "--check", ""],  # empty values: argparse takes them, left
]


@pytest.mark.parametrize("argv", READ_PLAINLY)
def test_the_plain_reading_is_the_full_parsers(argv: list[str]) -> None:
    plain = plain_validate(argv)
    assert plain is not None
    assert vars(plain) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", LEFT_TO_THE_FULL_PARSER)
def test_anything_else_is_left_to_the_full_parser(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert plain_validate(argv) is None
    assert capsys.readouterr() == ("", "")  # nothing printed: the full parser words any error or help


def test_a_valid_file_is_validated_without_the_run_or_report_machinery(tmp_path: Path) -> None:
    case = json.loads((fixture_root() / "memoryai" / "valid" / "full_bundle_all_sections.json").read_text("utf-8"))
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(case["document"]), encoding="utf-8")
    code = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from memconform.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            code = main(["validate", {str(path)!r}])
        print(json.dumps({{"code": code, "printed": printed.getvalue(), "modules": sorted(sys.modules)}}))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["code"] == 0 and "memoryai valid" in out["printed"]
    loaded = set(out["modules"])
    for heavy in ("memconform.run.session", "memconform.core.report", "memconform.render", "memconform.matrix",
                  "memconform.portability", "memconform.suites.omp.client", "memconform.suites.amps.client",
                  "httpx", "rich"):
        assert heavy not in loaded, heavy
    assert "memconform.suites.memoryai.checks.document" in loaded  # a positive control: the checks did run


SUITE_NAMES = ("amps", "emp", "memorizz", "memoryai", "omp")
# what no validation needs: a run's machinery, the other subcommands', the property-based and HTTP
# libraries, packaging metadata (entry points are read from the files), a suite's reference or mutants
NEVER_ON_THE_VALIDATE_PATH = (
    "memconform.run.session", "memconform.core.report", "memconform.render", "memconform.matrix",
    "memconform.portability", "memconform.cli.run", "memconform.cli.reporting", "memconform.cli.matrix",
    "memconform.targets.http", "memconform.targets.command", "memconform.targets.lines", "httpx", "hypothesis",
    "pydantic", "rich", "importlib.metadata", "asyncio", "sqlite3", "ssl",
    "importlib.resources", "tempfile", "shutil",  # shipped data is read from its path (kit/domain.py's schema aside)
    "jsonschema")  # the suites' own domain tables are held to their schema by the tests, not at each start
# what judging a valid document of a suite does not need: its table of readings (asked only when a problem holds
# under a reading, or a digest differs by key order), the model, client and domain table that table is built from
NOT_FOR_A_VALID_DOCUMENT = {
    "amps": ("memconform.suites.amps.readings", "memconform.suites.amps.table", "memconform.kit.domain",
             "memconform.kit.batch_failures"),
    "memoryai": ("memconform.suites.memoryai.model", "memconform.suites.memoryai.client", "memconform.kit.domain",
                 "memconform.kit.batch_failures", "memconform.core.oracle"),
    "memorizz": ("memconform.suites.memorizz.readings", "memconform.suites.memorizz.reading_kinds",
                 "memconform.suites.memorizz.model", "memconform.suites.memorizz.client", "memconform.kit.domain",
                 "memconform.kit.batch_failures", "memconform.core.readings", "memconform.core.messages", "secrets"),
}


def modules_after(argv: list[str]) -> dict[str, Any]:
    """The exit code, what was printed and every module imported, of `memconform ARGV` in a fresh interpreter."""
    code = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from memconform.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            code = main({argv!r})
        print(json.dumps({{"code": code, "printed": printed.getvalue(), "modules": sorted(sys.modules)}}))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_validating_each_format_imports_only_its_own_checks_and_nothing_heavy(suite: str, tmp_path: Path) -> None:
    case = sorted((fixture_root() / suite / "valid").glob("*.json"))[0]
    document = json.loads(case.read_text("utf-8"))["document"]
    path = tmp_path / "document.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    out = modules_after(["validate", str(path)])
    assert out["code"] == 0 and f"{suite} valid" in out["printed"], out["printed"]
    loaded = set(out["modules"])
    assert not loaded & set(NEVER_ON_THE_VALIDATE_PATH), sorted(loaded & set(NEVER_ON_THE_VALIDATE_PATH))
    others = [m for m in loaded if m.startswith("memconform.suites.") and m.count(".") > 2
              and m.split(".")[2] != suite and m.split(".")[3] != "detect"]
    assert others == [], others  # the other formats are asked by their Detector alone (suites/<name>/detect.py)
    asked = {m.split(".")[2] for m in loaded if m.startswith("memconform.suites.") and m.endswith(".detect")}
    assert asked == set(SUITE_NAMES)  # a positive control: every suite was asked
    assert not [m for m in loaded if m.startswith((f"memconform.suites.{suite}.reference", f"memconform.suites.{suite}.mutants"))]
    assert any(m.startswith(f"memconform.suites.{suite}.checks.") for m in loaded)  # a positive control: checks ran
    assert not loaded & set(NOT_FOR_A_VALID_DOCUMENT.get(suite, ())), sorted(loaded & set(NOT_FOR_A_VALID_DOCUMENT[suite]))


def test_version_builds_no_parser_and_loads_no_suite() -> None:
    out = modules_after(["--version"])
    assert out["code"] == 0 and out["printed"].startswith("memconform ")
    loaded = set(out["modules"])
    assert not [m for m in loaded if m.startswith("memconform.suites.")]
    assert not loaded & set(NEVER_ON_THE_VALIDATE_PATH)
    assert "argparse" not in loaded and "gettext" not in loaded  # nor the parser's module


# a bundle that shows a reading of E1 (non-ASCII content and a float): its checksum is judged by E1's rows alone
E1_CASE = textwrap.dedent("""
    import json, sys
    from memconform.suites.memoryai import bundle_rules, readings
    from memconform.suites.memoryai import format as memoryai
    from memconform.suites.memoryai.options import OPTIONS

    class Recorder:  # the check context's part the checksum rule uses
        def __init__(self):
            self.seen = []
        def option(self, name):
            return OPTIONS.defaults()[name]
        def reading(self, point, name):
            self.seen.append([point, name])

    doc = readings.example_bundle([readings.example_chunk("café ✓", importance=0.5)])
    doc["manifest"]["checksum"] = memoryai.checksum(doc, "ascii", "python")
    ctx = Recorder()
    failures = list(bundle_rules.checksum_of(doc, ctx))
    before = sorted(sys.modules)
    tampered = dict(doc, manifest=dict(doc["manifest"], checksum="0" * 64))
    refused = list(bundle_rules.checksum_of(tampered, Recorder()))
    rows = [[row.point, row.name] for row in readings.TABLE.of("E1")]
    print(json.dumps({"failures": len(failures), "seen": ctx.seen, "modules": before, "refused": len(refused),
                      "rows": rows}))
""")


def test_a_memoryai_checksum_is_judged_by_e1s_rows_without_the_rest_of_the_table() -> None:
    """The reading recorded is the full table's (E1's first accepted row whose digest is the one claimed), and
    judging it imported none of what the other points' rows are made of; a wrong digest still fails."""
    done = subprocess.run([sys.executable, "-c", E1_CASE], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["failures"] == 0 and out["refused"] == 1  # a positive control: the rule can fail
    assert ["E1", "ascii-escapes"] in out["rows"]
    assert out["seen"] == [["E1", "ascii-escapes"]]
    loaded = set(out["modules"])
    assert not loaded & set(NOT_FOR_A_VALID_DOCUMENT["memoryai"]), sorted(loaded & set(NOT_FOR_A_VALID_DOCUMENT["memoryai"]))


# what a `validate` of a MemoRizz archive read in windows does not need beside NEVER_ON_THE_VALIDATE_PATH and
# NOT_FOR_A_VALID_DOCUMENT (issue 33: memorizz's own validate_archive >= 10x the whole process at 10k records):
# argparse with gettext (a validate line is read by plain_validate), decimal (the number rules' writer: only a
# float they write), the secret forms (a run's secrets), calendar with locale, shlex (a replay line)
NOT_FOR_A_PLAIN_ARCHIVE = ("argparse", "gettext", "locale", "calendar", "decimal", "shlex", "base64", "bisect",
                           "memconform.core.secret_forms", "memconform.core.readings")
ARCHIVE_RUN = textwrap.dedent("""
    import contextlib, io, json, runpy, sys
    sys.argv = ["memconform", "validate", sys.argv[1]]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        try:
            runpy.run_module("memconform", run_name="__main__", alter_sys=True)  # as `python -m memconform`
        except SystemExit as exc:
            code = exc.code
    print(json.dumps({"code": code, "printed": printed.getvalue(), "modules": sorted(sys.modules)}))
""")


def sealed_archive(records: int) -> dict[str, Any]:
    from memconform.suites.memorizz import format as mz

    archive = mz.empty_archive(created_at="2026-05-01T12:00:00+00:00", memorizz_version="0.17.16",
                               source_provider="FileSystemProvider")
    stores = [s for s in mz.STORES if s != "agents"]
    for i in range(records):
        rid = f"{i:08x}-859c-4cde-9921-0123456789ab"
        data = {"_id": rid, "id": rid, "memory_id": f"ns-{i % 7}", "importance": round(0.05 + i % 90 / 100, 2),
                "content": f"note {i}: the release window moved after review, Ünïcode ☂ " * 4}
        archive["stores"][stores[i % len(stores)]].append({"id": rid, "data": data})
    return mz.seal(archive)


def archive_run(path: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", ARCHIVE_RUN, str(path)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_a_memorizz_archive_read_in_windows_loads_only_what_judging_it_needs(tmp_path: Path) -> None:
    """`python -m memconform validate ARCHIVE` past the window size: valid, read in windows, and none of the
    modules only a run, a failure, another command or a float needing the number rules would use; the same
    archive with one record changed after sealing fails its digest the same way (a negative control)."""
    from memconform.kit.windows.reader import WINDOW_BYTES

    doc = sealed_archive(2400)
    path = tmp_path / "archive.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    assert path.stat().st_size > WINDOW_BYTES  # else the file is read whole and the windows are not what is held
    out = archive_run(path)
    assert out["code"] == 0 and "memorizz valid" in out["printed"], out["printed"]
    loaded = set(out["modules"])
    assert {"memconform.suites.memorizz.format.windows", "memconform.suites.memorizz.checks.document"} <= loaded
    unwanted = set(NEVER_ON_THE_VALIDATE_PATH) | set(NOT_FOR_A_VALID_DOCUMENT["memorizz"]) | set(NOT_FOR_A_PLAIN_ARCHIVE)
    assert not loaded & unwanted, sorted(loaded & unwanted)
    assert "argparse" not in loaded and "memconform.cli.main" in loaded  # the CLI ran, without argparse

    doc["stores"]["summaries"][3]["data"]["content"] += "!"  # the digest no longer covers what is there
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    out = archive_run(path)
    assert out["code"] == 1 and "memorizz.integrity_digest" in out["printed"], out["printed"]
    assert "memconform.suites.memorizz.format.windows" in out["modules"]
