"""A small EMP reader for the matrix tests, written for them: `resolve` only, one tombstone form only.

    python tests/matrix_fake_emp_reader.py --tombstone flag|type {op} {input} {output}

`flag` honours `"meta": {"deleted": true}` lines, `type` honours `"type": "tombstone"` lines: two readings of
the spec's "append tombstone entry" (errata/emp.md E1). Every other operation: exit 4, not offered.
"""

from __future__ import annotations

import argparse
import json
import sys


def is_tombstone(line: dict, form: str) -> bool:
    if form == "flag":
        meta = line.get("meta")
        return isinstance(meta, dict) and meta.get("deleted") is True
    return line.get("type") == "tombstone"


def resolve(path: str, form: str) -> list[dict]:
    newest: dict[str, dict] = {}
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                line = json.loads(raw)
            except ValueError:
                continue  # a corrupt line costs only itself
            if not isinstance(line, dict) or not isinstance(line.get("id"), str) or not isinstance(line.get("ts"), int):
                continue
            kept = newest.get(line["id"])
            if kept is None or line["ts"] >= kept["ts"]:
                newest[line["id"]] = line
    live = [e for e in newest.values() if not is_tombstone(e, form)]
    return sorted(live, key=lambda e: e["ts"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tombstone", choices=("flag", "type"), required=True)
    parser.add_argument("op")
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args()
    if args.op != "resolve":
        return 4
    with open(args.input, encoding="utf-8") as fh:
        request = json.load(fh)
    with open(args.output, "w", encoding="utf-8") as fh:
        json.dump(resolve(request["path"], args.tombstone), fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
