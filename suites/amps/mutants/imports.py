"""Known-broken AMPS stores: validators, import semantics, privacy and cascade bugs."""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.amps import format as amps
from memconform.suites.amps.reference import ReferenceAmpsStore
from memconform.targets.base import Rejected


class LenientValidator(ReferenceAmpsStore):
    """Validates types and required fields only: no formats, enums, bounds or lengths (a hand-written checker)."""

    def problems(self, doc: Any) -> list[str]:
        return [p for p in super().problems(doc)
                if not any(w in p for w in ("is not a", "is not one of", "greater than", "is too long", "does not match"))
                or "is not of type" in p]


class WritesBeforeValidating(ReferenceAmpsStore):
    """Stores every atom it can read, then validates and refuses the export (the atoms stay)."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if self.problems(doc) and isinstance(doc, dict) and isinstance(doc.get("subject"), dict):
            sid = doc["subject"].get("subject_id")
            atoms = doc.get("atoms")
            for atom in atoms if isinstance(atoms, list) else []:
                if isinstance(sid, str) and isinstance(atom, dict) and isinstance(atom.get("atom_id"), str):
                    with self.db:
                        self.db.execute("INSERT OR REPLACE INTO atoms VALUES (?, ?, ?, ?)",
                                        (sid, atom["atom_id"], json.dumps(atom), 10**9))
        return super().import_export(doc, **params)


class ClearsSubjectFirst(ReferenceAmpsStore):
    """Replaces a subject's snapshot by deleting it first, then validating: a refused export loses the old data."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        sid = doc.get("subject", {}).get("subject_id") if isinstance(doc, dict) and isinstance(doc.get("subject"), dict) else None
        if isinstance(sid, str):
            with self.db:
                for table in ("atoms", "artifacts"):
                    self.db.execute(f"DELETE FROM {table} WHERE subject_id = ?", (sid,))
        return super().import_export(doc, **params)


class ClassifiesSensitivity(ReferenceAmpsStore):
    """Re-derives each atom's sensitivity from its text on export instead of keeping the label."""

    WORDS = {"insulin": "medical", "diabetes": "medical", "bank": "financial", "mortgage": "financial",
             "lawsuit": "legal"}

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            text = str(atom.get("text", "")).lower()
            atom["sensitivity"] = next((v for k, v in self.WORDS.items() if k in text), atom.get("sensitivity"))
        return doc


class PrivateOnlyForChats(ReferenceAmpsStore):
    """Keeps private: true only on chat artifacts (the only kind its privacy filter knows)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for art in doc["artifacts"]:
            if art.get("kind") != "chat":
                art["private"] = False
        return doc


class TrustsOwnExports(ReferenceAmpsStore):
    """Importing an export it produced itself resets private to the importer default (false)."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if isinstance(doc, dict) and doc.get("source_provider") == self.source_provider:
            doc = copy.deepcopy(doc)
            for _, art in amps.artifacts(doc):
                art["private"] = False
        return super().import_export(doc, **params)


class CascadeByBacklinks(ReferenceAmpsStore):
    """Re-evaluates only the atoms the deleted artifact lists in atom_ids, not every atom citing it."""

    def delete_artifact(self, body: Any = None, **params: Any) -> dict[str, Any]:
        sid, aid = self._subject_id(body), body.get("artifact_id")
        arts = {a["artifact_id"]: a for a in self._rows("artifacts", sid)}
        listed = set((arts.get(aid) or {}).get("atom_ids") or [])
        hidden = {a["atom_id"]: a for a in self._rows("atoms", sid) if a["atom_id"] not in listed}
        result = super().delete_artifact(body, **params)
        with self.db:  # the atoms it never looked at keep their provenance as it was
            for atom_id, atom in hidden.items():
                self.db.execute("INSERT OR REPLACE INTO atoms VALUES (?, ?, ?, ?)",
                                (sid, atom_id, json.dumps(atom, ensure_ascii=False), 10**9))
        return result


class NormalisesSubjectId(ReferenceAmpsStore):
    """Stores the subject under a normalised id (NFC, lower case), so the user's own id finds nothing."""

    @staticmethod
    def norm(sid: Any) -> Any:
        return unicodedata.normalize("NFC", sid).lower() if isinstance(sid, str) else sid

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if isinstance(doc, dict) and isinstance(doc.get("subject"), dict):
            doc = copy.deepcopy(doc)
            doc["subject"]["subject_id"] = self.norm(doc["subject"].get("subject_id"))
        return super().import_export(doc, **params)

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return super().export({"subject_id": self.norm(self._subject_id(body))}, **params)

    def delete_artifact(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return super().delete_artifact({**body, "subject_id": self.norm(self._subject_id(body))}, **params)


class RequiresLabels(ReferenceAmpsStore):
    """Refuses atoms without valid_from or sensitivity (the prose's "every atom carries", read as the schema)."""

    def problems(self, doc: Any) -> list[str]:
        missing = [f"$.atoms[{i}] has no {k}" for i, a in amps.atoms(doc) for k in ("valid_from", "sensitivity")
                   if k not in a]
        return missing or super().problems(doc)


class PythonJsonParser(ReferenceAmpsStore):
    """Parses a raw export with Python's json module: NaN, Infinity and repeated keys get through."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        if isinstance(doc, bytes | bytearray):
            try:
                doc = json.loads(doc)
            except ValueError as exc:
                raise Rejected({"error": str(exc)}, "not JSON") from None
        return super().import_export(doc, **params)


class ArtifactsReplacedPerImport(ReferenceAmpsStore):
    """Merges atoms across imports but keeps only the latest import's artifacts (earlier sources vanish)."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if not self.problems(doc):
            with self.db:
                self.db.execute("DELETE FROM artifacts WHERE subject_id = ?", (doc["subject"]["subject_id"],))
        return super().import_export(doc, **params)


class ZuluSecondsOnly(ReferenceAmpsStore):
    """Parses date-times with one pattern, YYYY-MM-DDTHH:MM:SSZ: fractional seconds and a +00:00 offset,
    both RFC 3339 date-times, are refused."""

    def problems(self, doc: Any) -> list[str]:
        found = super().problems(doc)
        strict = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
        for where, atom in enumerate(doc.get("atoms") or [] if isinstance(doc, dict) else []):
            for name in ("valid_from", "valid_to", "created_at"):
                value = atom.get(name) if isinstance(atom, dict) else None
                if isinstance(value, str) and not strict.match(value):
                    found.append(f"$.atoms[{where}].{name}: {value!r} is not a date-time")
        return found


class CascadeRelabels(ReferenceAmpsStore):
    """Re-evaluates the atoms a deletion concerns by running them through its classifier again: each atom
    that keeps a source comes back labelled `private`, whatever the user's label was."""

    def delete_artifact(self, body: Any = None, **params: Any) -> dict[str, Any]:
        sid = self._subject_id(body)
        concerned = [a for a in self._rows("atoms", sid) if body.get("artifact_id") in amps.artifact_ids_of(a)]
        reply = super().delete_artifact(body, **params)
        with self.db:
            for atom in concerned:
                if atom["atom_id"] in reply["atoms_deleted"]:
                    continue
                row = self.db.execute("SELECT doc FROM atoms WHERE subject_id = ? AND atom_id = ?", (sid, atom["atom_id"])).fetchone()
                if row:
                    kept = {**json.loads(row[0]), "sensitivity": "private"}
                    self.db.execute("UPDATE atoms SET doc = ? WHERE subject_id = ? AND atom_id = ?",
                                    (json.dumps(kept, ensure_ascii=False), sid, atom["atom_id"]))
        return reply
