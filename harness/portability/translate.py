"""One translation: read a document of one format into canonical records, write them in another, and
judge the output with memconform's own checks before anyone sees it. A refused translation has no output,
only a ledger saying why."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform.core.results import HarnessError

from . import jsontext
from .canonical import HATCH_KEY, Document, Record, consuming
from .formats import formats, portable
from .ledger import Ledger
from .placement import Refused
from .streamed import Streamed
from .validation import judge

Reader = Callable[[Any], Document]
Writer = Callable[[Document, Ledger], Any]


@dataclass
class Translation:
    source: str
    target: str
    canonical: Document  # what was read
    output: Any  # the written document (a text format: the file's text); None when refused
    ledger: Ledger

    @property
    def refused(self) -> str | None:
        return self.ledger.refused


def read(fmt: str, doc: Any) -> Document:
    return portable(fmt).read(doc)


def translate(doc: Any, source: str, target: str, validate: bool = True,
              writers: dict[str, Writer] | None = None) -> Translation:
    return write_read(read_checked(doc, source, target, validate), validate, writers)


def read_checked(doc: Any, source: str, target: str, validate: bool = True, consume: bool = False) -> Translation:
    """The first half of a translation: the source judged and read into canonical records (`output` None).
    Nothing returned refers to `doc`: a caller that lets go of it frees the parsed source before writing.
    With `consume` the reader empties the big lists of `doc` as it reads them (canonical.drain): the parsed
    records are freed while the canonical ones are made; the caller must not use `doc` afterwards."""
    if validate:
        wrong, _ = judge(source, doc)
        if wrong:  # a translation of a document its own format refuses would only spread the fault
            return refused_source(source, target, wrong)
    with consuming(consume):
        canonical = read(source, doc)
    ledger = Ledger(source, target, records_in=len(canonical.records))
    prepare(canonical, ledger)
    return Translation(source, target, canonical, None, ledger)


def write_read(tr: Translation, validate: bool = True, writers: dict[str, Writer] | None = None,
               keep_canonical: bool = True) -> Translation:
    """The second half: the canonical records written in the target format and the output judged.
    Without `keep_canonical` each record is let go as the writer moves past it (canonical.drain) and the result's
    `canonical` is an empty document, so neither the writing nor the judging holds the records beside the output."""
    if tr.refused:
        return tr
    source, target, canonical, ledger = tr.source, tr.target, tr.canonical, tr.ledger
    writer = (writers or {}).get(target) or portable(target).write
    try:
        # writers read the records and never change them (no copy of 100k records); planted.py copies first
        with consuming(not keep_canonical):
            output = writer(canonical, ledger)
    except Refused as exc:
        ledger.refused = str(exc)
        return Translation(source, target, canonical, None, ledger)
    if not keep_canonical:
        tr.canonical = canonical = Document(source)
    over = over_limit(target, output)
    if over:
        ledger.refused = over
        return Translation(source, target, canonical, None, ledger)
    if validate:
        found, warnings = judge(target, output)
        ledger.warnings += warnings
        if found:
            ledger.refused = f"the {target} output does not pass memconform's checks: " + " | ".join(found[:5])
            return Translation(source, target, canonical, None, ledger)
    return Translation(source, target, canonical, output, ledger)


def over_limit(fmt: str, output: Any) -> str | None:
    """Why the output breaks its format's own size limit (its Portable's `size_limit`: the limit's name and
    bytes), or None: such an output is refused with the limit named, never written as if valid."""
    if portable(fmt).size_limit is None:
        return None
    return limit_refusal(fmt, sum(len(piece.encode("utf-8")) for piece in chunks(fmt, output)))


def limit_refusal(fmt: str, size: int) -> str | None:
    """Why an output of `size` bytes breaks its format's own size limit, or None (written.py measures the file)."""
    size_limit = portable(fmt).size_limit
    if size_limit is None:
        return None
    limit_name, limit = size_limit()
    if size <= limit:
        return None
    return (f"the {fmt} document would be {size} bytes, over the size limit of {limit_name} "
            f"({limit} bytes, the {fmt} suite's limit): translate fewer records")


def prepare(doc: Document, ledger: Ledger) -> None:
    """What the ledger must say before any writer runs: records that share an id get names of their own (each is
    translated, and says so); text no format can write (a lone surrogate) is replaced, field by field, and
    named; what the source's escape-hatch blocks restored, or were refused, is listed. sourced.py says the same
    of records read in windows, from the same steps: `name_repeat`, `restore_refusals`, `scrub_record`."""
    seen: dict[str, int] = {}
    for r in doc.records:
        repeat = name_repeat(r, doc.source, seen)
        if repeat:
            ledger.warnings.append(repeat)
    for r in doc.records:
        scrub_record(r, doc.source, ledger)
        ledger.warnings += restore_refusals(r, doc.source)
    scrub_document(doc, ledger)


def name_repeat(r: Record, source: str, seen: dict[str, int]) -> str | None:
    """The warning for a record whose id an earlier one had (`seen`: how often each id came so far), which is
    then named apart; None for a first."""
    key = r.key(source)
    seen[key] = seen.get(key, 0) + 1
    if seen[key] == 1:
        return None
    r.ledger_key = f"{key} (#{seen[key]} of that id)"
    return f"record {key!r} appears {seen[key]} times: the later one is named {r.ledger_key!r}"


