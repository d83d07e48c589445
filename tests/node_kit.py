"""Running small Node scripts from tests: which node (MEMCONFORM_NODE, else PATH), its major version,
and a bounded `node -e SCRIPT ARGS...`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

NODE_TIMEOUT_S = 30


def node_binary() -> str | None:
    return os.environ.get("MEMCONFORM_NODE") or shutil.which("node")


def node_major(node: str) -> int:
    done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
    match = re.match(r"v(\d+)\.(\d+)", done.stdout.strip())
    return int(match.group(1)) if match else 0


NODE = node_binary()
needs_node = pytest.mark.skipif(NODE is None, reason="no node found (set MEMCONFORM_NODE or put node on PATH)")


def run_node(script: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run([NODE, "-e", script, *args], capture_output=True, text=True, timeout=NODE_TIMEOUT_S,
                          env={**os.environ, **(env or {})}, cwd=cwd)
