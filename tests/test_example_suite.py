"""A sixth spec shipped by a third party: tests/example_suite is its own distribution, found only
through its `memconform.suites` entry point, and runs through `memconform run`, `list`,
`coverage`, `validate`, `matrix`, `translate`, `port` and the pytest plugin, with no edit outside its package.
ARCHITECTURE.md's "A new spec" names every part it has (a sixth spec needing a part the recipe does not list
fails here).

Installing it is what pip does for a pure package: a `*.dist-info` folder (METADATA,
entry_points.txt) on sys.path beside the code. The entry points are read from the example's own
pyproject.toml, so the recipe in ARCHITECTURE.md is what is tested.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

EXAMPLE = Path(__file__).resolve().parent / "example_suite"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text("utf-8"))["project"]
    site = tmp_path_factory.mktemp("site")
    dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = project["entry-points"]
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in eps.items()) for group, eps in groups.items()))
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(site), str(EXAMPLE)])
    out.pop("MEMCONFORM_API_KEY", None)
    return out


def memconform(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "memconform"), *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_list_shows_the_sixth_suite_beside_the_five(env, tmp_path):
    done = memconform(env, tmp_path, "list", "--json")
    assert done.returncode == 0, done.stderr
    suites = {c["suite"] for c in json.loads(done.stdout)["checks"]}
    assert suites == {"memoryai", "omp", "memorizz", "amps", "emp", "toy"}
    toy = memconform(env, tmp_path, "list", "--suite", "toy")
    assert "toy.add_increases_by_k" in toy.stdout and toy.stdout.rstrip().endswith("3 checks")


def test_run_against_its_reference_passes(env, tmp_path):
    done = memconform(env, tmp_path, "run", "--suite", "toy", "--report-dir", str(tmp_path / "r"))
    assert done.returncode == 0, done.stdout + done.stderr
    results = [json.loads(line) for line in (tmp_path / "r" / "report.jsonl").read_text().splitlines()]
    outcomes = {r["check_id"]: r["outcome"] for r in results if r.get("type") == "result"}
    assert outcomes == {"toy.count_non_negative": "passed", "toy.add_increases_by_k": "passed",
                        "toy.rejects_negative_k": "passed"}


@pytest.mark.parametrize("mutant,killed", [("AddsOneTooMany", "toy.add_increases_by_k"),
                                           ("AcceptsNegative", "toy.rejects_negative_k"),
                                           ("NegativeCount", "toy.count_non_negative")])
def test_run_against_a_mutant_fails_its_check(env, tmp_path, mutant, killed):
    done = memconform(env, tmp_path, "run", "--suite", "toy", "--target", f"python:toy_suite.reference:{mutant}",
                      "--report-dir", str(tmp_path / "r"))
    results = [json.loads(line) for line in (tmp_path / "r" / "report.jsonl").read_text().splitlines()]
    failed = {r["check_id"] for r in results if r.get("type") == "result" and r["outcome"] == "failed"}
    assert failed == {killed}, done.stdout + done.stderr
    # a MUST failure fails the run; the SHOULD one no level's clause lists is a warning (exit 0)
    assert done.returncode == (0 if killed == "toy.rejects_negative_k" else 1)


def test_coverage_reads_its_requirement_map(env, tmp_path):
    done = memconform(env, tmp_path, "coverage", "--suite", "toy", "--json")
    assert done.returncode == 0, done.stderr
    (toy,) = json.loads(done.stdout)["suites"]
    assert (toy["covered"], toy["testable"]) == (3, 3)
    assert toy["by_keyword"]["MUST"] == {"covered": 1, "testable": 1}
    assert [s["id"] for s in toy["unobservable"]] == ["TOY-OPS-03"]
    assert toy["unmapped_checks"] == [] and toy["unknown_checks"] == [] and toy["problems"] == []


def test_requirement_quotes_are_in_its_spec_text():
    text = " ".join((EXAMPLE / "toy_suite" / "SPEC.md").read_text("utf-8").split())
    doc = json.loads((EXAMPLE / "toy_suite" / "requirements.json").read_text("utf-8"))
    assert [s["id"] for s in doc["statements"] if " ".join(s["quote"].split()) not in text] == []


def test_validate_detects_its_documents(env, tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text('{"toy": "counter", "count": 3}')
    bad.write_text('{"toy": "counter", "count": -3}')
    assert memconform(env, tmp_path, "validate", str(good)).returncode == 0
    done = memconform(env, tmp_path, "validate", str(bad))
    assert done.returncode == 1 and "toy.count_non_negative" in done.stdout


def test_the_pytest_plugin_runs_it(env, tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "toy_suite"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


# ---- the features beyond run: matrix, translate, port ---------------------------------------------------------

REGISTRY = """
[[implementation]]
id = "toy-reference"
name = "Toy Counter reference"
version = "0.1.0"
source = "https://example.invalid/toy"
issues = "https://example.invalid/toy/issues"
suites = ["toy"]
target = "reference:toy"
claims = { toy = ["document", "implementation"] }
independent_of = []
license = "Apache-2.0"
ci = true
options = []

