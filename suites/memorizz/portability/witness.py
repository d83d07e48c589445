"""A reader of MemoRizz archives apart from the translator (it must not import it): what a reader of the format
sees in a document, against which every ledger line is judged (harness/portability/ledger_truth.py, with the helpers of witness.py)."""

from __future__ import annotations

from typing import Any

from memconform.portability.witness import HATCH, Named, Seen, Witness, seen, split_hatch

# canonical name -> native path (a tuple walks objects)
NATIVE = {"text": ("data", "content"), "namespace": ("data", "memory_id"), "origin_user": ("data", "user_id"),
          "embedding": ("data", "embedding")}
STORES = ("personas", "entity_memory", "knowledge_base", "toolbox", "workflow_memory", "skillbox",
          "conversation_memory", "summaries", "tool_log", "short_term_memory", "semantic_cache",
          "shared_memory", "agents")


def records(doc: Any) -> dict[str, Seen]:
    out = Named()
    for store in STORES:
        for rec in (doc.get("stores") or {}).get(store) or []:
            data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
            key = f"{store}/{rec.get('id')}"
            s = seen(NATIVE, str(rec.get("id")), rec, None)
            if not isinstance(s.fields.get("text"), str):
                s.fields.pop("text", None)
            s.fields["type"] = store
            s.block, _ = split_hatch(data)
            rest = {k: v for k, v in data.items() if k not in ("memory_id", "user_id", "embedding", HATCH)
                    and not (k == "content" and isinstance(v, str))}
            if not isinstance(data.get("user_id"), str):
                s.fields.pop("origin_user", None)
                if "user_id" in data:
                    rest["user_id"] = data["user_id"]
            if rest:
                s.fields["extensions"] = rest
            out.add(key, s)
    return out


WITNESS = Witness(
    records, native=NATIVE, envelope={"exported_at": ("manifest", "created_at"), "producer": ("manifest", "source_provider")},
    spoken_for=frozenset({"format", "version", "taxonomy", "manifest", "stores", "integrity", "manifest.created_at",
                          "manifest.source_provider", "manifest.scope", "manifest.counts", "manifest.record_count",
                          "manifest.memorizz_version", "manifest.external_references", "manifest.omitted_fields"}),
    manifest=True)
