#!/usr/bin/env python3
"""AMPS v0.1 (AI Memory Portability Standard) consumer/producer, one process per operation.

    python app.py OP INPUT OUTPUT

OP is import_export (INPUT: the export document), export ({"subject_id"}), delete_artifact
({"subject_id", "artifact_id"}), delete_subject ({"subject_id"}) or training_corpus
({"subject_id"?}). The reply JSON is written to OUTPUT. Exit 0 done, 3 refused ({"error": ...}),
4 no such operation, 1 internal error, 2 usage. State lives in $SECOND_OPINION_STATE.

Deliberate bugs are switched on by SECOND_OPINION_BUGS (comma-separated names, see bugs.json).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
# JSON nesting is bounded by the recursion limit (the parser refuses deeper documents as not
# well-formed); raised so that any document nested up to ~2,900 levels imports and round-trips.
sys.setrecursionlimit(3000)

import amps_store as store  # noqa: E402
from amps_validate import EXPORT_VERSION, MIN_SOURCES, Invalid, document_errors, parse_json, provenance_errors  # noqa: E402

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_REFUSED, EXIT_NO_OP = 0, 1, 2, 3, 4
ENVELOPE = ("export_version", "exported_at", "subject", "atoms", "artifacts")
REGULATED = ("medical", "financial", "legal")
# The fields the schema names (used only by the buggy "whitelist" serialisers).
ATOM_FIELDS = ("atom_id", "kind", "text", "confidence", "sensitivity", "valid_from", "valid_to",
               "created_at", "provenance")
ARTIFACT_FIELDS = ("artifact_id", "kind", "title", "body", "media_url", "captured_at", "source",
                   "atom_ids", "private")

KNOWN_BUGS = frozenset(b["name"] for b in json.loads(Path(__file__).with_name("bugs.json").read_text(encoding="utf-8")))


def active_bugs() -> frozenset[str]:
    names = {n.strip() for n in os.environ.get("SECOND_OPINION_BUGS", "").split(",") if n.strip()}
    unknown = names - KNOWN_BUGS
    if unknown:
        raise SystemExit(f"unknown SECOND_OPINION_BUGS: {', '.join(sorted(unknown))}")
    return frozenset(names)


class Refused(Exception):
    def __init__(self, message: str, errors: list[dict[str, str]] | None = None):
        super().__init__(message)
        self.errors = errors or []


def _clone(value: Any) -> Any:
    """Deep copy through the C JSON codec (copy.deepcopy recurses in Python and fails on deep extensions)."""
    return json.loads(json.dumps(value))


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _subject_id(body: Any) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("subject_id"), str):
        raise Refused("the request needs a string subject_id")
    return body["subject_id"]


# --------------------------------------------------------------------------- operations

def op_import_export(raw: bytes, bugs: frozenset[str]) -> dict[str, Any]:
    try:
        doc = parse_json(raw)
    except Invalid as exc:
        raise Refused(f"invalid export: {exc}", exc.errors) from None
    # With partial_import_on_reject the provenance rules are checked while storing (the bug).
    streaming = "partial_import_on_reject" in bugs
    errors = document_errors(doc, bugs, provenance=not streaming)
    if errors:
        raise Refused(f"invalid export: {Invalid(errors)}", errors)

    subject = doc["subject"]
    key = store.storage_key(subject["subject_id"], bugs)
    with store.locked(exclusive=True) as root:
        record = store.load(root, key) or {"subject_id": key, "extras": {}, "subject": {},
                                            "atoms": [], "artifacts": []}
        record["subject"] = dict(subject, subject_id=key)
        record["extras"] = {k: v for k, v in doc.items() if k not in ENVELOPE}
        atoms = {a["atom_id"]: a for a in record["atoms"]}
        for i, atom in enumerate(doc["atoms"]):
            if streaming:
                problems = provenance_errors(atom, i, bugs)
                if problems:
                    record["atoms"] = list(atoms.values())
                    store.save(root, key, record)  # "commit what we have so far"
                    raise Refused(f"invalid export: {Invalid(problems)}", problems)
            atoms[atom["atom_id"]] = atom
        artifacts = {a["artifact_id"]: a for a in record["artifacts"]}
        for art in doc["artifacts"]:
            artifacts[art["artifact_id"]] = art
        record["atoms"] = list(atoms.values())
        record["artifacts"] = list(artifacts.values())
        store.save(root, key, record)
    return {"imported": True, "subject_id": subject["subject_id"],
            "atoms": len(doc["atoms"]), "artifacts": len(doc["artifacts"])}


def _export_atom(atom: dict[str, Any], bugs: frozenset[str]) -> dict[str, Any]:
    out = _clone(atom)
    if "x_provider_dropped_nested" in bugs:
        out = {k: v for k, v in out.items() if k in ATOM_FIELDS}
        out["provenance"] = {k: v for k, v in out["provenance"].items()
                             if k in ("derivation", "artifact_ids", "extractor", "human_reviewed")}
    if "regulated_sensitivity_collapsed" in bugs and out.get("sensitivity") in REGULATED:
        out["sensitivity"] = "private"
    return out


def _export_artifact(art: dict[str, Any], bugs: frozenset[str]) -> dict[str, Any]:
    out = _clone(art)
    if "x_provider_dropped_nested" in bugs:
        out = {k: v for k, v in out.items() if k in ARTIFACT_FIELDS}
    if "private_flag_dropped" in bugs:
        out = {k: v for k, v in out.items() if k in ARTIFACT_FIELDS[:-1] or k.startswith("x-")}
    return out


def op_export(body: Any, bugs: frozenset[str]) -> dict[str, Any]:
    subject_id = _subject_id(body)
    key = store.storage_key(subject_id, bugs)
    with store.locked(exclusive=False) as root:
        record = store.load(root, key)
    if record is None:
        record = {"extras": {}, "subject": {"subject_id": subject_id}, "atoms": [], "artifacts": []}
    doc: dict[str, Any] = {"export_version": EXPORT_VERSION, "exported_at": _now()}
    extras = record["extras"]
    if "source_provider" in extras:
        doc["source_provider"] = extras["source_provider"]
    doc["subject"] = _clone(record["subject"])
    doc["atoms"] = [_export_atom(a, bugs) for a in record["atoms"]]
    doc["artifacts"] = [_export_artifact(a, bugs) for a in record["artifacts"]]
    for k, v in extras.items():
        doc.setdefault(k, v)
    return doc


def cascade_delete_artifact(record: dict[str, Any], artifact_id: str, bugs: frozenset[str]) -> dict[str, Any]:
    """Remove one artifact and re-evaluate every atom whose provenance cites it (spec "Delete cascades").

    The cited id is removed from each atom's provenance.artifact_ids; an atom left with fewer
    sources than its derivation needs (inferred, observed: 1; stated: 0) is deleted, and deleted
    atoms are removed from the remaining artifacts' atom_ids.
    """
    before = len(record["artifacts"])
    record["artifacts"] = [a for a in record["artifacts"] if a["artifact_id"] != artifact_id]
    removed_artifact = len(record["artifacts"]) != before
    minimum = dict(MIN_SOURCES)
    if "cascade_skips_observed" in bugs:
        minimum["observed"] = 0
    kept, deleted, updated = [], [], []
    for atom in record["atoms"]:
        prov = atom["provenance"]
        ids = prov.get("artifact_ids")
        if isinstance(ids, list) and artifact_id in ids:
            prov["artifact_ids"] = [i for i in ids if i != artifact_id]
            if len(prov["artifact_ids"]) < minimum[prov["derivation"]]:
                deleted.append(atom["atom_id"])
                continue
            updated.append(atom["atom_id"])
        kept.append(atom)
    record["atoms"] = kept
    if deleted:
        gone = set(deleted)
        for art in record["artifacts"]:
            if isinstance(art.get("atom_ids"), list) and gone.intersection(art["atom_ids"]):
                art["atom_ids"] = [i for i in art["atom_ids"] if i not in gone]
    return {"deleted": removed_artifact, "atoms_deleted": deleted, "atoms_updated": updated}


def op_delete_artifact(body: Any, bugs: frozenset[str]) -> dict[str, Any]:
    subject_id = _subject_id(body)
    artifact_id = body.get("artifact_id")
    if not isinstance(artifact_id, str):
        raise Refused("the request needs a string artifact_id")
    key = store.storage_key(subject_id, bugs)
    with store.locked(exclusive=True) as root:
        record = store.load(root, key)
        if record is None:
            return {"deleted": False, "subject_id": subject_id, "artifact_id": artifact_id,
                    "atoms_deleted": [], "atoms_updated": []}
        result = cascade_delete_artifact(record, artifact_id, bugs)
        if result["deleted"] or result["atoms_deleted"] or result["atoms_updated"]:
            store.save(root, key, record)
    return {"subject_id": subject_id, "artifact_id": artifact_id, **result}


def op_delete_subject(body: Any, bugs: frozenset[str]) -> dict[str, Any]:
    subject_id = _subject_id(body)
    with store.locked(exclusive=True) as root:
        deleted = store.remove(root, store.storage_key(subject_id, bugs))
    return {"deleted": deleted, "subject_id": subject_id}


def op_training_corpus(body: Any, bugs: frozenset[str]) -> dict[str, Any]:
    """What this store would hand to a training pipeline: never an artifact with private: true."""
    wanted = None
    if isinstance(body, dict) and "subject_id" in body:
        wanted = store.storage_key(_subject_id(body), bugs)
    items = []
    with store.locked(exclusive=False) as root:
        for record in store.all_records(root):
            if wanted is not None and record["subject_id"] != wanted:
                continue
            for art in record["artifacts"]:
                if art.get("private", False) is not True:
                    items.append({"subject_id": record["subject"]["subject_id"],
                                  "artifact_id": art["artifact_id"], "body": art.get("body")})
    return {"artifacts": items}


OPS: dict[str, Callable[[Any, frozenset[str]], dict[str, Any]]] = {
    "export": op_export,
    "delete_artifact": op_delete_artifact,
    "delete_subject": op_delete_subject,
    "training_corpus": op_training_corpus,
}


# --------------------------------------------------------------------------- transport

def _write_reply(path: str, reply: dict[str, Any]) -> None:
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=".reply-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(reply, fh, ensure_ascii=True)
    os.replace(tmp, target)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    op, input_path, output_path = argv
    if op != "import_export" and op not in OPS:
        _write_reply(output_path, {"error": f"no such operation: {op}"})
        return EXIT_NO_OP
    bugs = active_bugs()
    try:
        raw = Path(input_path).read_bytes()
        if op == "import_export":
            reply = op_import_export(raw, bugs)
        else:
            try:
                body = parse_json(raw)
            except Invalid as exc:
                raise Refused(f"request is not valid JSON: {exc}") from None
            reply = OPS[op](body, bugs)
    except Refused as exc:
        _write_reply(output_path, {"error": str(exc), "errors": exc.errors})
        return EXIT_REFUSED
    except Exception as exc:  # report, never half-answer
        traceback.print_exc()
        _write_reply(output_path, {"error": f"internal error: {exc.__class__.__name__}: {exc}"})
        return EXIT_INTERNAL
    _write_reply(output_path, reply)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
