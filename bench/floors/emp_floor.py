"""Rule-including floor for an EMP memory.jsonl: each line read with orjson, the entry's fields and
types checked, the newest ts per id kept (the view a reader builds). Exit 0 when every line is valid.

    python bench/floors/emp_floor.py FILE
"""

import sys

import orjson


def main(path: str) -> int:
    newest: dict[str, int] = {}
    problems = 0
    with open(path, "rb") as fh:
        for line in fh:
            entry = orjson.loads(line)
            ok = (entry.get("v") == "1.0" and type(entry.get("id")) is str and type(entry.get("ts")) is int
                  and type(entry.get("src")) is str
                  and (entry.get("deleted") is True or type(entry.get("content")) is str))
            problems += not ok
            if ok and entry["ts"] >= newest.get(entry["id"], -1):
                newest[entry["id"]] = entry["ts"]
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
