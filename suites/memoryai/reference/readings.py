"""A faithful MemoryAI brain that takes the other plausible reading of every open point (suites/memoryai/errata.md).

It must pass the suite with zero failures and zero warnings under the default profile: the default
accepts every plausible reading (tests/test_memoryai_verdicts.py).

    E1  checksum over \\u-escaped non-ASCII, numbers as JSON.stringify writes them
    E2  content_hash in upper-case hex
    E3  NDJSON lines {"_kind": "header"|"chunk"|..., ...fields}, with a footer line
    E4  the multipart field is named `bundle` (over HTTP: make_app(brain, multipart_field="bundle"))
    E6  re-importing the very same bundle leaves edge and entity counters as they were
    E7  a rejected bundle is answered 400 (over HTTP: make_app(brain, rejection_status=400))
    E10 `since` is exclusive: chunks created strictly after it
    E62 a `since` beside scope full or dna_only narrows that scope as well
    times written with a +00:00 offset instead of Z
"""

from __future__ import annotations

import json
from typing import Any

from memconform.kit.hostile import strict_loads
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.reference.brain import ReferenceBrain
from memconform.suites.memoryai.reference.store import _ts


class OtherReadingsBrain(ReferenceBrain):
    generator = "memconform-other-readings/0.1"

    def __init__(self, path: str = ":memory:") -> None:
        super().__init__(path)
        self._seen_bundles: set[str] = set()
        self._same_bundle = False

    def _envelope(self) -> dict[str, Any]:
        return dict(super()._envelope(), exported_at=super()._envelope()["exported_at"].replace("Z", "+00:00"))

    def _checksum_for(self, bundle: dict[str, Any]) -> str:
        return memoryai.checksum(bundle, "ascii", "ecmascript")

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        record = super()._exported_chunk(chunk)
        if isinstance(record.get("content_hash"), str):
            record["content_hash"] = record["content_hash"].upper()
        return record

    def _exported_entities(self, entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(e, last_seen=e["last_seen"].replace("Z", "+00:00")) if isinstance(e.get("last_seen"), str) else e
                for e in entities]

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        if scope == "since" and since is not None and not deleted:
            created, cut = _ts(chunk.get("created_at")), _ts(since)
            return cut is None or (created is not None and created > cut)
        return super()._exportable(chunk, deleted, scope, since)

    def _build(self, body: Any) -> dict[str, Any]:
        bundle = super()._build(body)
        since = body.get("since") if isinstance(body, dict) else None
        cut = _ts(since) if isinstance(since, str) else None
        if cut is None or body.get("scope") == "since":
            return bundle
        bundle["chunks"] = [ch for ch in bundle["chunks"] if (t := _ts(ch.get("created_at"))) is not None and t > cut]
        kept = {ch["id"] for ch in bundle["chunks"]}
        bundle["memory_edges"] = [e for e in bundle["memory_edges"] if e.get("chunk_a") in kept and e.get("chunk_b") in kept]
        return bundle

    def _stream_lines(self, bundle: dict[str, Any]) -> list[bytes]:
        header = {"_kind": "header", **{k: v for k, v in bundle.items() if k not in memoryai.RECORD_SECTIONS}}
        lines = [json.dumps(header).encode() + b"\n"]
        kinds = {"chunks": "chunk", "memory_edges": "memory_edge", "entities": "entity", "l2_sessions": "l2_session",
                 "mood_states": "mood_state", "agents": "agent"}
        for section in memoryai.RECORD_SECTIONS:
            for record in bundle.get(section, []):
                lines.append(json.dumps({"_kind": kinds[section], **record}).encode() + b"\n")
        lines.append(json.dumps({"_kind": "footer", "lines": len(lines) - 1}).encode() + b"\n")
        return lines

    def _verify_checksum(self, bundle: dict[str, Any]) -> str | None:
        ok = memoryai.checksum_matches(bundle, "either")
        return None if ok else "checksum mismatch: bundle content does not match manifest.checksum"

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, bytes | bytearray):
            try:
                body = strict_loads(body)  # as strict as the reference: no NaN, duplicate names, deep nesting
            except ValueError:
                return super().import_bundle(body)  # which rejects it
        if isinstance(body, dict):
            for chunk in body.get("chunks") or []:
                if isinstance(chunk, dict) and isinstance(chunk.get("content_hash"), str):
                    chunk["content_hash"] = chunk["content_hash"].lower()
        key = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
        self._same_bundle = key in self._seen_bundles
        try:
            report = super().import_bundle(body)
        finally:
            same, self._same_bundle = self._same_bundle, False
        if not same:
            self._seen_bundles.add(key)
        return report

    def _merge_edge(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        return old if self._same_bundle else super()._merge_edge(old, new)

    def _merge_entity(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        return old if self._same_bundle else super()._merge_entity(old, new)
