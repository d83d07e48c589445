"""MemoryAI's reading kinds: the forms of request and answer in which its checks meet an open point (a row of
the table in readings.py meets one of these and predicts from its answer). Data only: the table and its
questions are in readings.py, TABLE in table.py."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memconform.suites.memoryai import format as memoryai

if TYPE_CHECKING:  # the model is imported where a kind predicts from it: judging a bundle's checksum needs none of it
    from memconform.suites.memoryai import model

# what a literal reading's digest is when the bundle holds a lone surrogate (JSON can escape one; UTF-8 cannot
# write it): never a sha256 hex digest, so no claim matches it
NO_LITERAL_BYTES = "(none: a lone surrogate has no UTF-8 bytes)"


def _model() -> Any:
    from memconform.suites.memoryai import model

    return model


class LiteralText:
    """What the checksum rule asks of a bundle's literal canonical bytes (their sha256, whether they are all ASCII,
    whether they hold a float), taken from the bytes in pieces, in order, so a bundle read in windows is never held
    as one text (format/windows.py). Each piece is whole JSON tokens: a float is found in it as in the whole."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256()
        self.ascii, self.floats = True, False

    def add(self, piece: bytes) -> None:
        self._sha.update(piece)
        self.ascii = self.ascii and piece.isascii()
        self.floats = self.floats or holds_a_float(piece)

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


@dataclass(frozen=True)
class ChecksumCase:
    """E1: a bundle whose manifest.checksum (the answer, lower case) is judged; `literal`: its literal canonical
    bytes when the check has them cached (or what a LiteralText took from them)."""

    doc: Mapping[str, Any]
    literal: bytes | LiteralText | None = field(default=None, compare=False)

    def digest(self, reading: str) -> str:
        unicode, numbers = memoryai.CHECKSUM_READINGS[reading]
        if (unicode, numbers) == ("literal", "python") and self.literal is not None:
            literal = self.literal
            return literal.hexdigest() if isinstance(literal, LiteralText) else hashlib.sha256(literal).hexdigest()
        try:
            return memoryai.checksum(dict(self.doc), unicode, numbers)
        except UnicodeEncodeError:  # a lone surrogate has no UTF-8 bytes: only the ASCII-escapes readings have a digest
            return NO_LITERAL_BYTES

    def shows_a_reading(self) -> bool:
        """An all-ASCII bundle without floats has one digest under every reading: it shows none of them. With
        the literal bytes at hand the floats are read from them (a document read in windows withholds its
        records: kit/windows), not from the document."""
        if self.literal is None:
            try:
                data = memoryai.canonical_bytes(dict(self.doc), "literal")
            except UnicodeEncodeError:
                return True  # a lone surrogate: the literal readings have no bytes, the escapes reading shows itself
            return not data.isascii() or memoryai.has_float(dict(self.doc))
        if isinstance(self.literal, LiteralText):
            return not self.literal.ascii or self.literal.floats
        return not self.literal.isascii() or holds_a_float(self.literal)


# in canonical JSON text: a string (skipped whole) or a number; a number with a fraction or an exponent is a float
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?')


def holds_a_float(text: bytes) -> bool:
    """Does this JSON text hold a float (python's json writes every float with a '.' or an exponent)?"""
    if not re.search(rb"[0-9][.eE]", text):  # no digit before a dot or an exponent anywhere: no float
        return False
    return any(token[:1] != b'"' and any(c in token for c in (b".", b"e", b"E")) for token in
               (m.group() for m in _TOKEN.finditer(text)))


@dataclass(frozen=True)
class ContentHash:
    """E2: a chunk's content that NFC changes; the answer is its content_hash, lower case."""

    content: str


@dataclass(frozen=True)
class StreamLine:
    """E3: one line of an NDJSON export stream (the answer, a JSON object) that is no bundle envelope."""


@dataclass(frozen=True)
class MultipartImport:
    """E4: an import through /import/file; the answer is the field name the target accepted the bundle by."""


@dataclass(frozen=True)
class Reimport:
    """E6: the same bundle imported twice; the answer is the frequency an entity of it exported afterwards."""

    bundle: Mapping[str, Any]
    entity: str

    def frequency(self, counters: str) -> Any:
        model = _model()
        once = model.import_answers(model.State(), self.bundle)[0].state
        after = {o.reading: o.state.entities[self.entity].get("frequency") for o in model.import_answers(once, self.bundle)}
        return after.get(counters)


@dataclass(frozen=True)
class ImportAnswer:
    """What an import did: accepted, the bundle's chunks held afterwards, whether it answered an ImportReport and
    that report's `chunks` counters (as sent: not an object counts nothing)."""

    accepted: bool
    held: frozenset[str]
    reported: bool = False
    counters: Any = None

    def shown(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "chunks held": len(self.held), "counters": self.counters}


@dataclass(frozen=True)
class InvalidChunks:
    """E9: a bundle with an invalid chunk imported in `state`; `touched` the hashes the row judges."""

    state: model.State
    bundle: Mapping[str, Any]
    touched: frozenset[str]

    def fits(self, accepted: bool, answer: ImportAnswer) -> bool:
        def counted(o: model.Answer) -> bool:
            if not (answer.reported and answer.accepted):
                return True
            return all(isinstance(answer.counters, Mapping) and answer.counters.get(k) == v for k, v in o.counters.items())
        return any(o.accepted == accepted == answer.accepted and answer.held == frozenset(o.state.chunks) & self.touched
                   and counted(o) for o in _model().import_answers(self.state, self.bundle))


@dataclass(frozen=True)
class ScopedExport:
    """E10, E62: an export of `scope` with `since` in the oracle's `state`; the answer is the set of the state's
    chunks it held, judged on the chunks of `judged` only (None: the whole set); `readings` the run's model readings (a pinned
    E10 boundary narrows E62's `applied`)."""

    state: model.State
    scope: str
    since: str
    judged: frozenset[str] | None = None
    readings: model.Readings = field(default_factory=lambda: _model().DEFAULT)

    def holds(self, point: str, reading: str, answer: frozenset[str]) -> bool:
        model = _model()
        readings = self.readings if point == "E62" else model.DEFAULT  # E10's own rows are accepted by their pins
        sets = [a.hashes for a in model.export_answers(self.state, self.scope, self.since, readings) if a.reading == reading]
        if self.judged is None:
            return frozenset(answer) in sets
        return any(frozenset(answer) & self.judged == s & self.judged for s in sets)


@dataclass(frozen=True)
class MiddleItem:
    """E41: a bundle of five chunks whose middle one is of a class expected `expect`; the answer a BatchResult."""

    expect: str


@dataclass(frozen=True)
class OpenClass:
    """E42, E61: one class of the domain table the spec leaves open (`field:class`); the answer: accepted or not."""

    point: str
    key: str


@dataclass(frozen=True)
class ExportWithoutInstant:
    """E63: an export of scope since with no since; the answer "served", "refused" (a bundle rejection) or "other"."""
