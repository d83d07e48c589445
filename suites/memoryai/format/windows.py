"""MemoryAI in windows: a bundle's record sections judged a slice at a time, with the findings the
whole-document path reports (tests/test_windowed_validate.py holds them equal).

The checks of a record (every chunk, edge, entity on its own) run on each window, as it is read, in a
context whose per-document caches (`once`) are the window's and whose readings are the run's; their
findings, re-indexed, are handed back when the check runs. The envelope's checks run on the
WindowedDocument itself: its sections have their lengths (declared counts) and the §3.6 canonical
bytes are taken a window at a time, in key order (each section read again at the end), into what the
checksum check asks of them (reading_kinds.LiteralText), never held as one text. The credentials check runs on
each window and on each envelope member, its findings put back in the document's key order.
A check this plan does not know, an envelope member after a section (the record checks read the
manifest), or a checksum that only another reading matches: the file is read whole."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from memconform.core.registry import Check
from memconform.core.results import Failure
from memconform.kit.windows import NotWindowable
from memconform.kit.windows.plan import Found, PlanContext, Rereader, WindowPlan, replayed

SECTIONS = ("chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents")
RECORD_CHECKS = {  # check -> the section whose records it judges one by one
    "chunk_required_fields": "chunks", "chunk_field_types": "chunks", "chunk_enums_and_ranges": "chunks",
    "memory_type_known_or_vendor": "chunks", "embedding_base64_float32": "chunks",
    "embedding_length_matches_dim": "chunks", "content_hash_matches": "chunks",
    "edge_fields": "memory_edges", "entity_required_fields": "entities",
}
ENVELOPE_CHECKS = {"envelope_format_literal", "envelope_version_integer", "manifest_required_fields",
                   "envelope_optional_fields", "counts_accurate", "checksum_present_and_valid"}
CREDENTIALS = "no_credentials_in_bundle"
CHECKSUM = "checksum_present_and_valid"


class _WindowContext:
    """The run's context for one window: its own per-document caches, everything else the run's."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx
        self._memo: dict[str, Any] = {}

    def once(self, key: str, make: Any) -> Any:
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


@dataclasses.dataclass
class _Found(Found):
    outside: set[tuple[str, str, str]] = dataclasses.field(default_factory=set)  # failures not in a record, once


def _shifted(failure: Failure, section: str, first: int) -> Failure:
    prefix = f"$.{section}["
    if not first or not failure.path.startswith(prefix):
        return failure
    path = re.sub(r"^\$\.[a-z0-9_]+\[(\d+)\]", lambda m: f"{prefix}{int(m[1]) + first}]", failure.path, count=1)
    return dataclasses.replace(failure, path=path)


