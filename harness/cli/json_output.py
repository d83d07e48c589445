"""The `--json` outputs of the command line (validate, list, coverage, diff, matrix diff, port, and an error): each one JSON object
naming its kind (`output`) and the version of its shape (`version`), with a JSON Schema shipped beside the
report's, `schemas/cli-<output>.schema.json`. A script reads `output` and `version` before anything else; a new
field may be added within a version, a field is never removed or changed without a new version."""

from __future__ import annotations

import json
from typing import Any

OUTPUT_VERSION = 1
OUTPUTS = ("validate", "list", "options", "coverage", "coverage-domain", "diff", "matrix-diff", "port", "error")


def document(output: str, body: dict[str, Any]) -> dict[str, Any]:
    """The object one --json output prints: its kind and version first, then its body."""
    if output not in OUTPUTS:
        raise ValueError(f"unknown --json output {output!r}")
    return {"output": output, "version": OUTPUT_VERSION, **body}


def dumps(output: str, body: dict[str, Any]) -> str:
    return json.dumps(document(output, body), ensure_ascii=False, indent=1)


def schema_path(output: str) -> Any:
    """The JSON Schema of one output (an importlib.resources Traversable)."""
    from importlib.resources import files

    return files("memconform") / "schemas" / f"cli-{output}.schema.json"
