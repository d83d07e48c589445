"""Options are declared on their suite (suites/<spec>/options.py, held by the SuiteSpec), never in a table an
import fills: every option a check reads is declared on its own suite, an undeclared read fails with a clear
error, and a suite's options are the same before and after its checks load."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from memconform.core.options import Options, OptionSpec
from memconform.core.profile import Profile
from memconform.core.results import HarnessError
from memconform.core.runner import Context
from memconform.core.suite import SuiteSpec, all_suites, get_suite

ROOT = Path(__file__).resolve().parent.parent
SUITES = ("amps", "emp", "memorizz", "memoryai", "omp")


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "text" assignments (an option read through a constant, as large_export's OPTION)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return found


def option_reads(source: str) -> set[str]:
    """The option names a module reads: `x.option("name")` and `option("name")` calls (a literal or a module
    constant), the `PINNED` tables (reading -> (option, value)) and rule gates (`gate=("option", ...)`)."""
    tree = ast.parse(source)
    constants = _constants(tree)
    names: set[str] = set()

    def text(node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called == "option" and node.args and (name := text(node.args[0])) is not None:
                names.add(name)
            for kw in node.keywords:
                if kw.arg == "gate" and isinstance(kw.value, ast.Tuple) and kw.value.elts:
                    if (name := text(kw.value.elts[0])) is not None:
                        names.add(name)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PINNED" for t in node.targets):
            if isinstance(node.value, ast.Dict):
                for value in node.value.values:
                    if isinstance(value, ast.Tuple) and value.elts and (name := text(value.elts[0])) is not None:
                        names.add(name)
    return names


def test_the_scanner_finds_each_form_of_read() -> None:
    """The control of the test below: every form it relies on is seen (a scanner that found nothing would pass it)."""
    source = ('OPTION = "via_constant"\n'
              'PINNED = {"X1:r": ("via_pinned", "r")}\n'
              'def f(ctx, option):\n'
              '    ctx.option("via_ctx"); option("via_function"); ctx.option(OPTION)\n'
              '    Rule(key="k", gate=("via_gate", "v", True))\n')
    assert option_reads(source) == {"via_constant", "via_pinned", "via_ctx", "via_function", "via_gate"}


@pytest.mark.parametrize("suite", SUITES)
def test_every_option_a_suite_reads_is_declared_on_that_suite(suite: str) -> None:
    spec = get_suite(suite)
    reads: dict[str, set[str]] = {}
    uses_large_export = False
    for path in sorted((ROOT / "suites" / suite).rglob("*.py")):
        source = path.read_text("utf-8")
        uses_large_export |= "large_export" in source and "large_export.OPTION_SPEC" not in source
        for name in option_reads(source):
            reads.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    if uses_large_export:  # the kit helper reads its option on the suite's behalf
        reads.setdefault(
            next(iter(option_reads((ROOT / "harness" / "kit" / "large_export.py").read_text("utf-8")))), set()
        ).add("harness/kit/large_export.py")
    assert len(reads) >= 5, f"{suite}: too few option reads found ({sorted(reads)}): the scan is broken"
    undeclared = {name: sorted(where) for name, where in reads.items() if name not in spec.options}
    assert not undeclared, f"{suite} reads options it does not declare in suites/{suite}/options.py: {undeclared}"


@pytest.mark.parametrize("suite", SUITES)
def test_every_option_is_explained_in_the_suites_errata(suite: str) -> None:
    errata = (ROOT / "suites" / suite / "errata.md").read_text("utf-8")
    assert [o.name for o in get_suite(suite).options if o.name not in errata] == []


def test_reading_an_undeclared_option_fails_naming_the_suite_and_what_it_declares() -> None:
    suite = get_suite("emp")
    ctx = Context(suite=suite, target=None, profile=Profile.named("ci"))  # type: ignore[arg-type]
    assert ctx.option("tombstone") == "either"  # the control: a declared one reads its default
    with pytest.raises(HarnessError, match=r"suite 'emp' declares no option 'no_such_option' \(it declares: .*tombstone"):
        ctx.option("no_such_option")


def test_a_value_given_is_resolved_against_its_own_suite_only() -> None:
    profile = Profile.named("ci", options={"emp.tombstone": "deleted-flag"})
    profile.validate_options()
    assert profile.option(get_suite("emp"), "tombstone") == "deleted-flag"
    with pytest.raises(HarnessError, match="unknown profile option"):
        Profile.named("ci", options={"omp.tombstone": "deleted-flag"}).validate_options()
    with pytest.raises(HarnessError, match="is not one of"):
        Profile.named("ci", options={"emp.tombstone": "nope"}).validate_options()


def test_an_option_table_refuses_a_default_outside_its_choices_and_a_name_twice() -> None:
    with pytest.raises(HarnessError, match="not one of its choices"):
        OptionSpec("x", "c", ("a", "b"), "help")
    with pytest.raises(HarnessError, match="declared twice"):
        Options(OptionSpec("x", "a", ("a",), ""), OptionSpec("x", "a", ("a",), ""))
    table = Options(OptionSpec("x", "a", ("a", "b"), ""), OptionSpec("free", "", (), ""))
    assert table.names() == ("x", "free") and "free" in table and table["x"].default == "a"
    assert not hasattr(table, "__setitem__")  # nothing adds to a suite's table after it is made


def test_a_suite_without_options_declares_none() -> None:
    bare = SuiteSpec(name="bare", spec_title="Bare", version="1", levels=[])
    assert len(bare.options) == 0
    with pytest.raises(HarnessError, match="declares no option 'x' \\(it declares: none\\)"):
        bare.option("x")


def test_options_are_the_suites_own_and_loading_checks_adds_none() -> None:
    """No import side effect: each suite's options are whole before its checks import (large_export_mb,
    once declared from a checks module, is among them), and `--option` for it validates before any check
    loads."""
    script = (
        "from memconform.core.suite import all_suites\n"
        "from memconform.core.profile import Profile\n"
        "import memconform.core.profile as p\n"
        "assert not hasattr(p, 'OPTIONS') and not hasattr(p, 'declare_option')\n"
        "Profile.named('ci', options={'omp.large_export_mb': '5'}).validate_options()\n"
        "suites = all_suites()\n"
        "before = {s.name: [(o.name, o.default, o.choices) for o in s.options] for s in suites}\n"
        "assert all(s._checks == {} for s in suites), 'no check loaded yet'\n"
        "for s in suites: s.load_checks()\n"
        "after = {s.name: [(o.name, o.default, o.choices) for o in s.options] for s in suites}\n"
        "assert before == after, (before, after)\n"
        "assert 'large_export_mb' in dict((n, d) for n, d, _ in before['omp'])\n"
        "print('ok', sum(len(v) for v in before.values()))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok ")


def test_no_module_declares_an_option_into_a_shared_table() -> None:
    """`declare_option` is gone from the house: an option lives in its suite's table (ARCHITECTURE.md)."""
    offenders = [str(p.relative_to(ROOT)) for folder in ("harness", "suites") for p in (ROOT / folder).rglob("*.py")
                 if "declare_option" in p.read_text("utf-8")]
    assert offenders == []


