"""Rules of the house the code itself keeps (issue 30): a check module is imported only by the SuiteSpec's
load_checks (or, for its document checks alone, load_document_checks), so importing one never registers or
reorders another, and the checks run in the order its package's `__init__.py` lists them in `__all__`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from memconform.core.suite import get_suite

ROOT = Path(__file__).resolve().parent.parent
SUITES = ("amps", "emp", "memorizz", "memoryai", "omp")


def registers_checks(source: str) -> bool:
    """Does a module of checks/ register checks (a `@SUITE.check` or a rule table)? One that does not is a
    helper the check modules share (emp's common.py)."""
    return "SUITE.check(" in source or "register_rules(" in source


def imported_modules(source: str, package: str, inside: bool = True) -> set[str]:
    """The modules of `package` (dotted) a module imports, at any depth (inside functions too), absolute or,
    for a module `inside` the package, relative."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name[len(package) + 1:].split(".")[0] for a in node.names if a.name.startswith(package + ".")}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1 and inside:  # from .x import y / from . import x
                found |= {module.split(".")[0]} if module else {a.name for a in node.names}
            elif module == package:
                found |= {a.name for a in node.names}
            elif module.startswith(package + "."):
                found.add(module[len(package) + 1:].split(".")[0])
    return found


def test_the_import_scan_sees_every_form() -> None:
    pkg = "memconform.suites.x.checks"
    source = ("from memconform.suites.x.checks.a import f\n"
              "from memconform.suites.x.checks import b\n"
              "import memconform.suites.x.checks.c\n"
              "from .d import g\n"
              "from . import e\n"
              "def late():\n"
              "    from memconform.suites.x.checks.h import k\n"
              "from memconform.suites.x.client import z\n")
    assert imported_modules(source, pkg) == {"a", "b", "c", "d", "e", "h"}


@pytest.mark.parametrize("suite", SUITES)
def test_no_check_module_imports_another_check_module(suite: str) -> None:
    """Shared helpers live outside the check modules (OMP: dataset.py, importing.py, searching.py, ai_calls.py;
    the others: domain_support.py and the like; emp's helpers register no check: checks/common.py, locking.py,
    writing.py, domain_common.py)."""
    folder = ROOT / "suites" / suite / "checks"
    package = f"memconform.suites.{suite}.checks"
    modules = {p.stem: p.read_text("utf-8") for p in folder.glob("*.py") if p.name != "__init__.py"}
    registering = {name for name, source in modules.items() if registers_checks(source)}
    assert len(registering) >= 5, f"{suite}: the scan found too few check modules ({sorted(registering)})"
    outside = [p for p in (ROOT / "suites" / suite).rglob("*.py") if p.parent != folder]
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_modules(path.read_text("utf-8"), package, path.parent == folder)
                                            & registering)
        for path in [*(folder / f"{m}.py" for m in modules), *outside]
        if path.name != f"test_{suite}.py"
    }
    assert {k: v for k, v in offenders.items() if v} == {}, "import the helper from a module that registers no check"


@pytest.mark.parametrize("suite", SUITES)
def test_checks_register_in_the_order_checks_init_lists_them(suite: str) -> None:
    init = ast.parse((ROOT / "suites" / suite / "checks" / "__init__.py").read_text("utf-8"))
    listed = [ast.literal_eval(item) for node in init.body if isinstance(node, ast.Assign)
              and [getattr(t, "id", None) for t in node.targets] == ["__all__"] and isinstance(node.value, ast.List)
              for item in node.value.elts]
    order: list[str] = []
    for check in get_suite(suite).registered().values():
        module = check.fn.__module__.rpartition(".")[2]
        if module not in order:
            order.append(module)
    assert order == [m for m in listed if m in order] and len(order) >= 5


# a module imported under another name: only these conventions (the suite's format module shadows the builtin
# `format`, so it goes by its suite's name); the state machines (checks/stateful.py) are rewritten elsewhere
CONVENTIONAL_ALIASES = {("hypothesis.strategies", "st"), ("datetime", "dt")} | {
    (f"memconform.suites.{s}.format", s) for s in SUITES}
STATEFUL_EXEMPT = "stateful.py"


def module_file(dotted: str) -> Path | None:
    """Where a memconform module lives in this tree (harness/ is memconform, suites/ memconform.suites)."""
    parts = dotted.split(".")
    if parts[0] != "memconform":
        return None
    base = ROOT / "suites" if parts[1:2] == ["suites"] else ROOT / "harness"
    rest = parts[2:] if parts[1:2] == ["suites"] else parts[1:]
    path = base.joinpath(*rest) if rest else base
    return path if path.is_dir() or path.with_suffix(".py").is_file() else None


def is_module(dotted: str) -> bool:
    if dotted.startswith("memconform."):
        return module_file(dotted) is not None
    import importlib.util

    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


def dotted_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    head = ["memconform", "suites"] if parts[0] == "suites" else ["memconform"]
    return ".".join(head + parts[1:])


def module_aliases(path: Path, source: str) -> list[tuple[str, str]]:
    """(module, alias) for every module this file imports under a name other than its own."""
    found = []
    package = dotted_name(path) if path.name == "__init__.py" else dotted_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name, a.asname) for a in node.names if a.asname and a.asname != a.name.rpartition(".")[2]]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            for a in node.names:
                if a.asname and a.asname != a.name and is_module(f"{base}.{a.name}"):
                    found.append((f"{base}.{a.name}", a.asname))
    return found


def test_the_alias_scan_sees_module_aliases_not_renamed_functions() -> None:
    here = ROOT / "suites" / "omp" / "checks" / "listing.py"
    source = ("from memconform.suites.omp import client as c\n"
              "import memconform.suites.omp.controls as ev\n"
              "from .. import model as m\n"
              "from memconform.suites.omp import format as omp\n"
              "from memconform.suites.omp.rules import sane_page as page\n"
              "import hypothesis.strategies as st\n")
    assert module_aliases(here, source) == [
        ("memconform.suites.omp.client", "c"), ("memconform.suites.omp.controls", "ev"),
        ("memconform.suites.omp.model", "m"), ("memconform.suites.omp.format", "omp"), ("hypothesis.strategies", "st")]


def test_no_module_is_imported_under_a_short_name() -> None:
    """`client as c`, `controls as ev`, `model as m`, `domain_data as dd`: a reader meets the module's own name."""
    offenders = []
    for folder in ("harness", "suites"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == STATEFUL_EXEMPT and path.parent.name == "checks":
                continue
            offenders += [f"{path.relative_to(ROOT)}: {module} as {alias}"
                          for module, alias in module_aliases(path, path.read_text("utf-8"))
                          if (module, alias) not in CONVENTIONAL_ALIASES]
    assert offenders == []


MAX_LINES = 400
# the few modules over MAX_LINES, each with why it is not split yet (ideally none)
LONG_MODULES = {
    "harness/targets/supervise.py": "the cmd: supervisor runs as its own script under `python -I -S` (isolated: no "
                                    "folder on sys.path, no site), so it can import nothing of its own beside the "
                                    "stdlib: a second module of it could not be found",
}
# a package's __init__.py that does more than import and re-export, with why
INIT_WITH_LOGIC = {
    "harness/__init__.py": "the import guard (imported as `harness` the package refuses to load) must run in the "
                           "package root before any module, and __version__ lives there",
}


def init_logic(source: str) -> list[str]:
    """What an __init__.py holds beyond a docstring, imports and `__all__`: each statement's kind and line."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            continue
        found.append(f"{type(node).__name__} at line {node.lineno}")
    return found


def test_the_face_scan_sees_logic() -> None:
    assert init_logic('"""doc"""\nfrom .a import b\n__all__ = ["b"]\n') == []
    assert init_logic("from .a import b\nX = 1\ndef f():\n    pass\nb.y = 2\n") == [
        "Assign at line 2", "FunctionDef at line 3", "Assign at line 5"]


def test_no_module_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): sum(1 for _ in p.open("rb"))
            for folder in ("harness", "suites") for p in (ROOT / folder).rglob("*.py")}
    over = {path: n for path, n in long.items() if n > MAX_LINES}
    assert sorted(set(over) - set(LONG_MODULES)) == [], f"split by topic: {over}"
    assert sorted(set(LONG_MODULES) - set(over)) == [], "an exception no longer needed: drop it from LONG_MODULES"


def test_every_package_init_is_a_face() -> None:
    """A package's __init__.py holds a docstring, imports (re-exports) and `__all__`: readers find the code in the
    module named for it, and importing the package runs nothing else."""
    logic = {str(p.relative_to(ROOT)): init_logic(p.read_text("utf-8"))
             for folder in ("harness", "suites") for p in (ROOT / folder).rglob("__init__.py")}
    assert {path: what for path, what in logic.items() if what and path not in INIT_WITH_LOGIC} == {}
    assert all(logic.get(path) for path in INIT_WITH_LOGIC), "an exception no longer needed"
