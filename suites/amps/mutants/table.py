"""Known-broken AMPS stores: each breaks ONE rule and must be caught by the checks named for it."""

from __future__ import annotations

import re
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.amps import format as amps
from memconform.suites.amps.mutants.imports import (
    ArtifactsReplacedPerImport,
    CascadeByBacklinks,
    CascadeRelabels,
    ClassifiesSensitivity,
    ClearsSubjectFirst,
    LenientValidator,
    NormalisesSubjectId,
    PrivateOnlyForChats,
    PythonJsonParser,
    RequiresLabels,
    TrustsOwnExports,
    WritesBeforeValidating,
    ZuluSecondsOnly,
)
from memconform.suites.amps.mutants.stores import (
    AcceptsInferredWithoutExtractor,
    AcceptsUnsourcedInferred,
    AddsInternalUserId,
    BindsInternalId,
    BoolIsNumber,
    CountsBytesForMaxLength,
    DropsLabels,
    DropsObservedSources,
    EmptySourcesCount,
    FetchesMedia,
    FlattensSensitivity,
    ForgetsPrivate,
    ImportsPartOfRejected,
    InvertsValidity,
    LocalTimestamps,
    NoCascade,
    NoExtractor,
    ObeysAtomText,
    OmitsArtifacts,
    PadsText,
    RejectsExtensions,
    SanitisesText,
)
from memconform.suites.amps.reference import ReferenceAmpsStore
from memconform.targets.base import Rejected

MUTANTS: dict[str, type] = {cls.__name__: cls for cls in (
    AcceptsUnsourcedInferred, ImportsPartOfRejected, FlattensSensitivity, DropsLabels, ForgetsPrivate, NoCascade,
    BindsInternalId, FetchesMedia, SanitisesText, ObeysAtomText, RejectsExtensions, NoExtractor, DropsObservedSources,
    InvertsValidity, PadsText, LocalTimestamps, OmitsArtifacts, LenientValidator, WritesBeforeValidating,
    ClearsSubjectFirst, ClassifiesSensitivity, PrivateOnlyForChats, TrustsOwnExports, CascadeByBacklinks,
    NormalisesSubjectId, AddsInternalUserId, RequiresLabels, PythonJsonParser,
    ArtifactsReplacedPerImport, CountsBytesForMaxLength, BoolIsNumber, EmptySourcesCount, AcceptsInferredWithoutExtractor,
)}

