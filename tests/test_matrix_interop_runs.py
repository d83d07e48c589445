"""Interop holes, the consumer side through a whole run of the suite's own import check: a consumer that refuses
exactly a hole's classes (beside the reference, which takes them) is failed where the hole says memconform
refuses that consumer (IH1: the chunk skipped), and passes with the refusal recorded as the reading it follows
where the hole says memconform accepts it (IH2, MemoRizz's IH9 through the restore check, EMP's IH13 and IH14
through the reader check). The producer side
and the table itself: test_matrix_interop.py."""

from __future__ import annotations

import copy
import unicodedata
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.matrix.interop import holes
from memconform.run.session import execute_run
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.suites.memorizz.reference import ReferenceArchiveStore
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.reference.brain import ReferenceBrain
from memconform.targets.base import Rejected

pytestmark = pytest.mark.slow  # each case runs a whole import check against an in-process consumer (seconds)

CHECK = "domain_import_every_class"


def _chunks(body: Any) -> list[Any]:
    chunks = body.get("chunks") if isinstance(body, dict) else None
    return chunks if isinstance(chunks, list) else []


def upper_hex(chunk: Any) -> bool:
    digest = chunk.get("content_hash") if isinstance(chunk, dict) else None
    return isinstance(digest, str) and digest != digest.lower()


def hashed_as_nfc(chunk: Any) -> bool:
    content, digest = (chunk.get("content"), chunk.get("content_hash")) if isinstance(chunk, dict) else (None, None)
    if not isinstance(content, str) or not isinstance(digest, str):
        return False
    return digest != memoryai.content_hash(content) and digest == memoryai.content_hash(unicodedata.normalize("NFC", content))


class SkipsUpperCaseHashes(ReferenceBrain):
    """IH1's consumer: reads "<sha256 hex>" as lower case and skips any other chunk (ingesting the rest)."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, dict) and any(upper_hex(ch) for ch in _chunks(body)):
            body = copy.deepcopy(body)
            body["chunks"] = [ch for ch in body["chunks"] if not upper_hex(ch)]
        return super().import_bundle(body, **params)


class RefusesNfcHashes(ReferenceBrain):
    """IH2's consumer: recomputes the hash of the content as written and refuses a bundle whose chunk was hashed
    after NFC normalisation."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if any(hashed_as_nfc(ch) for ch in _chunks(body)):
            raise Rejected({"success": False, "error": "content_hash does not match the content"}, "hash mismatch")
        return super().import_bundle(body, **params)


def run(target: str) -> tuple[Any, set[str]]:
    outcome = execute_run(["memoryai"], f"python:{__name__}:{target}", Profile.named("ci"), report_dir=None, check_ids=[CHECK])
    (result,) = outcome.results
    return result, {s for r in outcome.readings if r["point"] == "E42" for s in r["seen"]}


def hole(hole_id: str) -> Any:
    return next(h for h in holes() if h.id == hole_id)


def test_the_reference_consumer_takes_both_classes() -> None:
    """The control: the same check against the reference passes, and the NFC-hashed chunk is ingested."""
    result, seen = run("ReferenceBrain")
    assert result.outcome.value == "passed", [f.to_json() for f in result.failures] or result.reason
    assert "chunk.content_hash:nfc_of_content accepted" in seen


def test_ih1_a_consumer_skipping_upper_case_hashes_is_failed() -> None:
    assert hole("IH1").consumer["verdict"] == "refused"
    result, _ = run("SkipsUpperCaseHashes")
    assert result.outcome.value == "failed"
    assert any("chunk.content_hash:upper_hex" in f.title for f in result.failures), [f.title for f in result.failures]


def test_ih2_a_consumer_refusing_nfc_hashes_passes_with_the_refusal_recorded() -> None:
    assert hole("IH2").consumer["verdict"] == "accepted"
    result, seen = run("RefusesNfcHashes")
    assert result.outcome.value == "passed", [f.to_json() for f in result.failures] or result.reason
    assert "chunk.content_hash:nfc_of_content refused" in seen