[[implementation]]
id = "toy-adds-one-too-many"
name = "Toy Counter, off by one"
version = "0.1.0"
source = "https://example.invalid/toy"
issues = "https://example.invalid/toy/issues"
suites = ["toy"]
target = "python:toy_suite.reference:AddsOneTooMany"
claims = { toy = ["document", "implementation"] }
independent_of = []
license = "Apache-2.0"
ci = true
options = []
"""


def test_matrix_runs_it_beside_a_mutant(env, tmp_path):
    (tmp_path / "implementations.toml").write_text(REGISTRY)
    done = memconform(env, tmp_path, "matrix", "run", "--all", "--implementations", "implementations.toml",
                      "--out", "out")
    assert done.returncode == 0, done.stdout + done.stderr
    matrix = json.loads((tmp_path / "out" / "matrix.json").read_text())
    outcomes = {s["checks"][0]: s["outcomes"] for s in matrix["sentences"]}
    assert outcomes["toy.add_increases_by_k"] == {"toy-reference": "passed", "toy-adds-one-too-many": "failed"}
    assert outcomes["toy.count_non_negative"] == {"toy-reference": "passed", "toy-adds-one-too-many": "passed"}


SAMPLE = EXAMPLE / "toy_suite" / "sample-notes.json"


def test_translate_writes_it_and_reads_it(env, tmp_path):
    there = memconform(env, tmp_path, "translate", str(SAMPLE), "--to", "omp", "--out", "omp.json")
    assert there.returncode == 0, there.stdout + there.stderr
    assert "toy -> omp: 2 records in, 2 out" in there.stdout and "lost      envelope.count" in there.stdout
    omp = json.loads((tmp_path / "omp.json").read_text())
    assert sorted(m["content"] for m in omp["memories"]) == ["buy oat milk", "call Ada about the Zürich trip"]
    back = memconform(env, tmp_path, "translate", "omp.json", "--to", "toy", "--out", "toy.json")
    assert back.returncode == 0, back.stdout + back.stderr
    toy = json.loads((tmp_path / "toy.json").read_text())
    # the note ids come home from the block, meta comes back as it was, the counter is new (the ledger says so)
    assert [(n["id"], n["text"], {k: v for k, v in n.get("meta", {}).items() if k != "memconform_port"})
            for n in toy["notes"]] == [("n1", "buy oat milk", {"colour": "blue"}), ("n2", "call Ada about the Zürich trip", {})]
    assert toy["count"] == 0 and "invented count" in back.stdout


def test_translate_refuses_a_toy_document_its_own_checks_refuse(env, tmp_path):
    """The negative control of the one above: the same sample with a negative count is not translated."""
    bad = json.loads(SAMPLE.read_text())
    bad["count"] = -1
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    done = memconform(env, tmp_path, "translate", "bad.json", "--to", "omp", "--out", "omp.json")
    assert done.returncode == 1 and "toy.count_non_negative" in done.stderr, done.stdout + done.stderr
    assert not (tmp_path / "omp.json").exists()


LEDGER_TRUTH = """
import json, sys
from memconform.portability.formats import formats
from memconform.portability.ledger_truth import judge_ledger
from memconform.portability.matrix import sample_files
from memconform.portability.roundtrip import unpredicted
from memconform.portability.translate import load, translate

out = {"formats": list(formats()), "translations": 0, "checked": 0, "false": [], "unpredicted": [], "refused": []}
# one hop from a document of its own format, as tests/test_portability_ledger_truth.py judges the five: the toy
# sample into every format, and every format's samples into the toy
pairs = [("toy", b, p) for b in formats() if b != "toy" for p in sample_files("toy")]
pairs += [(a, "toy", p) for a in formats() if a != "toy" for p in sample_files(a)]
for a, b, path in pairs:
    fmt, doc = load(path, a)
    tr = translate(doc, fmt, b)
    if tr.output is None:
        out["refused"].append(f"{path.name} {a}->{b}: {tr.refused}")
        continue
    out["translations"] += 1
    verdict = judge_ledger(a, doc, b, tr.output, tr.ledger.to_json())
    out["checked"] += verdict.checked
    out["false"] += [f"{path.name}: {line}" for line in verdict.false]
    found, refused = unpredicted(doc, fmt, b)
    out["unpredicted"] += [f"{path.name}: {line}" for line in found + ([refused] if refused else [])]