# mutant -> {check id: a fragment of the failure title it must raise}: kills are keyed by failure branch,
# so each way a check can fail is shown to fire (the shared kill test reads the check ids, the keys)
EXPECTED_KILLS: dict[str, dict[str, str]] = {
    "CountsBytesForMaxLength": {"amps.accepts_schema_edges": "an export valid at the schema's edges was refused"},
    "BoolIsNumber": {"amps.rejects_malformed_export": "an export with confidence true (a boolean) was accepted"},
    "EmptySourcesCount": {"amps.rejects_unsourced_inferred": "the unsourced inferred atom was imported (artifact_ids [])"},
    "AcceptsInferredWithoutExtractor": {"amps.rejects_inferred_without_extractor": "an inferred atom without an extractor was imported"},
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


class ImportBodyCap(ReferenceAmpsStore):
    """Issue 13: the import refuses exports over 1 MiB (a request body cap), so a subject's own export cannot
    be imported back once its transcripts grow; every small import passes."""

    CAP = 1024 * 1024

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        import json

        size = len(doc) if isinstance(doc, (bytes, bytearray)) else len(json.dumps(doc).encode("utf-8"))
        if size > self.CAP:
            raise Rejected({"error": "payload too large", "bytes": size}, "payload too large")
        return super().import_export(doc, **params)


MUTANTS["ImportBodyCap"] = ImportBodyCap
MUTANTS["ZuluSecondsOnly"] = ZuluSecondsOnly
EXPECTED_KILLS["ZuluSecondsOnly"] = {"amps.imports_every_schema_class": "an allowed value was refused"}
EXPECTED_KILLS["ImportBodyCap"] = {"amps.own_export_imported_back_large": "was refused when imported back"}


class ImportStopsAtInvalid(ReferenceAmpsStore):
    """"Enough to reject malformed exports": atoms are written one by one, and the first one the schema
    refuses ends the import without a word: the atoms before it stay, those after it are dropped, success."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        atoms: list[Any] = doc["atoms"] if isinstance(doc, dict) and isinstance(doc.get("atoms"), list) else []
        for i in range(len(atoms)):
            if self.problems({**doc, "atoms": atoms[:i + 1]}):
                return super().import_export({**doc, "atoms": atoms[:i]}, **params)
        return super().import_export(doc, **params)


MUTANTS["ImportStopsAtInvalid"] = ImportStopsAtInvalid
EXPECTED_KILLS["ImportStopsAtInvalid"] = {"amps.import_batch_middle_item": "the write stopped at the middle item without saying so"}


from memconform.suites.amps.mutants.domain import (  # noqa: E402
    FoldsIdCase,
    RegulatedDropsConfidence,
    StoresBeforeCheckingExportedAt,
)

MUTANTS["FoldsIdCase"] = FoldsIdCase
MUTANTS["RegulatedDropsConfidence"] = RegulatedDropsConfidence
EXPECTED_KILLS["FoldsIdCase"] = {"amps.imports_every_envelope_and_id_class": "the export does not hold what was imported"}
EXPECTED_KILLS["RegulatedDropsConfidence"] = {"amps.imports_optional_fields_pairwise": "not exported back as written"}
MUTANTS["CascadeRelabels"] = CascadeRelabels
EXPECTED_KILLS["CascadeRelabels"] = {"amps.delete_cascades": "is not what the model says it leaves"}
MUTANTS["StoresBeforeCheckingExportedAt"] = StoresBeforeCheckingExportedAt
EXPECTED_KILLS["StoresBeforeCheckingExportedAt"] = {
    "amps.imports_every_envelope_and_id_class": "refused, but what the subject holds changed"}


class AcceptsUnsourcedObserved(ReferenceAmpsStore):
    """Imports an observed atom that cites no artifact (absent or empty artifact_ids) as it came: the spec's
    importer sentence names inferred atoms only, so the observed twin was never checked."""

    def problems(self, doc: Any) -> list[str]:
        return [p for p in super().problems(doc) if "observed atom cites no" not in p]


class RefusesOwnExport(ReferenceAmpsStore):
    """Refuses any export naming itself as source_provider ("already imported"), its own re-export included."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        doc = parse_or_reject(doc)
        if isinstance(doc, dict) and doc.get("source_provider") == self.source_provider:
            raise Rejected({"error": "an export of this vault cannot be imported into it"}, "own export")
        return super().import_export(doc, **params)


class DeletesArtifactEverywhere(ReferenceAmpsStore):
    """Deletes an artifact by its id alone, in every subject holding that id (and cascades there too)."""

    def delete_artifact(self, body: Any = None, **params: Any) -> dict[str, Any]:
        aid = body.get("artifact_id") if isinstance(body, dict) else None
        holders = [sid for (sid,) in self.db.execute("SELECT DISTINCT subject_id FROM artifacts WHERE artifact_id = ?", (aid,))]
        answer = super().delete_artifact(body, **params)
        for sid in holders:
            if sid != self._subject_id(body):
                super().delete_artifact({"subject_id": sid, "artifact_id": aid})
        return answer


_OFFSET = re.compile(r"([+-])(\d\d):?(\d\d)$")


def _date_times(doc: Any) -> list[str]:
    """Every date-time string of an export: exported_at, the atoms' and the artifacts' times."""
    if not isinstance(doc, dict):
        return []
    found = [doc.get("exported_at")]
    found += [a.get(k) for _, a in amps.atoms(doc) for k in ("valid_from", "valid_to", "created_at")]
    found += [a.get("captured_at") for _, a in amps.artifacts(doc)]
    return [t for t in found if isinstance(t, str)]


class OffsetsWithinTwelveHours(ReferenceAmpsStore):
    """Refuses a date-time whose offset lies beyond +-12:00 (+12:45 and +14:00 are real, and valid RFC 3339)."""

    def problems(self, doc: Any) -> list[str]:
        far = [t for t in _date_times(doc) if (m := _OFFSET.search(t)) and int(m.group(2)) * 60 + int(m.group(3)) > 720]
        return super().problems(doc) + [f"offset out of range: {t}" for t in far]


class IntervalsComparedAsStrings(ReferenceAmpsStore):
    """Refuses an atom whose valid_to sorts before its valid_from as a string (not as an instant)."""

    def problems(self, doc: Any) -> list[str]:
        out = super().problems(doc)
        for i, atom in amps.atoms(doc) if isinstance(doc, dict) else []:
            start, end = atom.get("valid_from"), atom.get("valid_to")
            if isinstance(start, str) and isinstance(end, str) and end < start:
                out.append(f"$.atoms[{i}]: valid_to before valid_from")
        return out


for _mutant in (AcceptsUnsourcedObserved, RefusesOwnExport, DeletesArtifactEverywhere, OffsetsWithinTwelveHours,
                IntervalsComparedAsStrings):
    MUTANTS[_mutant.__name__] = _mutant
EXPECTED_KILLS["AcceptsUnsourcedObserved"] = {
    "amps.rejects_observed_without_sources": "an observed atom without sources was imported as it came"}
EXPECTED_KILLS["RefusesOwnExport"] = {
    "amps.private_stays_private": "the target refused to import its own export",
    "amps.sensitivity_travels": "the target refused to import its own export"}
EXPECTED_KILLS["DeletesArtifactEverywhere"] = {
    "amps.delete_cascades": "deleting an artifact of one subject deleted another subject's artifact of the same id"}
EXPECTED_KILLS["OffsetsWithinTwelveHours"] = {"amps.imports_every_schema_class": "an allowed value was refused"}
EXPECTED_KILLS["IntervalsComparedAsStrings"] = {"amps.imports_optional_fields_pairwise": "refused, although every value is allowed"}
EXPECTED_KILLS["AcceptsUnsourcedInferred"]["amps.rejects_inferred_without_sources"] = \
    "an inferred atom without sources was imported as it came (artifact_ids absent)"
EXPECTED_KILLS["EmptySourcesCount"]["amps.rejects_inferred_without_sources"] = \
    "an inferred atom without sources was imported as it came (artifact_ids [])"
EXPECTED_KILLS["EmptySourcesCount"]["amps.rejects_observed_without_sources"] = \
    "an observed atom without sources was imported as it came (artifact_ids [])"
