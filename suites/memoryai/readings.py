"""MemoryAI's one table of readings: every open point a check of the suite observes (an errata id), each
plausible reading a row with its prediction. The checks that meet a point ask this table (`observe`,
`followed`), never a copy of their own, so no check can blame an answer another accepts;
tests/test_memoryai_one_table.py walks every row through every check it names.

A row's request is the form its checks meet the point in (a bundle whose checksum is judged, a stream line,
an export of the oracle's state...), its answer what the target did; `accepted(pins)` reads the suite's
options (`pins_of`). Points and their checks:

- E1 the checksum's canonical form: checksum_present_and_valid, checksum_valid_scoped (bundle_rules.py);
- E2 what content_hash hashes: content_hash_matches;
- E3 the NDJSON stream's line shapes: deleted_not_exported, export_stream_equivalent (stream.py);
- E4 the multipart field name: every check that imports through /import/file (client.import_file);
- E6 counters on re-import: reimport_inserts_nothing;
- E9 invalid chunks skipped or the bundle refused: domain_import_requests_pairwise;
- E10 the `since` boundary: export_scope_since, domain_export_parameters_pairwise (the oracle's sets);
- E41 one chunk in the middle of a bundle: import_batch_middle_item (kit/batch_failures.py's predictions);
- E42 the open classes of the envelope, a chunk and the export request: domain_import_every_class,
  domain_export_every_class; E61 those of an edge and an entity: domain_import_every_record_class;
- E62 `since` beside scope full or dna_only: domain_export_parameters_pairwise;
- E63 scope `since` without a `since`: domain_export_every_class, domain_export_parameters_pairwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation, Reading, ReadingTable, predicted
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.options import OPTIONS
from memconform.suites.memoryai.reading_examples import (  # noqa: F401  example_chunk, example_bundle, SINCE: the table's face
    CHECKSUMMED,
    MIDDLE_OPEN,
    NFC_CONTENT,
    REIMPORT,
    SINCE,
    around,
    example_bundle,
    example_chunk,
    model_examples,
    stream_example,
)
from memconform.suites.memoryai.reading_kinds import (
    ChecksumCase,
    ContentHash,
    ExportWithoutInstant,
    ImportAnswer,
    InvalidChunks,
    MiddleItem,
    MultipartImport,
    OpenClass,
    Reimport,
    ScopedExport,
    StreamLine,
)

if TYPE_CHECKING:  # the model, the batch predictions and the domain table are imported where a row needs them
    from memconform.kit import domain

Pins = Mapping[str, str]  # the suite's options by name (ctx.option), what `Reading.accepted` reads
DEFAULT_PINS: Pins = OPTIONS.defaults()


def pins_of(ctx: CheckContext) -> dict[str, str]:
    return OPTIONS.pinned(ctx)


def allows(option: str, name: str) -> Callable[[Pins], bool]:
    """A reading the run accepts unless `option` pins another one."""
    return lambda pins: pins.get(option, "either") in ("either", name)


# ---- the requests a point is met in ---------------------------------------------------------------























# ---- the rows ---------------------------------------------------------------------------------------

def line_kind_key(line: Any) -> str | None:
    """The key a stream line names its section or kind by (E3), the first of STREAM_KIND_KEYS that does."""
    if not isinstance(line, dict):
        return None
    return next((k for k in STREAM_KIND_KEYS if isinstance(line.get(k), str) and line[k] in memoryai.STREAM_KINDS), None)


def line_record_key(line: Any) -> str | None:
    """The key a stream line carries its record under (E3), or None: the record inline."""
    return next((k for k in STREAM_RECORD_KEYS if isinstance(line.get(k), dict)), None) if isinstance(line, dict) else None


# errata E3: the key a stream line names its section or kind by (the spec says only "NDJSON stream")
STREAM_KIND_KEYS = ("_kind", "kind", "section", "type", "_type", "record_type")
STREAM_RECORD_KEYS = ("record", "data")


def stream_reading(key: str, wrapped: str | None) -> str:
    return f"{key} lines, record {'under ' + wrapped if wrapped else 'inline'}"


# A consumer's duty the spec does not state, so either answer is accepted (recorded as E42): a manifest's
# embedding_dim matters only for the length of embeddings, and the bundles here carry none; big-endian
# floats are floats to a consumer (only the producer who wrote them knows them wrong). (embedding_dim 0 is open
# in the table itself, on both sides: interop hole I4.)
CONSUMER_OPEN = frozenset({"manifest.embedding_dim:null", "manifest.embedding_dim:negative_zero",
                           "manifest.embedding_dim:small_1e_6", "manifest.embedding_dim:small_1e_7",
                           "manifest.embedding_dim:as_string", "chunk.embedding:big_endian"})
EXPORT_FIELDS = ("manifest.scope", "manifest.since")  # sent as the export request's scope and since
RECORD_PREFIXES = ("edge.", "entity.")


def import_expectation(vc: domain.ValueClass) -> str:
    """A class as a consumer meets it on import: open where CONSUMER_OPEN says so, else the table's word."""
    return "open" if vc.key in CONSUMER_OPEN else vc.expect