# ---- EMP: a reader drops the lines of IH13 and IH14, read to the letter --------------------------------------

def _uuid_version(value: Any) -> str | None:
    return value[14] if isinstance(value, str) and len(value) == 36 and value[8] == "-" else None


class DropsIdsOfOtherVersionsAndFractionalTs(ReferenceEmpApp):
    """Reads "Must be a valid UUID v4" and "timestamp in milliseconds" to the letter: drops any other line."""

    def view(self, path: str) -> list[dict[str, Any]]:
        return [e for e in super().view(path) if _uuid_version(e.get("id")) in ("4", None)
                and not (isinstance(e.get("ts"), float) and not e["ts"].is_integer())]


class DropsTsZero(ReferenceEmpApp):
    """The control: drops a line the reader must return (ts 0, valid under every reading)."""

    def view(self, path: str) -> list[dict[str, Any]]:
        return [e for e in super().view(path) if e.get("ts") != 0]


def emp_run(target: str) -> Any:
    outcome = execute_run(["emp"], f"python:{__name__}:{target}", Profile.named("ci"), report_dir=None,
                          check_ids=["reader_returns_every_valid_class"])
    (result,) = outcome.results
    return result


def test_ih13_ih14_a_reader_dropping_their_lines_passes_and_the_control_fails() -> None:
    assert {hole(h).consumer["verdict"] for h in ("IH13", "IH14")} == {"accepted"}
    from memconform.kit import domain
    from memconform.suites.emp.interop import lines

    table = domain.required("emp")
    sent = [line for key in ("entry.id:v1", "entry.ts:float") for line in lines(table.field(key.split(":")[0]),
                                                                               table.field(key.split(":")[0]).cls(key.split(":")[1]))]
    assert _uuid_version(sent[0]["id"]) == "1" and not float(sent[1]["ts"]).is_integer()  # what the fake drops
    result = emp_run("DropsIdsOfOtherVersionsAndFractionalTs")
    assert result.outcome.value == "passed", [f.to_json() for f in result.failures] or result.reason
    control = emp_run("DropsTsZero")
    assert control.outcome.value == "failed" and "entry.ts:zero" in str([f.to_json() for f in control.failures])


# ---- MemoRizz: an importer counts an id's characters in UTF-16 units (IH9) -----------------------------------

def _utf16_over(archive: Any, limit: int = 512) -> bool:
    stores = archive.get("stores") if isinstance(archive, dict) else None
    return any(isinstance(r, dict) and isinstance(r.get("id"), str) and len(r["id"].encode("utf-16-le")) // 2 > limit
               for records in (stores.values() if isinstance(stores, dict) else ()) if isinstance(records, list)
               for r in records)


class CountsIdsInUtf16Units(ReferenceArchiveStore):
    """Reads "at most 512 characters" as JavaScript's length: refuses an archive holding a longer id so counted."""

    def problems(self, archive: Any) -> list[str]:
        if _utf16_over(archive):
            return ["record_id_form: an id over 512 characters (UTF-16 units)"]
        return super().problems(archive)


def memorizz_run(target: str) -> tuple[Any, set[str]]:
    outcome = execute_run(["memorizz"], target, Profile.named("ci"), report_dir=None, check_ids=["domain_records_every_class"])
    (result,) = outcome.results
    return result, {s for r in outcome.readings if r["point"] == "M35" for s in r["seen"]}


def test_ih9_an_importer_counting_utf16_units_passes_with_the_refusal_recorded() -> None:
    assert hole("IH9").consumer["verdict"] == "accepted"
    result, seen = memorizz_run(f"python:{__name__}:CountsIdsInUtf16Units")
    assert result.outcome.value == "passed", [f.to_json() for f in result.failures] or result.reason
    assert "record.id:at_max_astral refused" in seen, sorted(s for s in seen if "record.id" in s)
    reference, seen = memorizz_run("reference:memorizz")  # the control: the reference restores it
    assert reference.outcome.value == "passed" and "record.id:at_max_astral restored" in seen
