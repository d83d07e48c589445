"""Reference AMPS store: an in-memory sqlite vault that imports, re-exports and deletes exports.

Operations (methods called by PythonTarget as `method(body, **params)`):
    import_export(doc)                          -> {"imported": {...}}; raises Rejected on a bad export
    export({"subject_id": S})                   -> the AMPS export of that subject
    delete_artifact({"subject_id", "artifact_id"}) -> {"deleted": ..., "atoms_deleted": [...]}
    delete_subject({"subject_id": S})           -> {"deleted": S}: a run's cleanup (the spec names no delete)
    delete_subjects({"subject_ids": [S, ...]})  -> {"deleted": {S: records removed}}: the same for many subjects
                                                   in one call (memconform's own optional operation, errata A11)
Records are kept verbatim (as JSON) so every field, x-provider ones included, travels unchanged.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.amps import format as amps
from memconform.targets.base import Rejected


class ReferenceAmpsStore:
    source_provider = "memconform-reference"

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.executescript(
            """
            CREATE TABLE subjects (subject_id TEXT PRIMARY KEY, doc TEXT NOT NULL);
            CREATE TABLE atoms (subject_id TEXT, atom_id TEXT, doc TEXT NOT NULL, seq INTEGER,
                                PRIMARY KEY (subject_id, atom_id));
            CREATE TABLE artifacts (subject_id TEXT, artifact_id TEXT, doc TEXT NOT NULL, seq INTEGER,
                                    PRIMARY KEY (subject_id, artifact_id));
            """
        )
        self.seq = 0

    # ---- validation --------------------------------------------------------------------------

    def problems(self, doc: Any) -> list[str]:
        out = [f"{path}: {message}" for path, message, _ in amps.schema_errors(doc)]
        if out:
            return out
        for i, atom in amps.atoms(doc):
            derivation = amps.provenance(atom).get("derivation")
            if derivation in ("inferred", "observed") and not amps.has_sources(atom):
                out.append(f"$.atoms[{i}]: {derivation} atom cites no artifact_ids")
            if derivation == "inferred" and not amps.provenance(atom).get("extractor"):
                out.append(f"$.atoms[{i}]: inferred atom names no extractor")
        return out

    # ---- operations --------------------------------------------------------------------------

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)  # raw bytes (a file, the hostile-JSON battery): strict JSON or refused
        problems = self.problems(doc)
        if problems:  # the whole export, never a part of it
            raise Rejected({"error": "invalid export", "problems": problems[:50]}, "invalid export")
        subject = doc["subject"]
        sid = subject["subject_id"]
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO subjects VALUES (?, ?)", (sid, json.dumps(subject, ensure_ascii=False)))
            for atom in doc["atoms"]:
                self.seq += 1
                self.db.execute("INSERT OR REPLACE INTO atoms VALUES (?, ?, ?, ?)",
                                (sid, atom["atom_id"], json.dumps(atom, ensure_ascii=False), self.seq))
            for art in doc["artifacts"]:
                self.seq += 1
                self.db.execute("INSERT OR REPLACE INTO artifacts VALUES (?, ?, ?, ?)",
                                (sid, art["artifact_id"], json.dumps(art, ensure_ascii=False), self.seq))
        return {"imported": {"atoms": len(doc["atoms"]), "artifacts": len(doc["artifacts"])}}

    def _subject_id(self, body: Any) -> str:
        sid = body.get("subject_id") if isinstance(body, dict) else None
        if not isinstance(sid, str):
            raise Rejected({"error": "subject_id required"}, "subject_id required")
        return sid

    def _rows(self, table: str, sid: str) -> list[dict[str, Any]]:
        return [json.loads(d) for (d,) in self.db.execute(f"SELECT doc FROM {table} WHERE subject_id = ? ORDER BY seq", (sid,))]

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        sid = self._subject_id(body)
        row = self.db.execute("SELECT doc FROM subjects WHERE subject_id = ?", (sid,)).fetchone()
        subject = json.loads(row[0]) if row else {"subject_id": sid}
        return {
            "export_version": amps.EXPORT_VERSION,
            "exported_at": amps.now_iso(),
            "source_provider": self.source_provider,
            "subject": subject,
            "atoms": self._rows("atoms", sid),
            "artifacts": self._rows("artifacts", sid),
        }

    def delete_artifact(self, body: Any = None, **params: Any) -> dict[str, Any]:
        sid = self._subject_id(body)
        aid = body.get("artifact_id")
        deleted_atoms: list[str] = []
        with self.db:
            gone = self.db.execute("DELETE FROM artifacts WHERE subject_id = ? AND artifact_id = ?", (sid, aid)).rowcount
            for atom in self._rows("atoms", sid):
                refs = amps.artifact_ids_of(atom)
                if aid not in refs:
                    continue
                remaining = [r for r in refs if r != aid]
                if not remaining and amps.provenance(atom).get("derivation") in ("inferred", "observed"):
                    self.db.execute("DELETE FROM atoms WHERE subject_id = ? AND atom_id = ?", (sid, atom["atom_id"]))
                    deleted_atoms.append(atom["atom_id"])
                    continue
                atom["provenance"]["artifact_ids"] = remaining
                self.db.execute("UPDATE atoms SET doc = ? WHERE subject_id = ? AND atom_id = ?",
                                (json.dumps(atom, ensure_ascii=False), sid, atom["atom_id"]))
            if deleted_atoms:  # artifacts must not point at atoms that no longer exist
                for art in self._rows("artifacts", sid):
                    ids = art.get("atom_ids")
                    if isinstance(ids, list) and any(a in deleted_atoms for a in ids):
                        art["atom_ids"] = [a for a in ids if a not in deleted_atoms]
                        self.db.execute("UPDATE artifacts SET doc = ? WHERE subject_id = ? AND artifact_id = ?",
                                        (json.dumps(art, ensure_ascii=False), sid, art["artifact_id"]))
        return {"deleted": bool(gone), "atoms_deleted": deleted_atoms}

    def close(self) -> None:
        self.db.close()

    def delete_subject(self, body: Any = None, **params: Any) -> dict[str, Any]:
        """Remove a subject and everything it owns: what a test run cleans up."""
        sid = self._subject_id(body)
        self.remove_subjects([sid])
        return {"deleted": sid}

    def delete_subjects(self, body: Any = None, **params: Any) -> dict[str, Any]:
        """delete_subject for many subjects in one call: {"deleted": {subject_id: records removed}}."""
        sids = body.get("subject_ids") if isinstance(body, dict) else None
        if not isinstance(sids, list) or not sids or not all(isinstance(s, str) for s in sids):
            raise Rejected({"error": "subject_ids required: a non-empty list of subject ids"}, "subject_ids required")
        return {"deleted": self.remove_subjects(sids)}

    def remove_subjects(self, sids: list[str]) -> dict[str, int]:
        """Every subject named and what it owns removed in one transaction: records removed per subject."""
        gone = dict.fromkeys(sids, 0)
        with self.db:
            for sid in gone:
                for table in ("subjects", "atoms", "artifacts"):
                    gone[sid] += self.db.execute(f"DELETE FROM {table} WHERE subject_id = ?", (sid,)).rowcount
        return gone
