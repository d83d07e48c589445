"""`memconform matrix run` end to end: shards as separate processes in separate folders, combined, equal a
serial run; a planted second-opinion bug is a lone-fail; two readings of one open point make a split.

Each run is cut to one or two checks (`--check`) so the file stays quick; the implementations are real
processes (the second opinions, two small EMP readers) started by the registry entries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memconform.matrix.combine import combine, read_all

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

ROOT = Path(__file__).resolve().parent.parent
SO = ROOT / "tests" / "second_opinion"
FAKE = ROOT / "tests" / "matrix_fake_emp_reader.py"
CMD_TAIL = "{op} {input} {output}"


def entry(id_: str, suite: str, target: str, *, env: dict[str, str] | None = None, linked: tuple[str, ...] = ()) -> str:
    lines = ["[[implementation]]", f'id = "{id_}"', f'name = "{id_}"', 'version = "0.1.0"', 'source = "tests"',
             f'suites = ["{suite}"]', f"target = {json.dumps(target)}", f'claims = {{ {suite} = [] }}',
             f"independent_of = {json.dumps(list(linked))}", 'license = "Apache-2.0"', "ci = true"]
    if env:
        lines.append("env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + " }")
    return "\n".join(lines) + "\n"


def so_cmd(spec: str) -> str:
    return f"cmd:{sys.executable} {SO / spec / 'app.py'} {CMD_TAIL}"


def clean_so(spec: str, id_: str, bugs: str = "", linked: tuple[str, ...] = ()) -> str:
    return entry(id_, spec, so_cmd(spec), env={"SECOND_OPINION_BUGS": bugs, "SECOND_OPINION_STATE": "{workdir}/state"},
                 linked=linked)


def memconform(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SECOND_OPINION_BUGS", "MEMCONFORM_API_KEY")}
    return subprocess.run([sys.executable, "-m", "memconform.cli.main", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """A matrix without the moment it was made (everything else must be equal)."""
    return {k: v for k, v in doc.items() if k != "generated_at"}


# --- shards run anywhere, combined, equal one serial run -----------------------------------------------------
AMPS_CHECKS = ("--check", "amps.delete_cascades", "--check", "amps.schema_valid")


@pytest.fixture(scope="module")
def amps_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("amps-registry")
    path = folder / "implementations.toml"
    path.write_text(entry("reference-amps", "amps", "reference:amps") + clean_so("amps", "so-amps"), "utf-8")
    return path


def test_shards_in_separate_processes_and_folders_combine_to_the_serial_run(amps_registry: Path, tmp_path: Path) -> None:
    plan = memconform("matrix", "plan", "--implementations", str(amps_registry), cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    shards = json.loads(plan.stdout)["include"]
    assert [s["implementation"] for s in shards] == ["reference-amps", "so-amps"]
    env = {k: v for k, v in os.environ.items() if k != "SECOND_OPINION_BUGS"}
    running = [subprocess.Popen([sys.executable, "-m", "memconform.cli.main", "matrix", "run", "--implementations",
                                 str(amps_registry), "--shard", str(s["shard"]), "--out", str(tmp_path / f"machine{s['shard']}"),
                                 *AMPS_CHECKS], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for s in shards]  # at the same time, like jobs of a CI matrix
    for proc in running:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()
    folders = [next((tmp_path / f"machine{s['shard']}" / "shards").iterdir()) for s in shards]
    assert len({f.parent.parent for f in folders}) == 2  # nothing shared
    combined = memconform("matrix", "combine", *map(str, folders), "--out", str(tmp_path / "combined"), cwd=tmp_path)
    assert combined.returncode == 0, combined.stderr
    serial = memconform("matrix", "run", "--implementations", str(amps_registry), "--all", "--jobs", "1",
                        "--out", str(tmp_path / "serial"), *AMPS_CHECKS, cwd=tmp_path)
    assert serial.returncode == 0, serial.stderr
    a = json.loads((tmp_path / "combined" / "matrix.json").read_text("utf-8"))
    b = json.loads((tmp_path / "serial" / "matrix.json").read_text("utf-8"))
    assert comparable(a) == comparable(b)
    assert {x["class"] for x in a["sentences"]} >= {"all-pass"}
    assert all(set(x["outcomes"]) == {"reference-amps", "so-amps"} for x in a["sentences"])
    for name in ("matrix.md", "matrix.html"):
        assert (tmp_path / "combined" / name).read_text("utf-8") .startswith(("# memconform matrix", "<!DOCTYPE html>"))


def test_a_planted_second_opinion_bug_is_a_lone_fail_on_its_sentence(tmp_path: Path) -> None:
    bugs = json.loads((SO / "amps" / "bugs.json").read_text("utf-8"))
    bug = next(b for b in bugs if b["name"] == "cascade_skips_observed")
    registry = tmp_path / "implementations.toml"
    registry.write_text(entry("reference-amps", "amps", "reference:amps") + clean_so("amps", "so-amps")
                        + clean_so("amps", "so-amps-bug", bugs=bug["name"], linked=("so-amps",)), "utf-8")
    done = memconform("matrix", "run", "--implementations", str(registry), "--all", "--jobs", "2",
                      "--out", str(tmp_path / "m"), "--check", "amps.delete_cascades", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "m" / "matrix.json").read_text("utf-8"))
    touched = [x for x in doc["sentences"] if "amps.delete_cascades" in x["checks"]]
    assert touched
    for x in touched:
        assert x["outcomes"] == {"reference-amps": "passed", "so-amps": "passed", "so-amps-bug": "failed"}, x
        assert x["class"] == "lone-fail"
    assert doc["sentences"][0]["class"] == "lone-fail"  # nothing else disagrees: it leads the queue
    others = [x for x in doc["sentences"] if "amps.delete_cascades" not in x["checks"]]
    assert all(x["class"] == "not assessed" for x in others)  # the checks not run decide nothing


# --- two readings of one open point ----------------------------------------------------------------------
def fake_reader(id_: str, form: str) -> str:
    return entry(id_, "emp", f"cmd:{sys.executable} {FAKE} --tombstone {form} {CMD_TAIL}")


@pytest.fixture(scope="module")
def tombstone_shards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tombstones")
    registry = folder / "implementations.toml"
    registry.write_text(entry("reference-emp", "emp", "reference:emp") + clean_so("emp", "so-emp")
                        + fake_reader("fake-flag-reader", "flag") + fake_reader("fake-type-reader", "type"), "utf-8")
    done = memconform("matrix", "run", "--implementations", str(registry), "--all", "--jobs", "2", "--out",
                      str(folder / "m"), "--check", "emp.reader_tombstone_deletes", cwd=folder)
    assert done.returncode == 0, done.stderr
    return {p.name.split("-", 1)[1].rsplit("-emp-", 1)[0]: p for p in (folder / "m" / "shards").iterdir()}


def test_two_readings_each_followed_twice_make_a_split_and_a_flagged_row(tombstone_shards: dict[str, Path]) -> None:
    doc = combine(read_all(list(tombstone_shards.values())))
    row = next(r for r in doc["readings"] if r["point"] == "E1")
    assert row["readings"] == {"deleted-flag": ["fake-flag-reader", "reference-emp"],
                               "type-tombstone": ["fake-type-reader", "so-emp"]}
    assert row["needs_erratum"] is True
    assert row["erratum"]["href"].startswith("errata/emp/errata.md#e1-")
    split = [x for x in doc["sentences"] if "emp.reader_tombstone_deletes" in x["checks"]]
    assert split and all(x["class"] == "split" for x in split)
    assert doc["sentences"][0]["class"] == "split"
    groups = split[0]["groups"]
    assert [g["readings"] for g in groups] == [{"E1": ["deleted-flag"]}, {"E1": ["type-tombstone"]}]
    assert all(g["side"] == "pass" and g["independent"] == 2 for g in groups)
    exchanges = [g["exchange"] for g in groups]  # one exchange per group, side by side
    assert all(e and e["check"] == "emp.reader_tombstone_deletes" and e["transcript"] for e in exchanges), exchanges
    assert {e["implementation"] for e in exchanges} <= {i for g in groups for i in g["implementations"]}


def test_one_implementation_per_reading_is_no_split(tombstone_shards: dict[str, Path]) -> None:
    doc = combine(read_all([tombstone_shards["fake-flag-reader"], tombstone_shards["fake-type-reader"]]))
    row = next(r for r in doc["readings"] if r["point"] == "E1")
    assert row["needs_erratum"] is False  # two readings, but neither followed by two implementations
    touched = [x for x in doc["sentences"] if "emp.reader_tombstone_deletes" in x["checks"]]
    assert touched and all(x["class"] == "all-pass" and x["disagreement"] == 1.0 for x in touched)


def test_shared_code_counts_once(tombstone_shards: dict[str, Path]) -> None:
    """The same split, but the fakes declared as sharing code with the implementation of their reading."""
    from memconform.matrix.shards import read_input

    shards = [read_input(p) for p in tombstone_shards.values()]
    for s in shards:
        if s.implementation.startswith("fake-"):
            s.entry["independent_of"] = ["reference-emp" if "flag" in s.implementation else "so-emp"]
    doc = combine(shards)
    assert not any(r["needs_erratum"] for r in doc["readings"])
    assert not any(x["class"] == "split" for x in doc["sentences"])


# --- started processes: errors named, nothing left behind ----------------------------------------------
def started_entry(id_: str, code: str) -> str:
    text = entry(id_, "amps", "http://127.0.0.1:{port}")
    return text + f'start = ["{sys.executable}", "-c", {json.dumps(code)}, "{{workdir}}", "{{port}}"]\n'


def test_an_implementation_that_exits_at_start_is_an_errored_shard_with_its_output(tmp_path: Path) -> None:
    registry = tmp_path / "implementations.toml"
    registry.write_text(started_entry("crashes", "import sys; print('no config file', file=sys.stderr); sys.exit(3)"), "utf-8")
    done = memconform("matrix", "run", "--implementations", str(registry), "--all", "--out", str(tmp_path / "m"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "m" / "matrix.json").read_text("utf-8"))
    [run] = doc["implementations"][0]["runs"]
    assert run["status"] == "errored" and "exited with 3" in run["reason"] and "no config file" in run["reason"]
    assert all(x["class"] == "not assessed" for x in doc["sentences"])


def test_a_terminated_run_stops_the_implementations_it_started(tmp_path: Path) -> None:
    import signal
    import time

    # its pid as this test sees it: inside a PID namespace of its own os.getpid() is not (/proc is the host's)
    sleeper = ("import os, sys, time; open(os.path.join(sys.argv[1], 'pid'), 'w').write(os.readlink('/proc/self')); "
               "time.sleep(120)")
    registry = tmp_path / "implementations.toml"
    registry.write_text(started_entry("never-answers", sleeper), "utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "memconform.cli.main", "matrix", "run", "--implementations", str(registry),
                             "--all", "--out", str(tmp_path / "m")], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (found := list(tmp_path.glob("/".join(("m", "shards", "*", "work", "pid"))))) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert found, "the implementation never started"
    time.sleep(0.3)  # its pid written whole
    child = int(found[0].read_text())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(child, signal.SIGKILL)
    raise AssertionError("the started implementation outlived the run")


def test_a_fresh_key_per_shard_reaches_the_implementation_and_the_run_and_no_report(tmp_path: Path) -> None:
    keeper = "import sys, time; open(sys.argv[1] + '/key', 'w').write(sys.argv[2]); time.sleep(60)"
    registry = tmp_path / "implementations.toml"
    registry.write_text(entry("keyed", "amps", "reference:amps")
                        + f'start = ["{sys.executable}", "-c", {json.dumps(keeper)}, "{{workdir}}", "{{key}}"]\n', "utf-8")
    done = memconform("matrix", "run", "--implementations", str(registry), "--all", "--out", str(tmp_path / "m"),
                      "--check", "amps.schema_valid", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [shard] = list((tmp_path / "m" / "shards").iterdir())
    key = (shard / "work" / "key").read_text()
    assert len(key) >= 24
    report = (shard / "report" / "report.jsonl").read_text("utf-8")
    assert '--api-key \\"$MEMCONFORM_API_KEY\\"' in report  # the run was keyed
    for path in [*tmp_path.rglob("*.json*"), *tmp_path.rglob("*.md"), *tmp_path.rglob("*.html"), shard / "run.log"]:
        assert key not in path.read_text("utf-8", "replace"), path


def test_a_suite_not_installed_here_is_a_skipped_shard_saying_so(tmp_path: Path) -> None:
    registry = tmp_path / "implementations.toml"
    registry.write_text(entry("elsewhere", "nosuchsuite", "reference:nosuchsuite"), "utf-8")
    done = memconform("matrix", "run", "--implementations", str(registry), "--all", "--out", str(tmp_path / "m"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "m" / "matrix.json").read_text("utf-8"))
    assert doc["implementations"][0]["runs"] == [{"suite": "nosuchsuite", "seed": 20260528, "status": "skipped",
                                                  "reason": "suite 'nosuchsuite' is not installed here"}]
    assert doc["suites"] == [] and doc["sentences"] == []