def test_list_options_shows_every_suites_table(capsys: pytest.CaptureFixture[str]) -> None:
    from memconform.cli.main import main

    assert main(["list", "--options"]) == 0
    shown = {line.split(" = ", 1)[0] for line in capsys.readouterr().out.splitlines()}
    declared = {f"{s.name}.{o.name}" for s in all_suites() for o in s.options}
    assert shown == declared and "omp.large_export_mb" in shown and "emp.large_export_mb" not in shown


def test_a_run_checks_and_records_the_options_of_the_suites_it_runs(tmp_path: Path) -> None:
    """report.jsonl's header holds every option of the suites run (as run), no other suite's; a value for a
    suite not run is refused as unknown. A run imports no other suite for its options: importing one was seen
    to change a verdict (amps.model_sequences on the LenientValidator mutant after emp's or omp's format loaded)."""
    import json

    from memconform.run.session import execute_run

    profile = Profile.named("ci", options={"emp.tombstone": "deleted-flag"})
    execute_run(["emp"], None, profile, tmp_path / "report", check_ids=["emp.lines_utf8"])
    header = json.loads((tmp_path / "report" / "report.jsonl").read_text("utf-8").splitlines()[0])
    assert header["options"] == {f"emp.{o.name}": ("deleted-flag" if o.name == "tombstone" else o.default)
                                 for o in get_suite("emp").options}
    with pytest.raises(HarnessError, match="unknown profile option"):
        execute_run(["emp"], None, Profile.named("ci", options={"omp.assume_level": "core"}), None)
