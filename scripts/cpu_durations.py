"""CPU seconds per test, to find where the test suite's time goes on a machine too busy for wall-clock durations.

As a pytest plugin it records, for every test, the CPU seconds of the process that ran it (`time.process_time()`)
and of the subprocesses it waited for (`RUSAGE_CHILDREN`), one JSON line per test in a file per xdist worker;
as a script it sums them per test file and lists the costliest tests:

    PYTHONPATH=scripts MEMCONFORM_CPU_DURATIONS=/tmp/cpu nice python -m pytest -n 2 -p cpu_durations
    python scripts/cpu_durations.py /tmp/cpu

A server a test leaves to a session fixture is counted where it is waited for; set-up of shared results
(made_once) is counted in the test that made them. Wall seconds are written too, for comparison only.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FOLDER = "MEMCONFORM_CPU_DURATIONS"


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    own, children, wall = time.process_time(), _children_cpu(), time.perf_counter()
    yield
    line = {"id": item.nodeid, "self": time.process_time() - own, "children": _children_cpu() - children,
            "wall": time.perf_counter() - wall}
    folder = Path(os.environ.get(FOLDER) or "cpu-durations")
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def summary(folder: Path, top: int) -> str:
    rows: list[dict[str, Any]] = [json.loads(line) for path in sorted(folder.glob("*.jsonl"))
                                  for line in path.read_text("utf-8").splitlines() if line]
    per_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for row in rows:
        sums = per_file[row["id"].split("::")[0]]
        sums[0] += row["self"]
        sums[1] += row["children"]
        sums[2] += 1
    total = sum(r["self"] + r["children"] for r in rows)
    lines = [f"{len(rows)} tests, {total:.1f} CPU s ({sum(r['children'] for r in rows):.1f} in subprocesses)",
             "CPU s  (own + subprocesses)  tests  file"]
    for name, (own, children, count) in sorted(per_file.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        lines.append(f"{own + children:7.1f}  ({own:.1f} + {children:.1f})  {int(count):5d}  {name}")
    lines.append("CPU s  test")
    for row in sorted(rows, key=lambda r: -(r["self"] + r["children"]))[:top]:
        lines.append(f"{row['self'] + row['children']:7.1f}  {row['id']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the folder the plugin wrote (MEMCONFORM_CPU_DURATIONS)")
    parser.add_argument("--top", type=int, default=30, help="files and tests listed (default 30)")
    args = parser.parse_args()
    print(summary(args.folder, args.top))


if __name__ == "__main__":
    main()
