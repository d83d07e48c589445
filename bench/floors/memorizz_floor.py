"""Rule-including floor for a MemoRizz archive: the straightforward Python (orjson) checking the rules
`memconform validate` checks on the bench's archives: the six envelope fields, format and version,
the taxonomy, all 13 stores as arrays, each record exactly {id, data} with a unique id of 1-512
characters, data.id, data._id and the named natural ids equal to it, the manifest's required fields,
counts and record_count, includes as booleans, created_at in UTC, links outside the archive reported,
no embedding unless includes.embeddings, the integrity form, and the digest (sorted keys, compact,
UTF-8: orjson's text, which is the canonical form where no float needs the spec's number rules, as
on the bench's plain archives). Exit 0 valid, 1 not.

    python bench/floors/memorizz_floor.py FILE
"""

import hashlib
import re
import sys
from datetime import datetime

import orjson

TAXONOMY = {"personas": "long_term.semantic", "entity_memory": "long_term.semantic",
            "knowledge_base": "long_term.semantic", "toolbox": "long_term.procedural",
            "workflow_memory": "long_term.procedural", "skillbox": "long_term.procedural",
            "conversation_memory": "long_term.episodic", "summaries": "long_term.episodic",
            "tool_log": "long_term.episodic", "short_term_memory": "short_term", "semantic_cache": "short_term",
            "shared_memory": "coordination", "agents": "agent_configuration"}
NATURAL = {"agents": "agent_id", "personas": "persona_id", "summaries": "summary_id"}
REQUIRED = ("created_at", "memorizz_version", "source_provider", "scope", "counts", "record_count", "includes",
            "warnings")
LINKS = ("delegates", "source_ids", "source_message_ids", "source_record_ids", "supersedes", "supersedes_id",
         "duplicate_of", "previous_event_id", "target_record_id")
EMBEDDING = re.compile(r"embeddings?$|.*_embeddings?$")


def main(path: str) -> int:
    doc = orjson.loads(open(path, "rb").read())
    problems = 0
    problems += set(doc) != {"format", "version", "taxonomy", "manifest", "stores", "integrity"}
    problems += doc.get("format") != "memorizz.memory" or type(doc.get("version")) is not int or doc["version"] != 1
    problems += doc.get("taxonomy") != TAXONOMY
    stores, manifest = doc.get("stores", {}), doc.get("manifest", {})
    problems += set(stores) != set(TAXONOMY) or not all(type(v) is list for v in stores.values())
    embeddings = manifest.get("includes", {}).get("embeddings") is True
    ids: set[str] = set()
    links: set[str] = set()
    for store, records in stores.items():
        seen: set[str] = set()
        natural = NATURAL.get(store)
        for record in records:
            rid = record.get("id")
            problems += set(record) != {"id", "data"} or type(rid) is not str or not 0 < len(rid) <= 512
            problems += rid in seen
            seen.add(rid)
            data = record.get("data")
            problems += data.get("id", rid) != rid or data.get("_id", rid) != rid
            problems += natural is not None and data.get(natural, rid) != rid
            if type(data.get("record_id")) is str:
                ids.add(data["record_id"])
            for node in (data, data.get("content")):
                if type(node) is dict:
                    for name in LINKS:
                        refs = node.get(name)
                        links.update(r for r in (refs if type(refs) is list else [refs]) if type(r) is str and r)
            if not embeddings:
                problems += any(EMBEDDING.match(k) and v not in (None, [], "") for k, v in data.items())
        ids |= seen
    problems += not all(k in manifest for k in REQUIRED)
    counts = manifest.get("counts", {})
    problems += counts != {k: len(stores.get(k, [])) for k in TAXONOMY}
    problems += manifest.get("record_count") != sum(len(v) for v in stores.values())
    problems += not all(type(v) is bool for v in manifest.get("includes", {}).values())
    created = datetime.fromisoformat(manifest.get("created_at", "").replace("Z", "+00:00"))
    problems += created.utcoffset() is None or created.utcoffset().total_seconds() != 0
    problems += bool(links - ids - set(manifest.get("external_references", [])))
    integrity = doc.get("integrity", {})
    problems += set(integrity) != {"algorithm", "digest"} or integrity.get("algorithm") != "sha256"
    body = {k: v for k, v in doc.items() if k != "integrity"}
    problems += hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest() != integrity.get("digest")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
