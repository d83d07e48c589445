"""Known-broken MemoRizz stores that only the domain table's data reaches: a value class, a structural class,
or a pair of request parameters no hand-written check sends."""

from __future__ import annotations

import copy
import unicodedata
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.reference import ReferenceArchiveStore


def _nfc(value: Any) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, dict):
        return {k: _nfc(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nfc(v) for v in value]
    return value


class NormalisesText(ReferenceArchiveStore):
    """Stores every string of a record NFC-normalised (as a search index would): decomposed prose comes back
    composed, so its bytes differ from what was imported."""

    def write(self, store: str, rid: str, data: dict[str, Any]) -> None:
        super().write(store, rid, _nfc(data))


class NullStoresAsEmpty(ReferenceArchiveStore):
    """Reads a store whose value is null as an empty store instead of refusing the archive."""

    def problems(self, archive: Any) -> list[str]:
        found = super().problems(archive)
        stores = archive.get("stores") if isinstance(archive, dict) else None
        if isinstance(stores, dict) and None in stores.values():
            found = [p for p in found if not p.startswith(("stores_complete", "manifest_counts"))]
        return found


class DataIdNullAsAbsent(ReferenceArchiveStore):
    """Reads a `data.id` of null as absent instead of a present id that must match the record's."""

    def problems(self, archive: Any) -> list[str]:
        found = super().problems(archive)
        if isinstance(archive, dict) and any(isinstance(r.get("data"), dict) and "id" in r["data"] and r["data"]["id"] is None
                                             for _, r in memorizz.records_of(archive)):
            found = [p for p in found if not p.startswith("data_id_matches")]
        return found


class TypesIgnoredWithAgent(ReferenceArchiveStore):
    """An export selecting an agent ignores the store types asked for: every store of the agent's graph is
    exported (alone, a types selection and an agent selection both work)."""

    def select(self, body: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        if body.get("agent_id") is not None:
            body = {k: v for k, v in body.items() if k != "types"}
        return super().select(body)


class CloneSkipsHeldIds(ReferenceArchiveStore):
    """A clone under conflict=skip skips the records whose original ids the destination holds, as a restore
    would, although a clone gives every record a new id (no conflict)."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        body = parse_or_reject(body)
        if isinstance(body, dict) and body.get("mode") == "clone" and body.get("conflict") == "skip" \
                and isinstance(body.get("archive"), dict):
            archive = copy.deepcopy(body["archive"])
            for store, records in archive.get("stores", {}).items():
                if isinstance(records, list):
                    archive["stores"][store] = [r for r in records if not (isinstance(r, dict) and self.exists(store, str(r.get("id"))))]
            body = {**body, "archive": memorizz.seal(archive)}
        return super().import_archive(body, **params)


MUTANTS = {"NormalisesText": NormalisesText, "NullStoresAsEmpty": NullStoresAsEmpty, "DataIdNullAsAbsent": DataIdNullAsAbsent,
           "TypesIgnoredWithAgent": TypesIgnoredWithAgent, "CloneSkipsHeldIds": CloneSkipsHeldIds}
EXPECTED_KILLS = {
    "NormalisesText": {"memorizz.domain_records_every_class": "record.data.text:nfc_nfd"},
    "NullStoresAsEmpty": {"memorizz.domain_archive_every_class": "archive.stores:null_store"},
    "DataIdNullAsAbsent": {"memorizz.domain_records_and_manifest_every_class": "record.data.id:null"},
    "TypesIgnoredWithAgent": {"memorizz.domain_export_selection": "is not what the selection holds"},
    "CloneSkipsHeldIds": {"memorizz.domain_import_modes": "is not what the model allows"},
}
