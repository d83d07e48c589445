"""Run a GitHub Actions job's steps on this machine, as far as they can run here: `run:` steps in bash,
memconform's own composite action (action.yml) step by step with its inputs, other `uses:` steps
(checkout, setup-python, upload-artifact, the test-report action) left out and named.

Only the expressions the recipes use are evaluated: `${{ env.NAME }}`, `${{ inputs.NAME }}`,
`${{ steps.ID.outputs.NAME }}`; anything else is an error, so a recipe cannot drift into what this
runner silently skips.
"""

from __future__ import annotations

import re
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUR_ACTION = re.compile(r"^[\w.-]+/memconform@[0-9a-f]{40}$")
_EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def evaluate(text: str, scope: dict[str, dict[str, str]]) -> str:
    def one(m: re.Match[str]) -> str:
        parts = m.group(1).split(".")
        if parts[0] in ("env", "inputs") and len(parts) == 2:
            return scope[parts[0]].get(parts[1], "")
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return scope.get(f"steps.{parts[1]}", {}).get(parts[3], "")
        raise ValueError(f"expression not supported by the local runner: {m.group(0)}")

    return _EXPR.sub(one, text)


def read_outputs(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text("utf-8").splitlines() if "=" in line)


def make_venv(folder: Path) -> Path:
    """A fresh virtual environment that sees this one's installed dependencies (not its memconform: the
    editable install's finder is in a .pth file that a plain path entry does not run)."""
    venv.EnvBuilder(with_pip=True, symlinks=True).create(folder)
    site = next(folder.glob("lib/python*/site-packages"))
    ours = next(p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir() and (p / "hypothesis").is_dir())
    (site / "memconform-test-deps.pth").write_text(str(ours) + "\n")
    return folder / "bin"


def run_bash(script: str, cwd: Path, env: dict[str, str], name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def run_action(step: dict[str, Any], cwd: Path, env: dict[str, str], scope: dict[str, dict[str, str]],
               log: list[str]) -> dict[str, Any]:
    """memconform's composite action: inputs from `with:` (defaults from action.yml), each step in bash."""
    action = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
    given = {k: evaluate(str(v), scope) for k, v in (step.get("with") or {}).items()}
    unknown = set(given) - set(action["inputs"])
    assert not unknown, f"inputs action.yml does not declare: {unknown}"
    inputs = {k: given.get(k, str(spec.get("default", ""))) for k, spec in action["inputs"].items()}
    missing = [k for k, spec in action["inputs"].items() if spec.get("required") and not inputs[k]]
    assert not missing, f"required inputs missing: {missing}"
    inner = {"env": scope["env"], "inputs": inputs}
    results: dict[str, Any] = {}
    for sub in action["runs"]["steps"]:
        out_file = cwd / f".github-output-{sub.get('id', 'x')}"
        sub_env = {**env, **{k: evaluate(str(v), inner) for k, v in (sub.get("env") or {}).items()},
                   "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_OUTPUT": str(out_file)}
        proc = run_bash(sub["run"], cwd, sub_env, sub["name"])
        log.append(f"{step.get('name')} / {sub['name']}: exit {proc.returncode}")
        outputs = read_outputs(out_file)
        inner[f"steps.{sub.get('id')}"] = outputs
        results[sub["name"]] = proc
        if proc.returncode != 0:
            break
    results["outputs"] = {k: evaluate(str(v["value"]), inner) for k, v in action["outputs"].items()}
    return results