class MemoryaiWindows(WindowPlan):
    sections = SECTIONS

    def __init__(self, context: PlanContext) -> None:
        super().__init__(context)
        names = {c.id.split(".", 1)[1]: c for c in context.checks}
        unknown = set(names) - set(RECORD_CHECKS) - ENVELOPE_CHECKS - {CREDENTIALS}
        if unknown:  # a check added since: only the whole document is known to give its findings
            raise NotWindowable(f"checks this plan does not know: {sorted(unknown)}")
        self.by_name = names
        self.found: dict[str, _Found] = {name: _Found() for name in names if name in RECORD_CHECKS or name == CREDENTIALS}
        self.credentials: dict[str, list[Failure]] = {}  # section -> its records' credential findings
        self.envelope: dict[str, Any] = {}

    def begin(self, envelope: dict[str, Any]) -> None:
        self.envelope = envelope
        self.context.ctx.document = envelope  # a given document, not a target's export: checks judge it as it is

    def _run(self, name: str, doc: Any, section: str, first: int, memo: _WindowContext | None = None) -> list[Failure]:
        """One check on one window, its findings re-indexed; what it raised is kept for when it runs.
        `memo`: the window's context, shared by the checks given the same `doc` (as the whole-file path
        shares the document's: what one computes once, e.g. the embeddings' sizes, the next reuses)."""
        found = self.found[name]
        if found.raised is not None:
            return []
        ctx = self.context.ctx
        ctx.check_id = self.by_name[name].id  # readings name the check that saw them
        out: list[Failure] = []
        try:
            for failure in self.by_name[name].fn(doc, memo or _WindowContext(ctx)):
                failure = _shifted(failure, section, first)
                if not failure.path.startswith(f"$.{section}["):
                    key = (failure.title, failure.path, repr(failure.received))
                    if key in found.outside:
                        continue  # the same finding about the envelope, from another window
                    found.outside.add(key)
                out.append(failure)
        except Exception as exc:  # noqa: BLE001 - raised again when the check runs, where the runner judges it
            found.raised = exc
        finally:
            ctx.check_id = ""
        return out

    def window(self, section: str, first: int, items: list[Any]) -> None:
        doc = {**self.envelope, section: items}
        memo = _WindowContext(self.context.ctx)  # one per window document, as the whole file has one
        for name, owner in RECORD_CHECKS.items():
            if owner == section and name in self.found:
                self.found[name].failures += self._run(name, doc, section, first, memo)
        if CREDENTIALS in self.found:
            self.credentials.setdefault(section, []).extend(self._run(CREDENTIALS, {section: items}, section, first))

    def finish(self, envelope: dict[str, Any], counts: dict[str, int], again: Rereader,
               late: list[Any]) -> dict[str, Any]:
        if late:
            raise NotWindowable("envelope members after a section: the record checks read the manifest first")
        if CREDENTIALS in self.found:
            ordered: list[Failure] = []
            for key, value in envelope.items():
                ordered += self.credentials.get(key, []) if key in counts else self._run(CREDENTIALS, {key: value}, key, 0)
            self.found[CREDENTIALS].failures = ordered
        if CHECKSUM in self.by_name:
            self._canonical(envelope, counts, again)
        return {}

    def _canonical(self, envelope: dict[str, Any], counts: dict[str, int], again: Rereader) -> None:
        """What the checksum check asks of the literal canonical bytes (sorted keys, no whitespace), taken from them
        in pieces in key order (each section's windows read again), handed to it when they match the claimed
        checksum; else (another reading, or a mismatch to report) read whole."""
        from memconform.suites.memoryai.format import canonical_value_bytes
        from memconform.suites.memoryai.reading_kinds import LiteralText

        ctx = self.context.ctx
        manifest = envelope.get("manifest")
        claimed = manifest.get("checksum") if isinstance(manifest, dict) else None
        if not isinstance(claimed, str):
            return  # the check judges that without the canonical bytes
        if ctx.option("checksum_unicode") == "ascii" or ctx.option("checksum_numbers") == "ecmascript":
            raise NotWindowable("a checksum reading other than the literal one is pinned")

        literal = LiteralText()

        def section(key: str) -> None:
            """A section's canonical text, its records' a window at a time (the file's bytes, never held whole)."""
            literal.add(b"[")
            wrote = False
            for _, items in again(key):
                piece = canonical_value_bytes(items)[1:-1]
                if wrote and piece:
                    literal.add(b",")
                literal.add(piece)
                wrote = wrote or bool(piece)
            literal.add(b"]")

        try:
            literal.add(b"{")
            for at, key in enumerate(sorted(envelope)):
                literal.add((b"," if at else b"") + canonical_value_bytes(key) + b":")
                if key in counts:
                    section(key)
                elif key == "manifest" and isinstance(manifest, dict):
                    literal.add(canonical_value_bytes({k: v for k, v in manifest.items() if k != "checksum"}))
                else:
                    literal.add(canonical_value_bytes(envelope[key]))
            literal.add(b"}")
        except (ValueError, TypeError):
            raise NotWindowable("a value the canonical form cannot write (NaN, infinity, a lone surrogate)") from None
        if literal.hexdigest() != claimed.lower():
            raise NotWindowable("the checksum matches no literal reading: the whole document says which")
        ctx.once("canonical-literal", lambda: literal)

    def checks(self, checks: list[Check]) -> list[Check]:
        out = []
        for check in checks:
            found = self.found.get(check.id.split(".", 1)[1])
            out.append(check if found is None else dataclasses.replace(check, fn=replayed(found)))
        return out


WINDOW_PLAN = MemoryaiWindows