def open_classes() -> dict[str, tuple[str, ...]]:
    """{point: the domain table's class keys it holds}: E42 the envelope and chunk classes open on import and the
    export request's classes that are not valid (either answer recorded); E61 the open edge and entity classes."""
    from memconform.kit import domain

    found: dict[str, list[str]] = {"E42": [], "E61": []}
    table = domain.load("memoryai")
    for f in table.fields if table is not None else ():
        for vc in f.classes:
            if f.id.startswith(RECORD_PREFIXES):
                if vc.expect == "open":
                    found["E61"].append(vc.key)
            elif import_expectation(vc) == "open" or (f.id in EXPORT_FIELDS and vc.expect != "valid"):
                found["E42"].append(vc.key)
    return {point: tuple(dict.fromkeys(keys)) for point, keys in found.items()}


CHECKSUMS = ("checksum_present_and_valid", "checksum_valid_scoped")
STREAMS = ("deleted_not_exported", "export_stream_equivalent")
MULTIPART = ("import_file_multipart", "rejects_newer_version", "domain_import_requests_pairwise")
OPEN_CLASS_CHECKS = {"E42": ("domain_import_every_class", "domain_export_every_class"), "E61": ("domain_import_every_record_class",)}


# ---- the predictions the rows are made of ---------------------------------------------------------------

Meets = Callable[[Any], bool]
Predicts = Callable[[Any, Any], bool]


def of_kind(kind: type) -> Meets:
    return lambda request: isinstance(request, kind)


def answer_is(expected: Any) -> Predicts:
    return lambda request, answer: bool(answer == expected)


def answer_is_exactly(expected: bool | None) -> Predicts:
    return lambda request, answer: answer is expected


def _both(first: Callable[[Pins], bool], second: Callable[[Pins], bool]) -> Callable[[Pins], bool]:
    return lambda pins: first(pins) and second(pins)


def _digest_is(reading: str) -> Predicts:
    return lambda request, claimed: bool(claimed == request.digest(reading))


def _content_hash_is(nfc: bool) -> Predicts:
    return lambda request, claimed: bool(claimed == memoryai.content_hash(_nfc(request.content) if nfc else request.content))


def _line_shape(key: str, wrapped: str | None) -> Predicts:
    return lambda request, line: line_kind_key(line) == key and line_record_key(line) == wrapped


def _frequency_is(counters: str) -> Predicts:
    return lambda request, got: _number(got) and bool(got == request.frequency(counters))


def _import_fits(accepted: bool) -> Predicts:
    return lambda request, got: bool(request.fits(accepted, got))


def _scoped(since: bool) -> Meets:
    return lambda request: isinstance(request, ScopedExport) and (request.scope == "since") == since


def _export_holds(point: str, reading: str) -> Predicts:
    return lambda request, got: bool(request.holds(point, reading, got))


def _batch_fits(reading: str) -> Predicts:
    return lambda request, got: bool(got.predictions()[reading])


def _open_class(point: str, key: str) -> Meets:
    return lambda request: isinstance(request, OpenClass) and (request.point, request.key) == (point, key)


def _e1_rows() -> list[Reading]:
    # E1: the digest under each reading of the canonical form (options checksum_unicode, checksum_numbers)
    return [Reading("E1", name, meets=of_kind(ChecksumCase), predicts=_digest_is(name),
                    accepted=_both(allows("checksum_unicode", unicode), allows("checksum_numbers", numbers)),
                    checks=CHECKSUMS, example=(CHECKSUMMED, CHECKSUMMED.digest(name)), wrong="0" * 64)
            for name, (unicode, numbers) in memoryai.CHECKSUM_READINGS.items()]


