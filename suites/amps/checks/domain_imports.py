"""An importer fed every class of every scalar atom, artifact and subject field of the domain table
(suites/amps/domain.json), each in an export of its own: allowed values imported and exported back as
written, forbidden ones refused with nothing stored, values the schema is silent on either way."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from memconform import domain
from memconform.core.check_context import CheckContext
from memconform.core.model import ControlRefused, Failure, HarnessError
from memconform.suites.amps.client import atoms_by_id, export, import_export, make_export, sourced
from memconform.suites.amps.suite import SUITE

# the fields whose classes an export can carry alone: ids and link arrays are drawn by no check yet (a
# generated id or link breaks the atom/artifact references, which is another rule)
PLACES = {"export.atoms[].": "atom", "export.atoms[].provenance.": "provenance", "export.artifacts[].": "artifact",
          "export.subject.": "subject"}
DERIVATION = "observed"  # cites an artifact and needs no extractor: every provenance field stays optional
NOT_DRAWN = {"atom_id", "artifact_id", "artifact_ids", "atom_ids", "subject_id", "provenance", "derivation"}


def table() -> domain.Domain:
    found = domain.load("amps")
    if found is None:
        raise HarnessError("suites/amps/domain.json is missing (scripts/make_domain_tables.py writes it)")
    return found


def drawn_fields() -> list[tuple[domain.Field, str, str]]:
    out = []
    for field in table().fields:
        for prefix, place in PLACES.items():
            name = field.id.removeprefix(prefix)
            if field.id.startswith(prefix) and "." not in name and "[" not in name and name not in NOT_DRAWN:
                out.append((field, place, name))
    return out


def with_value(doc: dict[str, Any], place: str, name: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    holder = {"atom": out["atoms"][0], "provenance": out["atoms"][0]["provenance"], "artifact": out["artifacts"][0],
              "subject": out["subject"]}[place]
    if value is domain.ABSENT:
        holder.pop(name, None)
    else:
        holder[name] = copy.deepcopy(value)
    return out


def read_back(doc: dict[str, Any], place: str, name: str, atom: dict[str, Any], exported: dict[str, Any]) -> Any:
    if place == "atom":
        return atoms_by_id(exported).get(atom["atom_id"], {}).get(name, domain.ABSENT)
    if place == "provenance":
        return (atoms_by_id(exported).get(atom["atom_id"], {}).get("provenance") or {}).get(name, domain.ABSENT)
    if place == "artifact":
        arts = {a.get("artifact_id"): a for a in exported.get("artifacts", []) if isinstance(a, dict)}
        return arts.get(doc["artifacts"][0]["artifact_id"], {}).get(name, domain.ABSENT)
    return (exported.get("subject") or {}).get(name, domain.ABSENT)


def same(sent: Any, got: Any) -> bool:
    if isinstance(sent, (int, float)) and isinstance(got, (int, float)) and not isinstance(sent, bool):
        return float(sent) == float(got)
    return bool(sent == got)


@SUITE.check(level="consumer", section="Schema", keyword="MUST", sentence='"required": ["atom_id", "kind", "text", "created_at", "provenance"],')
def imports_every_schema_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each value of each class alone in an export of a subject of its own (an inferred atom citing one
    artifact): `valid` imported and read back as written (numbers as doubles), `invalid` refused and
    not stored, `open` either way."""
    subject = ctx.unique("subject-domain")
    atom, art = sourced(ctx, "domain-control", DERIVATION)
    if not import_export(ctx, make_export(subject, [atom], [art])).ok:
        raise ControlRefused("an export of the same shape with every field as usual was refused")
    ledger = ctx.state(domain.DomainLedger)
    for field, place, name in drawn_fields():
        for vc in field.classes:
            for i, value in enumerate(vc.values()):
                subject = ctx.unique(f"subject-{vc.key}-{i}")
                atom, art = sourced(ctx, f"d-{vc.key}-{i}", DERIVATION)
                doc = with_value(make_export(subject, [atom], [art]), place, name, value)
                reply = import_export(ctx, doc)
                label = f"{vc.key} = {'<absent>' if value is domain.ABSENT else repr(value)[:60]}"
                stored = export(ctx, subject) if reply.ok else None
                if vc.expect == "valid" and not reply.ok:
                    yield Failure(f"{label}: an allowed value was refused", f"{reply.status} {reply.raw[:160]!r}", "imported")
                elif vc.expect == "invalid" and reply.ok:
                    yield Failure(f"{label}: a forbidden value was imported", f"{reply.status}", "refused")
                elif vc.expect == "valid" and stored is not None and value is not domain.ABSENT:
                    got = read_back(doc, place, name, atom, stored)
                    if not same(value, got):
                        yield Failure(f"{label}: not exported back as written", repr(got)[:120], repr(value)[:120], f"$.{place}.{name}")
                ledger.judge([vc.key])
