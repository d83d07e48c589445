"""A MemoryAI bundle whose chunk content holds a lone surrogate (JSON can escape one; UTF-8 cannot write it):
the document checks judge it, they never error. Its checksum can only follow the ASCII-escapes readings of E1,
so a checksum under them passes and any other fails with a digest it could have had; no content_hash can be the
sha256 of UTF-8 bytes that do not exist, so content_hash_matches fails naming the surrogate. Whole and in windows."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.run.validate import validate_file
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.interop import base_bundle


def _bundle(content: str, checksum: str | None = None) -> dict[str, Any]:
    bundle = memoryai.seal(copy.deepcopy(base_bundle()))
    bundle["chunks"][0]["content"] = content
    bundle["chunks"][0]["content_hash"] = "0" * 64
    bundle["manifest"]["checksum"] = checksum or memoryai.checksum(bundle, "ascii", "python")
    return bundle


def _judged(tmp_path: Path, bundle: dict[str, Any], window: int | None) -> dict[str, Any]:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="ascii")  # json.dumps escapes the surrogate
    _, _, results = validate_file(path, "memoryai", Profile.named("ci"), None, 10**8, window=window)
    return {r.check_id: r for r in results}


@pytest.mark.parametrize("window", [None, 64], ids=["whole", "windows"])
def test_a_lone_surrogate_is_judged_never_an_error(tmp_path: Path, window: int | None) -> None:
    results = _judged(tmp_path, _bundle("a\ud800b"), window)
    assert [c for c, r in results.items() if r.outcome is Outcome.ERRORED] == []
    assert results["memoryai.checksum_present_and_valid"].outcome is Outcome.PASSED  # the ASCII-escapes reading
    content_hash = results["memoryai.content_hash_matches"]
    assert content_hash.outcome is Outcome.FAILED
    failure = content_hash.failures[0]
    assert "lone surrogate" in failure.title and failure.received == "U+D800 at index 1"
    assert failure.path == "$.chunks[0].content"


def test_a_checksum_no_reading_gives_fails_with_a_digest_it_could_have_had(tmp_path: Path) -> None:
    results = _judged(tmp_path, _bundle("e\u0301\udc00", checksum="f" * 64), None)
    checksum = results["memoryai.checksum_present_and_valid"]
    assert checksum.outcome is Outcome.FAILED
    expected = checksum.failures[0].expected
    assert isinstance(expected, str) and len(expected) == 64 and int(expected, 16) >= 0


def test_the_same_bundle_without_the_surrogate_passes_both(tmp_path: Path) -> None:
    """The positive control: the content's own hash and the bundle's checksum, nothing else changed."""
    bundle = _bundle("ab")
    bundle["chunks"][0]["content_hash"] = memoryai.content_hash("ab")
    bundle["manifest"]["checksum"] = memoryai.checksum(bundle, "literal", "python")
    results = _judged(tmp_path, bundle, None)
    assert results["memoryai.checksum_present_and_valid"].outcome is Outcome.PASSED
    assert results["memoryai.content_hash_matches"].outcome is Outcome.PASSED
