"""Every suite's state machine is a module-level class (hypothesis's idiom), bound to a run by
`model_based.for_run`: nothing a check learns is closed over by a class built inside a function."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from memconform.core import model_based

ROOT = Path(__file__).resolve().parent.parent
STATEFUL_CHECKS = {  # suite -> (module, machine class)
    "amps": ("memconform.suites.amps.state_machine", "AmpsSubject"),
    "emp": ("memconform.suites.emp.state_machine", "EmpFile"),
    "memorizz": ("memconform.suites.memorizz.state_machine", "Namespace"),
    "memoryai": ("memconform.suites.memoryai.state_machine", "Brain"),
    "omp": ("memconform.suites.omp.state_machine", "OmpMachine"),
}
# classes that can only be made at run time, with why
BUILT_AT_RUN_TIME = {
    ("suites/omp/fuzzing/phases.py", "Machine"): "schemathesis builds its state machine from the OpenAPI document at run time",
    ("suites/omp/fuzzing/wire.py", "TargetTransport"): "a transport closing over the fuzzer's target call",
    ("suites/amps/importing.py", "Handler"): "an HTTP handler of a test server started inside a check (importing.py holds the checks' shared helpers)",
}


def classes_inside_functions() -> set[tuple[str, str]]:
    found = set()
    for path in sorted((ROOT / "suites").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(func):
                    if isinstance(node, ast.ClassDef):
                        found.add((path.relative_to(ROOT).as_posix(), node.name))
    return found


def test_no_suite_defines_a_class_inside_a_function_but_the_listed_ones() -> None:
    assert classes_inside_functions() == set(BUILT_AT_RUN_TIME)


def test_the_scan_sees_a_class_built_inside_a_function() -> None:  # the positive control
    tree = ast.parse("def machine(ctx):\n    class Inner:\n        pass\n    return Inner\n")
    assert [n.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f)
            if isinstance(n, ast.ClassDef)] == ["Inner"]


def test_every_suite_state_machine_is_a_module_level_rule_based_machine() -> None:
    """...in its own module beside the checks: importing the checks (validate does) loads no hypothesis."""
    from hypothesis.stateful import RuleBasedStateMachine

    for suite, (module_name, class_name) in STATEFUL_CHECKS.items():
        module = importlib.import_module(module_name)
        machine = getattr(module, class_name)
        assert issubclass(machine, RuleBasedStateMachine), suite
        assert machine.__qualname__ == class_name, f"{suite}: {machine.__qualname__} is not module level"
        assert "ctx" in machine.__annotations__, f"{suite}: the run's ctx is not declared on the machine"


def test_for_run_binds_each_run_to_its_own_subclass() -> None:
    class Machine:
        ctx: object
        offers_update: bool

    first = model_based.for_run(Machine, "ctx-1", offers_update=True)
    second = model_based.for_run(Machine, "ctx-2", offers_update=False)
    assert issubclass(first, Machine) and issubclass(second, Machine)
    assert (first.ctx, first.offers_update) == ("ctx-1", True)
    assert (second.ctx, second.offers_update) == ("ctx-2", False)
    assert not hasattr(Machine, "ctx")  # the module-level class keeps no run's facts
    assert (first.__name__, first.__qualname__) == (Machine.__name__, Machine.__qualname__)  # hypothesis reports it by name


def test_importing_every_suites_checks_loads_no_hypothesis() -> None:
    import subprocess
    import sys

    code = ("import sys\nfrom memconform.core.suite import get_suite\n"
            + "".join(f"get_suite({suite!r}).load_checks()\n" for suite in STATEFUL_CHECKS)
            + "print('hypothesis' in sys.modules, 'memconform.suites.omp.checks.stateful' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["False", "True"]  # the stateful checks registered, their machines not loaded
