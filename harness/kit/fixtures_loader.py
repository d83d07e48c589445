"""The reference fixture corpus: installed as the `memconform.fixtures` package, or read from the repo."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def fixture_root() -> Path:
    """The installed `memconform.fixtures` package's folder (found, not imported: every suite's SuiteSpec asks
    for its spec text here, and importlib.resources with its zipfile costs `validate` ~2 ms to start), else
    the repo's fixtures/ folder."""
    try:
        spec = importlib.util.find_spec("memconform.fixtures")
    except ModuleNotFoundError:
        spec = None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        if Path(folder).is_dir():
            return Path(folder)
    return Path(__file__).resolve().parents[1] / "fixtures"


def iter_cases(suite: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The suite's fixture cases: JSON files in a valid/ or invalid/ folder (not its requirement map,
    schemas or vectors beside them)."""
    for path in sorted((fixture_root() / suite).rglob("*.json")):
        if path.parent.name in ("valid", "invalid"):
            yield path, json.loads(path.read_text("utf-8"))


def spec_text_path(file_name: str) -> Path:
    """A spec as published (fixtures/specs/): every check's sentence is verified against it when it registers."""
    return fixture_root() / "specs" / file_name
