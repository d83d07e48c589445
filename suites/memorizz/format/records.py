"""Walking an archive's records: links between records, credentials and embeddings in them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.kit.shared_rules import secret_key
from memconform.suites.memorizz.format.constants import LINK_FIELDS, embedding_key

LINK_SET = frozenset(LINK_FIELDS)
# errata M6: an external reference is an id string, or an object naming the id under one of these keys
REFERENCE_ID_KEYS = ("id", "target_id", "target", "target_record_id", "record_id", "ref", "ref_id", "to")


def reported_ids(entries: Any) -> set[str]:
    """The ids a manifest's external_references names, whether as strings or as objects."""
    out: set[str] = set()
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, str):
            out.add(entry)
        elif isinstance(entry, dict):
            out.update(v for k in REFERENCE_ID_KEYS if isinstance(v := entry.get(k), str))
    return out


def links_of(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, target id) for each explicit record link in a record's data (and a structured content)."""
    for node in (data, data.get("content")):
        if isinstance(node, dict):
            for name in LINK_SET.intersection(node):
                refs = node[name]
                for ref in refs if isinstance(refs, list) else [refs]:
                    if isinstance(ref, str) and ref:
                        yield name, ref


def external_references(value: dict[str, Any], ids: set[str] | None = None) -> set[str]:
    stores: dict[str, Any] = value["stores"] if isinstance(value.get("stores"), dict) else {}
    if ids is None:
        ids = {r["id"] for rs in stores.values() if isinstance(rs, list) for r in rs
               if isinstance(r, dict) and isinstance(r.get("id"), str)}
        ids |= {r["data"]["record_id"] for rs in stores.values() if isinstance(rs, list) for r in rs
                if isinstance(r, dict) and isinstance(r.get("data"), dict)
                and isinstance(r["data"].get("record_id"), str)}
    out = set()
    for records in stores.values():
        for record in records if isinstance(records, list) else []:
            if isinstance(record, dict) and isinstance(record.get("data"), dict):
                out |= {ref for _, ref in links_of(record["data"]) if ref not in ids}
    return out


def refs_in(node: dict[str, Any]) -> Iterator[str]:
    for name in LINK_SET.intersection(node):
        refs = node[name]
        for ref in refs if isinstance(refs, list) else [refs]:
            if isinstance(ref, str) and ref:
                yield ref


def credential_paths(value: Any, path: str = "$") -> Iterator[str]:
    """Paths of credential-named keys (common.secret_key, errata M10; a JSON Schema's `properties` names are
    interface, not secrets)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if secret_key(k) and not path.endswith((".properties", ".$defs")) and v not in (None, ""):
                yield f"{path}.{k}"
            yield from credential_paths(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from credential_paths(v, f"{path}[{i}]")


def embedding_paths(value: Any, path: str = "$", with_vector: bool = False) -> Iterator[str]:
    """Paths of non-empty embedding fields (errata M8: `vector` only `with_vector`)."""
    if isinstance(value, dict):
        for k, v in value.items():
            reading = embedding_key(k)
            if reading is not None and (not reading or with_vector) and v not in (None, [], ""):
                yield f"{path}.{k}"
            else:
                yield from embedding_paths(v, f"{path}.{k}", with_vector)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from embedding_paths(v, f"{path}[{i}]", with_vector)


def records_of(archive: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(store, record) of every record object in the archive's stores. Stores that are not an object (an
    array, null, a string), a store that is not an array and a record that is not an object are walked as
    empty: a check reading records never meets a value of another JSON type (the archive checks judge it)."""
    stores = archive.get("stores") if isinstance(archive, dict) else None
    if not isinstance(stores, dict):
        return
    for store, records in stores.items():
        for record in records if isinstance(records, list) else []:
            if isinstance(record, dict):
                yield store, record


SAFE_INTEGER = 2**53 - 1
SHOWN_UNSAFE = 20  # integers_safe shows the first of them by path


def unsafe_integers(value: Any, path: str = "$") -> Iterator[tuple[str, int]]:
    """(path, integer) of every integer past JavaScript's safe range in the value."""
    stack = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, f"{where}.{k}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node))
        elif type(node) is int and abs(node) > SAFE_INTEGER:
            yield where, node
