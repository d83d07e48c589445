"""What the AMPS import checks build and judge: refused variants of a valid export (a field set or dropped), the
malformed-export breaker, the unsourced-atom variant and its failures, and a canary for fetched media. Not a
check module: the checks import it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Failure, HarnessError, Inconclusive
from memconform.kit import domain
from memconform.suites.amps import domain_fields
from memconform.suites.amps import format as amps
from memconform.suites.amps.client import (
    artifacts_by_id,
    atoms_by_id,
    export,
    import_export,
    make_atom,
    make_export,
    sourced,
)

Breaker = Callable[[dict[str, Any]], Any]


def _stored_atoms(ctx: CheckContext, subject_id: str) -> dict[Any, dict[str, Any]]:
    return atoms_by_id(export(ctx, subject_id))


def refused_variants(ctx: CheckContext, label: str, variants: dict[str, Breaker]) -> Iterator[Failure]:
    """Control first (the export, unbroken, must import), then each broken export to the same subject: it must
    be refused, and neither its atoms appear nor the control's disappear."""
    subject_id = ctx.unique("subject")
    anchor, anchor_art = sourced(ctx, f"{label}-control")
    reply = import_export(ctx, make_export(subject_id, [anchor], [anchor_art]))
    if not reply.ok:
        raise ControlRefused(f"a conformant export of the same shape was refused: {reply.raw[:200]!r}")
    if anchor["atom_id"] not in _stored_atoms(ctx, subject_id):
        raise Inconclusive("the accepted control export is not in the subject's export: absence shows nothing")
    for what, breaker in variants.items():
        atom, art = sourced(ctx, label)
        atom_id = atom["atom_id"]
        doc = make_export(subject_id, [atom], [art])
        breaker(doc)
        reply = import_export(ctx, doc)
        stored = _stored_atoms(ctx, subject_id)
        if reply.ok:
            yield Failure(f"an export with {what} was accepted", f"{reply.status} {reply.raw[:200]!r}", "rejected")
        elif atom_id in stored:
            yield Failure(f"an export with {what} was refused, but its atom was stored", atom_id, "absent", "$.atoms")
        if anchor["atom_id"] not in stored:
            yield Failure(f"importing an export with {what} lost the subject's earlier atom", "absent",
                          anchor["atom_id"], "$.atoms")


def _set(*path: Any, value: Any) -> Breaker:
    def brk(doc: dict[str, Any]) -> None:
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return brk


def _drop(*path: Any) -> Breaker:
    def brk(doc: dict[str, Any]) -> None:
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return brk


def malformed_breaker(source: Any) -> tuple[str, Breaker]:
    """(what the table calls it, the breaker) for a table class key, or the breaker of a literal (path..., value)."""
    if isinstance(source, tuple):
        return "", _set(*source[:-1], value=source[-1])
    field_id, class_id = source.split(":")
    vc = domain_fields.table().field(field_id).cls(class_id)
    if vc.expect != "invalid":
        raise HarnessError(f"{source} is not an invalid class of suites/amps/domain.json")
    path = tuple(part for name in field_id.removeprefix("export.").split(".")
                 for part in ((name[:-2], 0) if name.endswith("[]") else (name,)))
    return vc.key, _drop(*path) if vc.value() is domain.ABSENT else _set(*path, value=vc.value())


def _unsourced_variant(ctx: CheckContext, subject_id: str, anchor: dict[str, Any], whole: bool, what: str,
                       ids: list[str] | None) -> Iterator[Failure]:
    good, art = sourced(ctx, "good")
    bad = make_atom(ctx, "laundered", "inferred", ids)  # inferred, and no artifact id
    reply = import_export(ctx, make_export(subject_id, [good, bad], [art]))
    if whole and reply.ok:
        yield Failure(f"an export with an unsourced inferred atom was accepted ({what})",
                      f"{reply.status} {reply.raw[:200]!r}", "rejected", readings=("A4:reject-export",))
    after = export(ctx, subject_id)
    stored = atoms_by_id(after)
    if bad["atom_id"] in stored:
        yield Failure(f"the unsourced inferred atom was imported ({what})", bad["text"], "absent", "$.atoms")
    if not reply.ok and good["atom_id"] in stored:
        yield Failure(f"part of a rejected export was imported ({what})", good["text"], "nothing from the rejected export",
                      "$.atoms")
    if not reply.ok and art["artifact_id"] in artifacts_by_id(after):
        yield Failure(f"an artifact of a rejected export was imported ({what})", art["artifact_id"], "absent", "$.artifacts")
    if not reply.ok and anchor["atom_id"] not in stored:
        yield Failure(f"a rejected export lost the subject's earlier atom ({what})", "absent", anchor["atom_id"], "$.atoms")


# "no artifact_ids", each way an exporter writes it: the key left out, null, an empty list
UNSOURCED: tuple[tuple[str, Any], ...] = (("artifact_ids absent", None), ("artifact_ids null", "null"), ("artifact_ids []", []))


def unsourced_atom_failures(ctx: CheckContext, derivation: str) -> Iterator[Failure]:
    """An atom of `derivation` citing no artifact (each of UNSOURCED) beside a good atom, each in an export
    of its own to one subject: refused (nothing of that export stored), the atom left out, or stored with
    sources it names itself; never stored as it came, since the importer's own export would then break
    "artifact_ids required" (errata A3). The control: the same export with the atom's artifact cited."""
    subject_id = ctx.unique(f"subject-unsourced-{derivation}")
    control, control_art = sourced(ctx, f"unsourced-{derivation}-control", derivation)
    if not import_export(ctx, make_export(subject_id, [control], [control_art])).ok:
        raise ControlRefused(f"the same export with the {derivation} atom's artifact cited was refused")
    for what, ids in UNSOURCED:
        good, good_art = sourced(ctx, f"unsourced-{derivation}-good", "stated")
        bad = make_atom(ctx, f"unsourced-{derivation}", derivation)  # no artifact_ids key
        if ids is not None:
            bad["provenance"]["artifact_ids"] = None if ids == "null" else ids
        reply = import_export(ctx, make_export(subject_id, [good, bad], [good_art]))
        stored = atoms_by_id(export(ctx, subject_id))
        kept = stored.get(bad["atom_id"])
        if kept is not None and not amps.has_sources(kept):
            yield Failure(f"a{'n' if derivation[0] in 'aeiou' else ''} {derivation} atom without sources was imported "
                          f"as it came ({what})", (kept.get("provenance") if isinstance(kept, dict) else kept),
                          "refused, left out, or stored citing an artifact", "$.atoms[?].provenance.artifact_ids")
        if not reply.ok and good["atom_id"] in stored:
            yield Failure(f"part of a rejected export was imported ({what})", good["text"], "nothing from the rejected export",
                          "$.atoms")


class _Canary:
    """A loopback HTTP server that only counts requests: nothing should ever reach it."""

    def __init__(self) -> None:
        import http.server  # only when a canary is started: validate never needs it

        hits: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            do_HEAD = do_POST = do_GET  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.hits = hits
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # a short poll keeps shutdown() quick: it waits for the serving loop's next turn
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{path}"

    def __enter__(self) -> _Canary:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