def _e2_rows() -> list[Reading]:
    # E2: sha256 of the content as written, or NFC-normalised
    return [Reading("E2", name, meets=of_kind(ContentHash), predicts=_content_hash_is(nfc=name != "as written"),
                    checks=("content_hash_matches",), example=(NFC_CONTENT, memoryai.content_hash(text)),
                    wrong=memoryai.content_hash("cafe"))
            for name, text in (("as written", NFC_CONTENT.content), ("nfc-normalised", _nfc(NFC_CONTENT.content)))]


def _e3_rows() -> list[Reading]:
    # E3: every line shape that says what it is
    return [Reading("E3", stream_reading(key, wrapped), meets=of_kind(StreamLine), predicts=_line_shape(key, wrapped),
                    checks=STREAMS, example=(StreamLine(), stream_example(key, wrapped)),
                    wrong={"label": "chunk", "record": {"content": "streamed"}})
            for key in STREAM_KIND_KEYS for wrapped in (*STREAM_RECORD_KEYS, None)]


def _e4_rows() -> list[Reading]:
    # E4: the multipart field name (option multipart_field)
    return [Reading("E4", name, meets=of_kind(MultipartImport), predicts=answer_is(name),
                    accepted=allows("multipart_field", name), checks=MULTIPART, example=(MultipartImport(), name), wrong="upload")
            for name in ("file", "bundle")]


def _e6_rows() -> list[Reading]:
    # E6: counters on re-import (option reimport_counters)
    return [Reading("E6", name, meets=of_kind(Reimport), predicts=_frequency_is(name),
                    accepted=allows("reimport_counters", name), checks=("reimport_inserts_nothing",),
                    example=(REIMPORT, REIMPORT.frequency(name)), wrong=3) for name in ("accumulate", "stable")]


def _e9_rows() -> list[Reading]:
    # E9: a bundle with an invalid chunk: the valid ones imported, or the whole bundle refused
    invalid_chunks = model_examples()["INVALID_CHUNKS"]
    answers = {"skip": ImportAnswer(True, invalid_chunks.touched, True, {"inserted": 2, "skipped_duplicate": 0, "skipped_invalid": 1}),
               "refuse": ImportAnswer(False, frozenset())}
    return [Reading("E9", name, meets=of_kind(InvalidChunks), predicts=_import_fits(ok), checks=("domain_import_requests_pairwise",),
                    example=(invalid_chunks, answers[name]),
                    wrong=ImportAnswer(True, frozenset(list(invalid_chunks.touched)[:1]), True, {"inserted": 1}))
            for name, ok in (("skip", True), ("refuse", False))]


def _e10_rows() -> list[Reading]:
    # E10: the chunk created exactly at `since` (option since_boundary)
    held = {"inclusive": around("at", "after"), "exclusive": around("after")}
    return [Reading("E10", name, meets=_scoped(since=True), predicts=_export_holds("E10", name), accepted=allows("since_boundary", name),
                    checks=("export_scope_since", "domain_export_parameters_pairwise"),
                    example=(model_examples()["SINCE_EXPORT"], held[name]), wrong=around("before", "after"),
                    # export_scope_since judges the chunk at `since` only: pinned to this reading, the other one's set
                    controls=(("export_scope_since", held["exclusive" if name == "inclusive" else "inclusive"]),))
            for name in ("inclusive", "exclusive")]


def _e62_rows() -> list[Reading]:
    # E62: `since` beside another scope
    return [Reading("E62", name, meets=_scoped(since=False), predicts=_export_holds("E62", name), checks=("domain_export_parameters_pairwise",),
                    example=(model_examples()["SINCE_BESIDE_FULL"], around("before", "at", "after") if name == "ignored" else around("after")),
                    wrong=around("before")) for name in ("ignored", "applied")]


def _e41_rows() -> list[Reading]:
    # E41: what a batch may do with its middle item (the class's expectation narrows them: `observe(accepted=)`)
    from memconform.kit import batch_failures

    examples = model_examples()
    return [Reading("E41", name, meets=of_kind(MiddleItem), predicts=_batch_fits(name), checks=("import_batch_middle_item",),
                    example=(MIDDLE_OPEN, examples["BATCH_ANSWERS"][name]), wrong=examples["STOPPED_MIDWAY"])
            for name in (batch_failures.ALL, batch_failures.REPORTED, batch_failures.REFUSED)]


