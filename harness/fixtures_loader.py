"""The reference fixture corpus: installed as the `memconform.fixtures` package, or read from the repo."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any


def fixture_root() -> Path:
    try:
        root = Path(str(resources.files("memconform.fixtures")))
        if root.is_dir():
            return root
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parents[1] / "fixtures"


def iter_cases(suite: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in sorted((fixture_root() / suite).rglob("*.json")):
        yield path, json.loads(path.read_text("utf-8"))
