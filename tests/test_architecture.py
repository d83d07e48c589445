"""The structure drawn from the code: no import circles, no project module imported by a string,
the core free of pytest, CLI and transports, and ARCHITECTURE.md naming only paths that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# folder -> import name (pyproject.toml [tool.setuptools.package-dir])
PACKAGES = {"harness": "memconform", "suites": "memconform.suites"}


def modules() -> dict[str, Path]:
    found = {}
    for folder, name in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((name, *parts))] = path
    return found


MODULES = modules()


def top_level_imports(name: str, path: Path, lazy: bool = False) -> set[str]:
    """Project modules imported when `name` is imported (module level), or, with lazy=True, also those
    imported inside its functions."""
    tree = ast.parse(path.read_text("utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        if lazy:
            body = [n for n in ast.walk(ast.Module(body=body, type_ignores=[])) if isinstance(n, (ast.Import, ast.ImportFrom))]
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                out.add(base)
                out.update(f"{base}.{a.name}" for a in node.names)

    visit(tree.body)
    return {m for m in out if m in MODULES and m != name}


GRAPH = {name: top_level_imports(name, path) for name, path in MODULES.items()}
LAZY_GRAPH = {name: top_level_imports(name, path, lazy=True) for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]] = GRAPH) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def test_the_scan_sees_the_package():
    assert "memconform.core.runner" in MODULES and "memconform.suites.memoryai.suite" in MODULES
    assert "memconform.core.results" in GRAPH["memconform.core.runner"]


def test_no_import_circles():
    assert cycles() == []


def test_no_import_circles_counting_imports_inside_functions():
    """A lazy import hides a circle from Python, not from a reader: none either."""
    assert cycles(LAZY_GRAPH) == []


# harness/ by role: who may import whom (imports inside functions counted). A role imports only the roles
# below it in this table, so a command module is never a library and the core never reaches up.
ROLES = {
    "core": set(),                                   # outcomes, checks, runner, report stream, JSON reader
    "targets": {"core"},                             # the one seam to an implementation
    "kit": {"core", "targets"},                      # what suites borrow
    "suites": {"core", "kit", "targets"},            # one package per spec
    "render": {"core"},                              # renderings of a report read back
    "run": {"core", "kit", "targets", "render"},     # one run: session, report folder, validate, replay
    "evidence": {"core", "render", "run"},           # certify, attest, verify (certify shows the run's progress)
    "matrix": {"core", "kit", "targets", "render", "run"},       # a shard starts under the cmd: supervisor
    # each suite's portability/ package declares its format (harness/portability/formats.py) and imports the
    # canonical record and the ledger; portability reaches the suites only through the registry in core
    "portability": {"core", "kit", "run", "targets"},
    "cli": {"core", "kit", "targets", "render", "run", "evidence", "matrix", "portability"},
}
# the package's own __init__ (the version) may be read by anyone; a suite's pytest entry file
# (suites/<spec>/test_<spec>.py) is a front door and takes the plugin
TOP = {"memconform"}


# memconform.api (harness/api.py) is a front door beside the command line: the cli role's imports
FRONT_DOORS = {"memconform.api": "cli"}


def role(module: str) -> str | None:
    if module in FRONT_DOORS:
        return FRONT_DOORS[module]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROLES else None


def test_every_harness_module_has_a_role():
    loose = sorted(m for m in MODULES if role(m) is None and m not in TOP | {"memconform.__main__"})
    assert loose == []


def arrows_up(graph: dict[str, set[str]]) -> list[str]:
    upward = set()
    for module, imports in graph.items():
        mine = role(module)
        for imported in imports:
            theirs = role(imported)
            if mine is None or theirs is None or theirs == mine or theirs in ROLES[mine]:
                continue
            if mine == "suites" and module.rpartition(".")[2].startswith("test_") and imported == "memconform.cli.plugin":
                continue
            if mine == "suites" and theirs == "portability" and module.split(".")[3:4] == ["portability"]:
                continue  # suites/<spec>/portability/: the suite's translator and witness, written on the canonical record
            upward.add(f"{module} -> {imported}")
    return sorted(upward)


def test_no_role_imports_one_above_it():
    assert arrows_up(LAZY_GRAPH) == []


def test_the_role_table_catches_an_arrow_up():
    """The rule itself can fail: a core module importing a command, or a feature a command module, is caught."""
    graph = {"memconform.core.runner": {"memconform.cli.main", "memconform.core.report"},
             "memconform.portability.translate": {"memconform.cli.common", "memconform.suites.omp.format"},
             "memconform.suites.omp.checks.listing": {"memconform.portability.canonical"},
             "memconform.suites.omp.portability.translator": {"memconform.portability.canonical"}}
    assert arrows_up(graph) == ["memconform.core.runner -> memconform.cli.main",
                                "memconform.portability.translate -> memconform.cli.common",
                                "memconform.portability.translate -> memconform.suites.omp.format",
                                "memconform.suites.omp.checks.listing -> memconform.portability.canonical"]


def test_core_imports_no_pytest_cli_or_transport():
    banned = re.compile(r"^\s*(import|from)\s+(pytest|httpx|uvicorn|starlette|argparse)\b", re.M)
    offenders = [str(p.relative_to(ROOT)) for m, p in MODULES.items() if m.startswith("memconform.core")
                 and banned.search(p.read_text("utf-8"))]
    assert offenders == []


def string_constants(path: Path) -> list[str]:
    """String literals of a module, docstrings aside."""
    tree = ast.parse(path.read_text("utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def test_no_project_module_is_imported_by_a_string():
    """The harness finds suites, references and mutants through entry points, not a table of names."""
    by_name = re.compile(r"^(python:)?memconform\.(suites|reference|mutants)\.")
    front = ("memconform.core", "memconform.targets", "memconform.cli.main", "memconform.run.session", "memconform.cli.plugin",
             "memconform.run.coverage")
    offenders = [f"{name}: {text!r}" for name, path in MODULES.items() if name.startswith(front)
                 for text in string_constants(path) if by_name.match(text)]
    assert offenders == []


# ---- ARCHITECTURE.md ---------------------------------------------------------------------------------

ARCH = (ROOT / "ARCHITECTURE.md").read_text("utf-8")
# repository paths ARCHITECTURE.md names: `harness/...`, `suites/<spec>/...`, `tests/...` and the like
PATH_RE = re.compile(r"(?<![\w./<])((?:harness|suites|fixtures|tests|errata|bench|reports|\.ci)/[\w./<>*-]*|"
                     r"pyproject\.toml|README\.md|tox\.ini)")


def named_paths() -> list[str]:
    return sorted({m.rstrip(".,") for m in PATH_RE.findall(ARCH)})


def exists(path: str) -> bool:
    """A path with <spec> exists for some spec; one with * matches something."""
    pattern = path.replace("<spec>", "*").replace("<name>", "*")
    if "*" in pattern or "<" in pattern:
        return any(ROOT.glob(re.sub(r"<[^>]+>", "*", pattern)))
    return (ROOT / pattern).exists()


def test_architecture_names_paths():
    assert len(named_paths()) >= 15


@pytest.mark.parametrize("path", named_paths())
def test_every_path_architecture_names_exists(path):
    assert exists(path), f"ARCHITECTURE.md names {path}, which is not in the repository"


def test_readme_says_how_to_drive_every_suite():
    """A newcomer finds each suite's target operations in the README, not only in the errata."""
    readme = (ROOT / "README.md").read_text("utf-8")
    ops = {"memoryai": ["export", "import_bundle"], "memorizz": ["export", "import_archive"],
           "amps": ["import_export", "export", "delete_artifact"], "emp": ["append", "update", "delete", "resolve", "query"],
           "omp": ["/v1/health", "omp.credentials"]}
    from memconform.core.suite import suite_names

    assert set(ops) == set(suite_names())
    paragraphs = readme.split("\n\n")
    for name, words in ops.items():
        found = [p for p in paragraphs if ("operations" in p or "runs against" in p)
                 and all(f"`{w}`" in p or w in p for w in words)]
        assert found, f"README.md: no paragraph gives the {name} target operations {words}"


def test_no_module_a_reader_cannot_hold_in_mind():
    """Cohesion, not a line count, decides a split: a topic that grows becomes a sub-package (suites/omp/checks/,
    suites/omp/fuzzing/). 500 lines is where a module is surely more than one topic."""
    long = {str(p.relative_to(ROOT)): n for p in MODULES.values() if (n := len(p.read_text("utf-8").splitlines())) > 500}
    assert long == {}