def _open_class_rows() -> list[Reading]:
    # E42, E61: the open classes of the domain table, accepted or refused (no answer at all is neither)
    return [Reading(point, f"{key} {verb}", meets=_open_class(point, key), predicts=answer_is_exactly(want), checks=OPEN_CLASS_CHECKS[point],
                    example=(OpenClass(point, key), want), wrong=None)
            for point, keys in open_classes().items() for key in keys
            for verb, want in (("accepted", True), ("refused", False))]


def _e63_rows() -> list[Reading]:
    # E63: scope since without since, served as every chunk or refused
    return [Reading("E63", name, meets=of_kind(ExportWithoutInstant), predicts=answer_is(name),
                    checks=("domain_export_every_class", "domain_export_parameters_pairwise"),
                    example=(ExportWithoutInstant(), name), wrong="other") for name in ("served", "refused")]


# The table's rows by the points they hold, in the table's order. Each group is built when first asked (a bundle's
# checksum needs E1's rows, not the model, the batch predictions or the domain table the others are made of); TABLE
# is every group's rows, the same Reading objects.
ROW_GROUPS: tuple[tuple[tuple[str, ...], Callable[[], list[Reading]]], ...] = (
    (("E1",), _e1_rows), (("E2",), _e2_rows), (("E3",), _e3_rows), (("E4",), _e4_rows), (("E6",), _e6_rows),
    (("E9",), _e9_rows), (("E10",), _e10_rows), (("E62",), _e62_rows), (("E41",), _e41_rows),
    (("E42", "E61"), _open_class_rows), (("E63",), _e63_rows))


@cache
def _group_table(points: tuple[str, ...]) -> ReadingTable:
    build = dict(ROW_GROUPS)[points]
    return ReadingTable(build())


def _rows() -> list[Reading]:
    return [row for points, _ in ROW_GROUPS for row in _group_table(points)]


def _table_for(point: str) -> ReadingTable:
    """The table a check asks about `point`: TABLE once it is built (or a test replaced it), else only the rows
    of the group holding `point`, which TABLE will hold as they are."""
    table = globals().get("TABLE")
    if isinstance(table, ReadingTable):
        return table
    group = next((points for points, _ in ROW_GROUPS if point in points), None)
    return _group_table(group) if group is not None else __getattr__("TABLE")


def _nfc(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFC", text)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)  # an array or object is no reading's count


TABLE: ReadingTable  # named for the type checker; the module's __getattr__ builds it when first asked


def __getattr__(name: str) -> Any:
    """TABLE, every row, built when first named; the examples of the model's state (reading_examples.model_examples)."""
    if name == "TABLE":
        table = globals()["TABLE"] = ReadingTable(_rows())
        return table
    if name in ("INVALID_CHUNKS", "SINCE_EXPORT", "SINCE_BESIDE_FULL", "STOPPED_MIDWAY", "BATCH_ANSWERS"):
        return model_examples()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- asking the table ---------------------------------------------------------------------------------

def meeting(point: str, request: Any) -> list[Reading]:
    """The rows of `point` the request meets (read from TABLE when asked, so a test can replace it)."""
    return _table_for(point).meeting(point, request, "suites/memoryai/readings.py")


def observe(ctx: CheckContext, point: str, request: Any, answer: Any, *, accepted: Iterable[str] | None = None,
            shown: Any = None, **how: Any) -> Observation:
    """Record each reading of `point` the answer fits (core ReadingTable.ask); the run accepts the readings its
    options allow, narrowed to `accepted` when the check knows more. `shown`: the answer as a failure shows it."""
    observation: Observation = _table_for(point).ask(ctx, point, request, answer, pins_of(ctx), accepted=accepted, shown=shown,
                                         where="suites/memoryai/readings.py", **how)
    return observation


def followed(ctx: CheckContext, point: str, request: Any, answer: Any, record: bool = True) -> Reading | None:
    """The first accepted reading (in the table's order) the answer fits, recorded when `record`: for a point
    whose readings can give one answer (E1's digests of a bundle that shows none of them)."""
    pins = pins_of(ctx)
    found = next((row for row in meeting(point, request) if row.accepted(pins) and predicted(row, request, answer)), None)
    if found is not None and record:
        ctx.reading(point, found.name)
    return found


def accepted_names(ctx: CheckContext, point: str, request: Any) -> list[str]:
    pins = pins_of(ctx)
    return [row.name for row in meeting(point, request) if row.accepted(pins)]

