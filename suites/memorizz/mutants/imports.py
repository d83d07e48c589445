"""Known-broken MemoRizz consumers: validators that skip a rule, and imports that break a promise."""

from __future__ import annotations

import json
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.reference import ReferenceArchiveStore
from memconform.targets.base import Rejected


class AcceptsBadChecksum(ReferenceArchiveStore):
    """Never compares the digest: the form of integrity is checked, its value is not."""

    def digest_ok(self, archive: dict[str, Any], canonical: bytes) -> bool:
        return True


class Ignoring(ReferenceArchiveStore):
    """Base of the validators that skip some rules (the rules named in IGNORED) on import."""

    IGNORED: tuple[str, ...] = ()

    def problems(self, archive: Any) -> list[str]:
        return [p for p in super().problems(archive) if not p.startswith(self.IGNORED)]


class AcceptsOtherVersions(Ignoring):
    """Reads any version it can parse (2, "1") as if it were 1."""

    IGNORED = ("version_one",)


class AcceptsUnknownEnvelopeFields(Ignoring):
    """Ignores envelope fields it does not know (a lenient JSON reader)."""

    IGNORED = ("envelope_fields",)


class TaxonomyKeysOnly(ReferenceArchiveStore):
    """Checks that the taxonomy names the 13 stores, never which category each one is in."""

    def problems(self, archive: Any) -> list[str]:
        out = super().problems(archive)
        if isinstance(archive, dict) and isinstance(archive.get("taxonomy"), dict) and \
                set(archive["taxonomy"]) == set(memorizz.STORES):
            out = [p for p in out if not p.startswith("taxonomy_canonical")]
        return out


class PythonJsonParser(ReferenceArchiveStore):
    """Reads a raw request with Python's json module: NaN, Infinity and repeated keys get through."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, bytes | bytearray):
            try:
                body = json.loads(body)
            except ValueError as exc:
                raise Rejected({"ok": False, "errors": [str(exc)]}, "not JSON") from None
        return super().import_archive(body, **params)


class SkipMeansAbort(ReferenceArchiveStore):
    """conflict=skip with any conflict imports nothing at all (the new records too), and reports success."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        body = parse_or_reject(body)
        if isinstance(body, dict) and body.get("mode") == "restore" and body.get("conflict") == "skip":
            preview = super().import_archive({**body, "mode": "preview"})
            if preview.get("conflicts"):
                return {**preview, "dry_run": False, "skipped": preview["planned"]}
        return super().import_archive(body, **params)


class BigIntegersAsNumbers(ReferenceArchiveStore):
    """Exports a 64-bit sequence number on every record as a JSON number (a browser reads it rounded)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        for i, (_, record) in enumerate(memorizz.records_of(archive)):
            record["data"]["sequence"] = 2**53 + 1 + 2 * i
        return memorizz.seal(archive)


class NarrowCharacterSet(ReferenceArchiveStore):
    """Stores text in a 3-byte UTF-8 column: refuses archives holding astral characters (e.g. U+1D11E)."""

    def problems(self, archive: Any) -> list[str]:
        text = json.dumps(archive, ensure_ascii=False)
        if any(ord(c) > 0xFFFF for c in text):
            return ["unsupported character outside the Basic Multilingual Plane"]
        return super().problems(archive)


class PreviewNeedsAgent(ReferenceArchiveStore):
    """Refuses an archive without an agent to import into (the spec's own example has none)."""

    def problems(self, archive: Any) -> list[str]:
        if isinstance(archive, dict) and not (archive.get("stores") or {}).get("agents"):
            return ["no agent in the archive"]
        return super().problems(archive)


class FillsMissingStores(Ignoring):
    """Treats a missing store key as an empty store."""

    IGNORED = ("stores_complete", "manifest_counts")


class LastDuplicateWins(Ignoring):
    """A record id seen twice in a store: the later record silently replaces the earlier."""

    IGNORED = ("record_id_unique", "manifest_")


class OnlyDataIdChecked(Ignoring):
    """Compares data.id and data._id with the record id, never the natural ids (agent_id, persona_id)."""

    IGNORED = ("natural_id_matches",)


class RecountsStores(Ignoring):
    """Recomputes counts from the stores and never compares the manifest's."""

    IGNORED = ("manifest_counts", "manifest_record_count")


class WritesBeforeValidating(ReferenceArchiveStore):
    """Writes every record, then validates the archive and reports the refusal (the records stay)."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        body = parse_or_reject(body)
        body = body if isinstance(body, dict) else {}
        archive = body.get("archive")
        if body.get("mode") == "restore" and self.problems(archive) and isinstance(archive, dict):
            for store, record in memorizz.records_of(archive):
                if isinstance(record.get("data"), dict) and isinstance(record.get("id"), str) and store in memorizz.STORES:
                    self.write(store, record["id"], record["data"])
        return super().import_archive(body, **params)


class NarrowCredentialFilter(ReferenceArchiveStore):
    """Leaves out only keys spelled api_key, password or secret (github_token, cookies... stay)."""

    def clean(self, data: Any, omitted: list[str], where: str, keep_embeddings: bool = False, parent: str = "") -> Any:
        if isinstance(data, dict):
            return {k: self.clean(v, omitted, where, keep_embeddings, k) for k, v in data.items()
                    if not (k in ("api_key", "password", "secret") and parent != "properties")
                    and (keep_embeddings or memorizz.embedding_key(k) is None)}
        if isinstance(data, list):
            return [self.clean(v, omitted, where, keep_embeddings, parent) for v in data]
        return data


class RecordLimitExclusive(ReferenceArchiveStore):
    """Reads "limits are ... 100,000 records" as exclusive (`>=`): an archive of exactly 100,000 is refused."""

    def problems(self, archive: Any) -> list[str]:
        if isinstance(archive, dict) and memorizz.record_total(archive) >= self.MAX_RECORDS:
            return [f"{memorizz.record_total(archive)} records, at or over the limit of {self.MAX_RECORDS}"]
        return super().problems(archive)


class NoRecordLimit(ReferenceArchiveStore):
    """Enforces the byte limit only: any number of records is imported."""

    MAX_RECORDS = 10**12
