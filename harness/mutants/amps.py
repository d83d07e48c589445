"""Known-broken AMPS stores: each breaks ONE rule and must be caught by the checks named for it."""

from __future__ import annotations

import copy
import json
import unicodedata
import urllib.request
from typing import Any

from memconform.formats import amps
from memconform.hostile import parse_or_reject
from memconform.reference.amps import ReferenceAmpsStore
from memconform.targets.base import Rejected


class AcceptsUnsourcedInferred(ReferenceAmpsStore):
    """Imports inferred atoms that cite no artifact (launders unsourced conclusions)."""

    def problems(self, doc: Any) -> list[str]:
        return [p for p in super().problems(doc) if "inferred atom cites no" not in p]


class ImportsPartOfRejected(ReferenceAmpsStore):
    """Refuses the bad export but keeps the atoms it had already written."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        bad = set(amps.unsourced_inferred(doc)) if amps.detect(doc) else set()
        if bad:
            partial = copy.deepcopy(doc)
            partial["atoms"] = [a for i, a in enumerate(doc["atoms"]) if i not in bad]
            super().import_export(partial)
            raise Rejected({"error": "inferred atom without artifact_ids"}, "rejected")
        return super().import_export(doc, **params)


class FlattensSensitivity(ReferenceAmpsStore):
    """Re-exports every regulated atom as merely private."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            if atom.get("sensitivity") in ("medical", "financial", "legal"):
                atom["sensitivity"] = "private"
        return doc


class DropsLabels(ReferenceAmpsStore):
    """Re-exports atoms without sensitivity or valid_from (the schema allows it, the prose does not)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            atom.pop("sensitivity", None)
            atom.pop("valid_from", None)
        return doc


class ForgetsPrivate(ReferenceAmpsStore):
    """Re-exports private artifacts with the importer default, private: false."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for art in doc["artifacts"]:
            art["private"] = False
        return doc


class NoCascade(ReferenceAmpsStore):
    """Deletes the artifact but never re-evaluates the atoms that depend on it."""

    def delete_artifact(self, body: Any = None, **params: Any) -> dict[str, Any]:
        sid = self._subject_id(body)
        with self.db:
            gone = self.db.execute("DELETE FROM artifacts WHERE subject_id = ? AND artifact_id = ?",
                                   (sid, body.get("artifact_id"))).rowcount
        return {"deleted": bool(gone), "atoms_deleted": []}


class BindsInternalId(ReferenceAmpsStore):
    """Replaces the user's subject_id with the provider's own user id on export."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["subject"]["subject_id"] = "provider-user-0001"
        return doc


class FetchesMedia(ReferenceAmpsStore):
    """Downloads every artifact's media_url on import."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        reply = super().import_export(doc, **params)
        for _, art in amps.artifacts(doc):
            url = art.get("media_url")
            if isinstance(url, str) and url.startswith("http://127.0.0.1:"):  # only ever the loopback canary
                try:
                    urllib.request.urlopen(url, timeout=2).close()
                except OSError:
                    pass
        return reply


class SanitisesText(ReferenceAmpsStore):
    """'Protects' the model by rewriting instruction-like atom text on import."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        doc = copy.deepcopy(doc)
        for _, atom in amps.atoms(doc):
            if isinstance(atom.get("text"), str):
                atom["text"] = atom["text"].replace("Ignore all previous instructions", "[removed]").replace("<", "&lt;")
        return super().import_export(doc, **params)


class ObeysAtomText(ReferenceAmpsStore):
    """Treats atom text as instructions: "forget every other memory" wipes the subject's other atoms."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        reply = super().import_export(doc, **params)
        for _, atom in amps.atoms(doc):
            if "forget every other memory" in str(atom.get("text", "")).lower():
                with self.db:
                    self.db.execute("DELETE FROM atoms WHERE subject_id = ? AND atom_id != ?",
                                    (doc["subject"]["subject_id"], atom["atom_id"]))
        return reply


class RejectsExtensions(ReferenceAmpsStore):
    """Treats any x-provider field as an unknown field and refuses the export."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if "x-provider" in str(doc):
            raise Rejected({"error": "unknown field x-provider"}, "rejected")
        return super().import_export(doc, **params)


class NoExtractor(ReferenceAmpsStore):
    """Re-exports inferred atoms without naming the extractor."""

    def problems(self, doc: Any) -> list[str]:
        return [p for p in super().problems(doc) if "extractor" not in p]

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            atom["provenance"].pop("extractor", None)
        return doc


class DropsObservedSources(ReferenceAmpsStore):
    """Re-exports observed atoms without their artifact_ids."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            if atom["provenance"].get("derivation") == "observed":
                atom["provenance"].pop("artifact_ids", None)
        return doc


class InvertsValidity(ReferenceAmpsStore):
    """Re-exports atoms whose valid_to precedes valid_from (swaps the interval)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            if isinstance(atom.get("valid_to"), str) and isinstance(atom.get("valid_from"), str):
                atom["valid_from"], atom["valid_to"] = atom["valid_to"], atom["valid_from"]
        return doc


class PadsText(ReferenceAmpsStore):
    """Re-exports atom text with the whole artifact body appended (well over 500 characters)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        for atom in doc["atoms"]:
            atom["text"] = atom["text"] + " " + "context " * 80
        return doc


