"""Benchmark for the AMPS suite. Figures go into closing notes; unit tests never time things.

    python bench/bench_amps.py [--atoms 100000] [--artifacts 10000] [--repeat 3]

Validates one export (generated deterministically: every derivation, every sensitivity, links both
ways, x-provider fields) and compares it with the floor measured in the same run: parse the file
plus jsonschema Draft 2020-12 validation of the published schema with the suite's format checker
(date-time with a zone, uri); and, since validate asks jsonschema-rs first, that floor too. Each phase runs in its own process so its peak memory (max RSS) is
its own; times are the best of --repeat runs inside that process.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import best, phase_in_child, report_phase
from memconform.core.profile import Profile
from memconform.run.document_run import validate_document
from memconform.suites.amps import format as amps

PHASES = ("floor", "floor-rs", "validate", "cli")


def make_export(n_atoms: int, n_artifacts: int) -> dict:
    rng = random.Random(7)
    base = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)

    def when(days: float) -> str:
        return (base + dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")

    artifacts = [{
        "artifact_id": f"art_{j:06d}", "kind": amps.ARTIFACT_KINDS[j % len(amps.ARTIFACT_KINDS)],
        "title": f"source {j}", "body": f"transcript {j} — café ✓ " * 4, "captured_at": when(j % 300),
        "source": "chatgpt-export", "atom_ids": [], "private": j % 7 == 0,
        **({"media_url": f"https://media.example/{j}.m4a"} if j % 5 == 0 else {}),
    } for j in range(n_artifacts)]
    atoms = []
    for i in range(n_atoms):
        derivation = amps.DERIVATIONS[i % 3]
        prov: dict = {"derivation": derivation, "human_reviewed": i % 2 == 0}
        if derivation != "stated" or i % 4 == 0:
            cited = sorted({rng.randrange(n_artifacts) for _ in range(1 + i % 2)})
            prov["artifact_ids"] = [artifacts[j]["artifact_id"] for j in cited]
            for j in cited:
                artifacts[j]["atom_ids"].append(f"atom_{i:07d}")
        if derivation == "inferred":
            prov["extractor"] = "claude-opus-4"
        start = i % 400
        atom = {
            "atom_id": f"atom_{i:07d}", "kind": amps.ATOM_KINDS[i % len(amps.ATOM_KINDS)],
            "text": f"The user prefers option {rng.randrange(10**6)} for task {i}.", "confidence": rng.random(),
            "sensitivity": amps.SENSITIVITIES[i % len(amps.SENSITIVITIES)], "valid_from": when(start),
            "valid_to": when(start + 30) if i % 3 == 0 else None, "created_at": when(start + 1), "provenance": prov,
        }
        if i % 10 == 0:
            atom["x-provider"] = {"score": i % 9}
        atoms.append(atom)
    return {"export_version": amps.EXPORT_VERSION, "exported_at": when(500), "source_provider": "konshus",
            "subject": {"subject_id": "user_bench", "display_name": "Bench", "locale": "en-US"},
            "atoms": atoms, "artifacts": artifacts}


def run_phase(phase: str, path: Path, repeat: int) -> float:
    if phase == "floor":
        from jsonschema import Draft202012Validator

        validator = Draft202012Validator(amps.schema(), format_checker=amps.format_checker())

        def floor() -> None:
            errors = list(validator.iter_errors(json.loads(path.read_bytes())))
            assert not errors, errors[:3]
        return best(floor, repeat)
    if phase == "floor-rs":  # the same schema in jsonschema-rs, which validate uses as its fast path
        def floor_rs() -> None:
            assert amps.fast_validator().is_valid(json.loads(path.read_bytes()))
        return best(floor_rs, repeat)
    if phase == "validate":
        def validate() -> None:
            results = validate_document(json.loads(path.read_bytes()), "amps", Profile.named("ci"))
            assert not any(r.blocking or r.outcome.value != "passed" for r in results
                           if r.check_id != "amps.atom_labels_required"), [r.check_id for r in results if r.failures]
        return best(validate, repeat)
    t = time.perf_counter()
    cli = subprocess.run([sys.executable, "-m", "memconform.cli.main", "validate", str(path)], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stdout[-2000:] + cli.stderr[-2000:]
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--atoms", type=int, default=100_000)
    ap.add_argument("--artifacts", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    ap.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:  # a child: one phase, then its time and its own peak RSS (the cli phase's is the command's)
        report_phase(args.phase, run_phase(args.phase, args.file, args.repeat))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.json"
        path.write_text(json.dumps(make_export(args.atoms, args.artifacts), ensure_ascii=False), encoding="utf-8")
        print(f"export: {args.atoms} atoms, {args.artifacts} artifacts, {path.stat().st_size / 1e6:.1f} MB")
        (t_floor, m_floor), (t_rs, m_rs), (t_val, m_val) = (
            phase_in_child(__file__, p, path, "--repeat", str(args.repeat)) for p in ("floor", "floor-rs", "validate"))
        t_cli, m_cli = phase_in_child(__file__, "cli", path, "--repeat", "1")
        print(f"floor (parse + jsonschema 2020-12 with format checks, best of {args.repeat}): {t_floor:.3f} s, peak {m_floor:.0f} MB")
        print(f"floor with jsonschema-rs (parse + the same schema and formats): {t_rs:.3f} s, peak {m_rs:.0f} MB")
        print(f"validate (parse + every amps document check, best of {args.repeat}): {t_val:.3f} s, peak {m_val:.0f} MB"
              f"  ratio {t_val / t_floor:.2f}x the jsonschema floor, {t_val / t_rs:.2f}x the jsonschema-rs floor")
        print(f"memconform validate (whole command, one run): {t_cli:.3f} s, peak {m_cli:.0f} MB")


if __name__ == "__main__":
    main()
