"""A suite's embedded reference served as a one-shot command (`cmd:`, one process per call), its state
kept between calls in a folder: each process sleeps --sleep-at-start (a product whose start is slow),
loads the reference's SQLite database and other attributes from the folder, performs one operation
and saves them again. For the SQLite-backed references (amps, memoryai, memorizz); EMP's reference is a
one-shot command of its own (`python -m memconform.suites.emp.reference`), OMP speaks HTTP only.

    cmd:python bench/oneshot_reference.py reference:amps STATE_DIR --sleep-at-start 0.3 {op} {input} {output}

Exit codes as `cmd:` reads them: 0 done, 3 rejected, 4 operation not offered. bench_cmd_lines.py uses it.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

STATE_DB, STATE_ATTRS = "reference.sqlite", "attributes.pickle"
NOT_SAVED = ("db", "lock")  # the database is saved as a database; a lock is made again


def load(impl: Any, folder: Path) -> None:
    if (folder / STATE_DB).exists():
        with sqlite3.connect(folder / STATE_DB) as saved:
            saved.backup(impl.db)
    if (folder / STATE_ATTRS).exists():
        vars(impl).update(pickle.loads((folder / STATE_ATTRS).read_bytes()))  # noqa: S301 - written by this script


def save(impl: Any, folder: Path) -> None:
    fresh = folder / (STATE_DB + ".new")
    fresh.unlink(missing_ok=True)
    target = sqlite3.connect(fresh)
    impl.db.backup(target)
    target.close()
    os.replace(fresh, folder / STATE_DB)
    (folder / STATE_ATTRS).write_bytes(pickle.dumps({k: v for k, v in vars(impl).items() if k not in NOT_SAVED}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("reference", help="reference:NAME")
    ap.add_argument("state", type=Path, help="the folder that keeps the reference's state between calls")
    ap.add_argument("op")
    ap.add_argument("input", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--sleep-at-start", type=float, default=0.0)
    args = ap.parse_args(argv)
    time.sleep(args.sleep_at_start)
    from memconform.core.results import Unsupported
    from memconform.core.suite import get_suite
    from memconform.kit.hostile import parse_or_reject
    from memconform.targets.base import Rejected

    factory = get_suite(args.reference.removeprefix("reference:")).reference
    assert factory is not None
    impl = factory()
    method = getattr(impl, args.op, None)
    if method is None or args.op.startswith("_"):
        return 4
    args.state.mkdir(parents=True, exist_ok=True)
    load(impl, args.state)
    raw = args.input.read_bytes()
    params = {k.removeprefix("MEMCONFORM_PARAM_").lower(): v for k, v in os.environ.items() if k.startswith("MEMCONFORM_PARAM_")}
    try:  # a named file is the document itself; else the request, read as strictly as a product would
        body: Any = raw if args.input.name != "input.json" else parse_or_reject(raw)
        if params and body == params:
            body = None  # a request with parameters only: cmd: writes them as the input too
        reply, code = method(body, **params), 0
    except Rejected as exc:
        reply, code = exc.body, 3
    except Unsupported:
        return 4
    save(impl, args.state)
    args.output.write_bytes(reply if isinstance(reply, (bytes, bytearray)) else json.dumps(reply, ensure_ascii=False).encode())
    return code


if __name__ == "__main__":
    sys.exit(main())
