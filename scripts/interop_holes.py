"""Write harness/matrix/interop_holes.json from the interop-hole sweep (harness/matrix/interop_sweep.py) over every
suite that declares a producer/consumer pairing, and the judgement of each candidate in
harness/matrix/interop_review.json.

    python scripts/interop_holes.py           # sweep and write the file
    python scripts/interop_holes.py --check   # exit 1 when the committed file differs from the sweep
    python scripts/interop_holes.py --candidates   # list every candidate with its judgement, write nothing

A candidate the review does not judge (a new class, a suite's verdict changed) stops both with its name: judge it
against the spec sentence in interop_review.json (a hole with its errata entry, or rejected with the sentence
that decides it), then write the file again.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "harness" / "matrix" / "interop_holes.json"


def main(argv: list[str] | None = None) -> int:
    from memconform.core.results import HarnessError
    from memconform.matrix.interop_sweep import holes_document, rendered, review, sweep_suites

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--candidates", action="store_true")
    args = parser.parse_args(argv)
    candidates, swept = sweep_suites()
    judged = review()
    if args.candidates:
        verdicts = {(h["suite"], g["field"], g["kind"], k): h["id"] for h in judged["holes"] for g in h["groups"]
                    for k in g.get("classes", ["*"])}
        verdicts.update({(r["suite"], f, r["kind"], k): "rejected" for r in judged["rejected"] for f in r["fields"]
                         for k in r.get("classes", ["*"])})
        for c in candidates:
            for k in c.classes:
                verdict = verdicts.get((*c.group, k)) or verdicts.get((*c.group, "*"), "NOT JUDGED")
                print(f"{verdict:10} {c.suite} {c.field}:{k} {c.kind}")
        return 0
    try:
        text = rendered(holes_document(candidates, judged, swept))
    except HarnessError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.check:
        if TARGET.read_text("utf-8") != text:
            print(f"{TARGET.relative_to(ROOT)} differs from the sweep: run python scripts/interop_holes.py", file=sys.stderr)
            return 1
        print(f"{TARGET.relative_to(ROOT)} is the sweep's ({sum(1 for _ in json.loads(text)['holes'])} holes)")
        return 0
    TARGET.write_text(text, "utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}: {len(json.loads(text)['holes'])} holes from {len(candidates)} candidates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
