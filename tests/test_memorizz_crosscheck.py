"""Cross-check with the real memorizz package (optional: the `memorizz` tox env; skipped without it).

memorizz is non-commercial licensed: it is only ever an optional test dependency, installed in its own
environment. These tests compare verdicts and checksums with `memorizz.memory_archive` and run the suite
against the memorizz CLI as a `cmd:` target.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

memory_archive = pytest.importorskip("memorizz.memory_archive")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from memconform.cli.main import main as cli_main  # noqa: E402
from memconform.core.profile import Profile  # noqa: E402
from memconform.kit.fixtures_loader import fixture_root, iter_cases  # noqa: E402
from memconform.run.session import execute_run  # noqa: E402
from memconform.suites.memorizz import format as mz  # noqa: E402
from memconform.suites.memorizz.format import strategies  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CASES = [(p, c) for p, c in iter_cases("memorizz") if isinstance(c, dict) and "document" in c]
VECTORS = json.loads((fixture_root() / "memorizz" / "canonical-vectors.json").read_text("utf-8"))["vectors"]
FUZZ = settings(max_examples=300, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def listed_disagreements() -> set[str]:
    """The fixture ids suites/memorizz/errata.md lists under 'Disagreements with memorizz's validate_archive'."""
    text = (ROOT / "errata" / "memorizz.md").read_text("utf-8")
    section = text[text.index("## Disagreements with memorizz"):]
    return set(re.findall(r"^\| `(?:valid|invalid)/([a-z0-9-]+)` \|", section, re.M))


def memorizz_verdict(text: str, options: dict[str, str]) -> tuple[str, str]:
    kwargs = {}
    if "memorizz.max_records" in options:
        kwargs["max_records"] = int(options["memorizz.max_records"])
    if "memorizz.max_bytes" in options:
        kwargs["max_bytes"] = mz.SIZES[options["memorizz.max_bytes"]]
    try:
        memory_archive.validate_archive(json.loads(text), **kwargs)
    except ValueError as exc:  # MemoryArchiveError is a ValueError
        return "invalid", str(exc)
    return "valid", ""


@pytest.mark.parametrize("path,case", CASES, ids=[c["id"] for _, c in CASES])
def test_validate_agrees_with_memorizz(path, case, tmp_path, capsys) -> None:
    text = json.dumps(case["document"], ensure_ascii=False, indent=2).replace("Infinity", "1e400")
    archive = tmp_path / f"{case['id']}.memorizz.json"
    archive.write_text(text, "utf-8")
    options = case.get("options") or {}
    args = [a for k, v in options.items() for a in ("--option", f"{k}={v}")]
    code = cli_main(["validate", str(archive), "--format", "memorizz", "--json", *args])
    ours = json.loads(capsys.readouterr().out)["verdict"]
    assert code == (0 if ours == "valid" else 1)
    theirs, why = memorizz_verdict(text, options)
    if case["id"] in listed_disagreements():
        assert ours != theirs, f"{case['id']} is listed in suites/memorizz/errata.md as a disagreement, but both say {ours}"
    else:
        assert ours == theirs, f"memconform says {ours}, memorizz says {theirs} ({why}): fix it or list it in the errata"


def test_listed_disagreements_are_fixtures() -> None:
    assert listed_disagreements() <= {c["id"] for _, c in CASES}
    assert listed_disagreements(), "the errata table could not be read"


@pytest.mark.parametrize("vector", VECTORS, ids=[v["json"][:30] for v in VECTORS])
def test_golden_vectors_hash_as_memorizz_hashes(vector) -> None:
    value = {"x": json.loads(vector["json"])}
    assert memory_archive.seal_archive(value)["integrity"]["digest"] == mz.digest(value)


@FUZZ
@given(strategies.json_values)
def test_canonical_digest_agrees_with_memorizz(value) -> None:
    doc = {"x": value}
    assert memory_archive.seal_archive(doc)["integrity"]["digest"] == mz.digest(doc)


@FUZZ
@given(strategies.archives())
def test_memorizz_accepts_archives_memconform_draws(archive) -> None:
    memory_archive.validate_archive(archive)


def test_memorizz_accepts_the_reference_export() -> None:
    from memconform.core.runner import Context
    from memconform.core.suite import get_suite
    from memconform.suites.memorizz import client as checks
    from memconform.targets import open_target

    with open_target("reference:memorizz") as target:
        ctx = Context(suite=get_suite("memorizz"), target=target, profile=Profile.named("ci"))
        archive = checks.exported_graph(ctx)
    assert archive["manifest"]["record_count"] > 10
    memory_archive.validate_archive(archive)


@pytest.mark.skipif(shutil.which("memorizz", path=str(Path(sys.executable).parent)) is None,
                    reason="the memorizz CLI is not installed beside this interpreter")
def test_suite_against_the_memorizz_cli(tmp_path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import run_memorizz_cli_suite as runner
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    config = tmp_path / "memorizz-cli.json"
    cli = shutil.which("memorizz", path=str(Path(sys.executable).parent))
    config.write_text(json.dumps(runner.config(tmp_path / "store", cli)), "utf-8")
    outcome = execute_run(["memorizz"], f"cmd:@{config}", Profile.named("ci"), report_dir=None)
    outcomes = {r.check_id: (r.outcome.value, r.reason) for r in outcome.results}
    assert {k: v for k, v in outcomes.items() if v[0] in ("failed", "errored")} == {}
    skipped = {k for k, v in outcomes.items() if v[0] == "skipped"}
    # the CLI has no include_embeddings export and no failure hook (errata "Target operations")
    assert skipped == {"memorizz.import_discards_embeddings", "memorizz.failed_import_reports_progress"}