print(json.dumps(out))
"""


def test_every_ledger_line_of_its_translations_is_true_and_its_round_trips_predicted(env, tmp_path):
    """The toy's witness (apart from its translator) and the five formats' judge each line of toy -> X and of X -> toy
    from every sample of X; every round trip (A -> B -> A) differs only where a ledger said it would."""
    done = subprocess.run([sys.executable, "-c", LEDGER_TRUTH, str(SAMPLE)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["formats"] == ["memoryai", "omp", "memorizz", "amps", "emp", "toy"]
    assert out["refused"] == [] and out["false"] == [] and out["unpredicted"] == []
    assert out["translations"] >= 30 and out["checked"] > 100


FORGETFUL = """
from toy_suite.reference import ToyCounter


class ForgetsMeta(ToyCounter):
    \"\"\"A Toy Counter that drops every note's meta on load: what port must name as a loss at B.\"\"\"

    def load(self, body=None):
        body = dict(body, notes=[{k: v for k, v in n.items() if k != "meta"} for n in body.get("notes", [])])
        return super().load(body)
"""


def test_port_moves_its_notes_through_another_format_and_back(env, tmp_path):
    done = memconform(env, tmp_path, "port", "--from", "reference:toy", "--to", "reference:amps", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert (result["from"], result["to"], result["ok"], result["findings"]) == ("toy", "amps", True, [])
    into = memconform(env, tmp_path, "port", "--from", "reference:memorizz", "--to", "reference:toy", "--json")
    assert into.returncode == 0, into.stdout + into.stderr


def test_port_names_a_toy_target_that_drops_meta(env, tmp_path):
    """The negative control: a toy target that forgets what `meta` held is a finding at B."""
    (tmp_path / "forgetful.py").write_text(FORGETFUL)
    mine = dict(env, PYTHONPATH=os.pathsep.join([env["PYTHONPATH"], str(tmp_path)]))
    done = memconform(mine, tmp_path, "port", "--from", "reference:omp", "--to", "python:forgetful:ForgetsMeta",
                      "--to-format", "toy", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert findings and {f["where"] for f in findings} <= {"B", "back"} and "B" in {f["where"] for f in findings}


# ---- the recipe: ARCHITECTURE.md's "A new spec" names every part the example has ------------------------------

ARCH = (Path(__file__).resolve().parents[1] / "ARCHITECTURE.md").read_text("utf-8")


def recipe() -> str:
    start = ARCH.index("- **A new spec**")
    return ARCH[start:ARCH.index("\n- **", start + 1)]


def keywords_of(call: str, path: Path) -> set[str]:
    """The keyword arguments of every call of `call` in a module (what the example declares)."""
    return {k.arg for node in ast.walk(ast.parse(path.read_text("utf-8")))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == call for k in node.keywords if k.arg}


def unnamed_files(files: list[str], text: str) -> list[str]:
    return [f for f in files if f"`{f}`" not in text]


def unnamed_declarations(declared: set[str], text: str) -> list[str]:
    return sorted(d for d in declared if not re.search(rf"(?<![\w.]){re.escape(d)}", text))


def test_the_recipe_names_every_file_of_the_example():
    files = sorted(str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*") if p.is_file()
                   and "__pycache__" not in p.parts and p.suffix != ".pyc")
    assert len(files) >= 10
    assert unnamed_files(files, recipe()) == [], "ARCHITECTURE.md's 'A new spec' does not name these parts of tests/example_suite"


def test_the_recipe_names_every_declaration_the_example_makes():
    toy = EXAMPLE / "toy_suite"
    declared = {f"{k}=" for k in keywords_of("SuiteSpec", toy / "checks.py") | keywords_of("Portable", toy / "portability.py")}
    assert {"portability=", "reference=", "mutants=", "mapping=", "export=", "import_=", "witness="} <= declared
    assert unnamed_declarations(declared, recipe()) == [], "ARCHITECTURE.md's 'A new spec' does not name these declarations"


def test_the_recipe_checks_can_fail():
    """Their control: a file or a declaration the recipe does not name is found."""
    assert unnamed_files(["toy_suite/checks.py", "toy_suite/unlisted.py"], recipe()) == ["toy_suite/unlisted.py"]
    assert unnamed_declarations({"mapping=", "unlisted_field=", "name="}, recipe()) == ["unlisted_field="]


def test_the_example_has_one_entry_point_and_nothing_outside_its_package():
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text("utf-8"))
    assert project["project"]["entry-points"] == {"memconform.suites": {"toy": "toy_suite.checks:SUITE"}}
    assert project["tool"]["setuptools"]["packages"] == ["toy_suite"]
