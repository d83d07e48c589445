"""Benchmarks for the MemoryAI suite. Figures go into closing notes; unit tests never time things.

    python bench/bench_memoryai.py [--chunks 10000] [--dim 384] [--repeat 3]

1. `memconform validate` on a bundle of N chunks with D-dimension embeddings, against the floor
   measured in the same run: read + parse the file, canonical serialisation, sha256 of it.
2. The whole MemoryAI suite against the embedded reference under the `ci` profile.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import best
from memconform.core.profile import Profile
from memconform.run.document_run import validate_document
from memconform.run.session import execute_run
from memconform.suites.memoryai import format as mai


def make_bundle(n: int, dim: int) -> dict:
    rng = random.Random(7)
    chunks = []
    for i in range(n):
        content = f"memory {i}: the user prefers option {rng.randrange(10**6)} — café ✓"
        chunks.append({
            "id": i + 1, "content": content, "content_hash": mai.content_hash(content),
            "memory_type": rng.choice(mai.CORE_TYPES),
            "embedding": mai.encode_embedding([rng.random() for _ in range(dim)]),
            "embedding_model": "bench-model", "tags": ["bench", f"t{i % 50}"], "zone": "standard",
            "importance": rng.random(), "is_pinned": False, "decay_score": rng.random(), "tier": "warm",
            "created_at": "2026-01-01T00:00:00Z", "accessed_at": "2026-01-02T00:00:00Z",
            "valid_until": None, "metadata": {"i": i},
        })
    doc = {"format": mai.FORMAT, "version": 1, "generator": "bench/1", "exported_at": "2026-01-03T00:00:00Z",
           "manifest": {"tenant_id": None, "tenant_name": None, "tenant_plan": None, "scope": "full", "since": None,
                        "embedding_model": "bench-model", "embedding_dim": dim},
           "chunks": chunks, "memory_edges": [], "entities": [], "l2_sessions": [], "mood_states": [], "agents": []}
    return mai.seal(doc)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bundle.json"
        path.write_text(json.dumps(make_bundle(args.chunks, args.dim)), encoding="utf-8")
        size = path.stat().st_size

        def floor() -> None:
            doc = json.loads(path.read_bytes())
            hashlib.sha256(mai.canonical_bytes(doc)).hexdigest()

        def validate() -> None:
            doc = json.loads(path.read_bytes())
            results = validate_document(doc, "memoryai", Profile.named("ci"))
            assert not any(r.blocking for r in results), [r.check_id for r in results if r.blocking]

        t_floor, t_val = best(floor, args.repeat), best(validate, args.repeat)
        t = time.perf_counter()
        cli = subprocess.run([sys.executable, "-m", "memconform.cli.main", "validate", str(path)], capture_output=True, text=True)
        t_cli = time.perf_counter() - t
        print(f"bundle: {args.chunks} chunks x {args.dim} dims, {size / 1e6:.1f} MB")
        print(f"floor (parse + canonical + sha256): {t_floor:.3f} s")
        print(f"validate (in process, best of {args.repeat}): {t_val:.3f} s  ratio {t_val / t_floor:.2f}x  (goal <= 2x)")
        print(f"memconform validate (whole command, one run): {t_cli:.3f} s, exit {cli.returncode}")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        outcome = execute_run(["memoryai"], None, Profile.named("ci"), Path(tmp))
        t_suite = time.perf_counter() - t
        c = outcome.counts()
        print(f"memoryai suite vs reference, ci profile: {t_suite:.2f} s (goal < 60 s); "
              f"{c['passed']} passed, {c['failed']} failed, {c['errored']} errored, {c['skipped']} skipped")


if __name__ == "__main__":
    main()