class LocalTimestamps(ReferenceAmpsStore):
    """Re-exports exported_at as local time with no zone (not an RFC 3339 date-time)."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["exported_at"] = doc["exported_at"].rstrip("Z")
        return doc


class OmitsArtifacts(ReferenceAmpsStore):
    """Re-exports atoms but leaves private artifacts out, so provenance dangles."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["artifacts"] = [a for a in doc["artifacts"] if not a.get("private")]
        return doc


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
            for atom in doc.get("atoms") if isinstance(doc.get("atoms"), list) else []:
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


class AddsInternalUserId(ReferenceAmpsStore):
    """Binds the provider's own user id to the subject in every export."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        doc = super().export(body, **params)
        doc["subject"]["provider_user_id"] = "u-000173"
        return doc


MUTANTS: dict[str, type] = {cls.__name__: cls for cls in (
    AcceptsUnsourcedInferred, ImportsPartOfRejected, FlattensSensitivity, DropsLabels, ForgetsPrivate, NoCascade,
    BindsInternalId, FetchesMedia, SanitisesText, ObeysAtomText, RejectsExtensions, NoExtractor, DropsObservedSources,
    InvertsValidity, PadsText, LocalTimestamps, OmitsArtifacts, LenientValidator, WritesBeforeValidating,
    ClearsSubjectFirst, ClassifiesSensitivity, PrivateOnlyForChats, TrustsOwnExports, CascadeByBacklinks,
    NormalisesSubjectId, AddsInternalUserId, RequiresLabels, PythonJsonParser,
    ArtifactsReplacedPerImport,
)}

# mutant -> {check id: a fragment of the failure title it must raise}: kills are keyed by failure branch,
# so each way a check can fail is shown to fire (the shared kill test reads the check ids, the keys)
EXPECTED_KILLS: dict[str, dict[str, str]] = {
    "AcceptsUnsourcedInferred": {
        "amps.rejects_unsourced_inferred": "an export with an unsourced inferred atom was accepted",
    },
    "ImportsPartOfRejected": {"amps.rejects_unsourced_inferred": "part of a rejected export was imported"},
    "FlattensSensitivity": {"amps.sensitivity_travels": "sensitivity changed between import and the re-export"},
    "DropsLabels": {
        "amps.atom_labels": "atom carries no sensitivity",
        "amps.sensitivity_travels": "sensitivity changed between import and the re-export",
    },
    "ForgetsPrivate": {"amps.private_stays_private": "lost private: true in the re-export"},
    "NoCascade": {
        "amps.delete_cascades": "an atom whose only source was deleted is neither deleted nor re-flagged unsourced",
    },
    "BindsInternalId": {"amps.subject_id_unchanged": "does not carry the user's subject_id unchanged"},
    "FetchesMedia": {"amps.media_url_not_fetched": "the consumer fetched an artifact's media_url"},
    "SanitisesText": {"amps.injection_text_round_trips": "instruction-like atom text did not round-trip unchanged"},
    "ObeysAtomText": {"amps.injection_text_round_trips": "the importer acted on instructions in an atom's text"},
    "RejectsExtensions": {"amps.x_provider_fields_accepted": "an export with x-provider fields was rejected"},
    "NoExtractor": {"amps.inferred_has_sources": "inferred atom names no extractor"},
    "DropsObservedSources": {"amps.observed_has_sources": "observed atom cites no artifact"},
    "InvertsValidity": {"amps.valid_to_not_before_valid_from": "atom expires before it becomes valid"},
    "PadsText": {
        "amps.schema_valid": "does not validate against the published schema",
        "amps.text_at_most_500": "atom text is longer than 500 characters",
    },
    "LocalTimestamps": {"amps.schema_valid": "does not validate against the published schema"},
    "OmitsArtifacts": {"amps.references_resolve": "reference resolves to nothing in the same export"},
    "LenientValidator": {
        "amps.rejects_malformed_export": "an export with created_at without a time zone was accepted",
    },
    "WritesBeforeValidating": {
        "amps.rejects_malformed_export": "was refused, but its atom was stored",
        "amps.rejects_unsourced_inferred": "the unsourced inferred atom was imported",
    },
    "ClearsSubjectFirst": {
        "amps.rejects_malformed_export": "lost the subject's earlier atom",
        "amps.rejects_unsourced_inferred": "a rejected export lost the subject's earlier atom",
    },
    "ClassifiesSensitivity": {"amps.sensitivity_travels": "sensitivity changed between import and the re-export"},
    "PrivateOnlyForChats": {"amps.private_stays_private": "a private document artifact lost private: true"},
    "TrustsOwnExports": {"amps.private_stays_private": "lost private: true in a downstream copy"},
    "CascadeByBacklinks": {
        "amps.delete_cascades": "an atom whose only source was deleted is neither deleted nor re-flagged unsourced",
    },
    "NormalisesSubjectId": {"amps.subject_id_unchanged": "does not carry the user's subject_id unchanged"},
    "AddsInternalUserId": {"amps.subject_id_unchanged": "the re-export binds another identifier to the subject"},
    "RequiresLabels": {"amps.accepts_valid_export": "worked example (ids made unique) was refused"},
    "PythonJsonParser": {"amps.hostile_json_refused": "import_export:"},
    "ArtifactsReplacedPerImport": {"amps.model_sequences": "the subject left the model"},
}