def restore_refusals(r: Record, source: str) -> list[str]:
    """The warnings for the escape-hatch values the record refused (they contradict its visible fields)."""
    return [f"record {r.name(source)!r}: the {HATCH_KEY} block gives a {name} that contradicts the record's own "
            f"field; the visible {name} is used" for name in r.refused_restore]


def scrub_record(r: Record, source: str, ledger: Ledger) -> None:
    """The record's values with what no JSON text can hold replaced (and noted lost); what its block restored, listed."""
    rid = r.name(source)
    for name, value in list(r.values.items()):
        clean, changed = scrub(value)
        if changed:
            r.values[name] = clean
            ledger.note(rid, name, "lost", f"{changed} value(s) no JSON text can hold: a lone surrogate written as "
                                           "U+FFFD, a number beyond the double range as null")
    if r.restored:
        ledger.restored[rid] = sorted(set(r.restored))


def scrub_document(doc: Document, ledger: Ledger) -> None:
    """The document-level values with what no JSON text can hold replaced (and noted lost)."""
    for attr in ("subject", "graph", "other_objects", "envelope"):
        clean, changed = scrub(getattr(doc, attr))
        if changed:
            setattr(doc, attr, clean)
            ledger.note_document(attr if attr != "envelope" else "envelope", "lost", changed,
                                 "value(s) no JSON text can hold (lone surrogates as U+FFFD, infinite numbers as null)")
    for attr in ("producer", "exported_spelled"):
        clean, changed = scrub(getattr(doc, attr))
        if changed:
            setattr(doc, attr, clean)


def scrub(value: Any) -> tuple[Any, int]:
    """The value with what no JSON text can hold written otherwise, and how many such were: a lone surrogate
    (in strings and keys) as U+FFFD, a number beyond the double range (1e999999 reads as infinity) as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None, 1
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value, 0
        except UnicodeEncodeError:
            fixed = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in value)
            return fixed, sum(1 for ch in value if 0xD800 <= ord(ch) <= 0xDFFF)
    if isinstance(value, list):
        pairs = [scrub(x) for x in value]
        n = sum(c for _, c in pairs)
        return ([x for x, _ in pairs], n) if n else (value, 0)
    if isinstance(value, dict):
        total, out = 0, {}
        for k, v in value.items():
            k2, a = scrub(k)
            v2, b = scrub(v)
            out[k2] = v2
            total += a + b
        return (out, total) if total else (value, 0)
    return value, 0


def detect(doc: Any) -> str | None:
    """The format of a parsed document (a text format: the file's text), by the formats' own detectors; the
    text formats are asked last (one line of JSON Lines parses as an object another format might claim)."""
    for name in sorted(formats(), key=lambda f: portable(f).text):
        if portable(name).detect(doc):
            return name
    return None


def _text(fmt: str | None) -> bool:
    return fmt is not None and portable(fmt).text


def load(path: Path, fmt: str | None = None) -> tuple[str, Any]:
    """(format, document) of a file: JSON, or the text of a text format (JSON Lines); a fixture case file gives
    its document."""
    from memconform.run.validate import MAX_DOCUMENT_BYTES, NotWellFormed, parse_json, read_all

    raw = read_all(path, MAX_DOCUMENT_BYTES)
    try:
        doc: Any = parse_json(raw)
    except NotWellFormed as exc:  # JSON Lines is not one JSON text; a format that is not text must be
        if fmt is not None and not _text(fmt):
            raise HarnessError(f"{path}: not a {fmt} document: {exc}") from None
        doc = raw.decode("utf-8", "replace")
        if fmt is None and not _text(detect(doc)):
            raise HarnessError(f"{path}: not JSON, and not a text format's document: {exc}") from None
    if isinstance(doc, dict) and "document" in doc and "verdict" in doc:  # a fixture case
        doc = doc["document"]
    if isinstance(doc, dict) and (fmt is None or _text(fmt)) and _text(detect(doc)):
        doc = raw.decode("utf-8")
    found = fmt or detect(doc)
    if found is None:
        raise HarnessError(f"{path}: no format recognises this document (formats: {', '.join(formats())}); name one with --from")
    return found, doc


def refused_source(source: str, target: str, wrong: list[str]) -> Translation:
    """The translation of a source its own format's checks refuse: nothing read, the first five problems named."""
    ledger = Ledger(source, target)
    ledger.refused = f"the {source} source does not pass memconform's checks: " + " | ".join(wrong[:5])
    return Translation(source, target, Document(source), None, ledger)


def dump(fmt: str, output: Any) -> str:
    """The output's text; a value JSON cannot hold is a harness error here, never a file written as if valid."""
    return "".join(chunks(fmt, output))


def chunks(fmt: str, output: Any) -> Any:
    """The output's text in pieces, so a large one is written (or measured) without one string of it all."""
    if portable(fmt).text:
        if isinstance(output, Streamed):  # a text format's lines, made as they are written
            yield from output
        else:
            yield output
        return
    yield from jsontext.pieces(output)  # json.dumps(indent=2)'s bytes, written by orjson (jsontext.py)
    yield "\n"
