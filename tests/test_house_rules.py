"""Rules of the house the code itself keeps (issue 30): a check module is imported only by its package's
`__init__.py`, so importing one never registers or reorders another, and the checks run in the order that
file lists them."""

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
    package = f"memconform.suites.{suite}.checks"
    listed = [a.name for node in init.body if isinstance(node, ast.ImportFrom) and node.module == package
              for a in node.names]
    order: list[str] = []
    for check in get_suite(suite).registered().values():
        module = check.fn.__module__.rpartition(".")[2]
        if module not in order:
            order.append(module)
    assert order == [m for m in listed if m in order] and len(order) >= 5
