"""MemoRizz's one table of readings: every open point a check of the suite observes (an errata id), each
plausible reading a row with its prediction. The checks that meet a point ask this table (`observe`), never a
copy of their own, so no check can blame an answer another accepts; tests/test_memorizz_one_table.py walks
every row through every check it names.

Points and their checks:

- M2 the key order of the canonical JSON: integrity_digest; M4, M5, M8 a document rule's problem that holds only
  under a reading the options do not pin (natural_id_matches, manifest_field_types, embeddings_follow_includes);
- M4 natural ids a clone meets (the stores the page does not name): clone_rewrites_ids;
- M9 where a clone puts its records: clone_rewrites_ids (each record's memory_id), domain_import_modes (the
  namespace afterwards); both honour the option clone_namespaces;
- M10 which field says imported automations are disabled: imported_automations_disabled;
- M34 one record in the middle of a restore: import_batch_middle_item, domain_records_every_class (a store
  refusing an open value mid-restore with its committed progress reported, as the errata says, is a reading
  of both);
- M35 the open classes of the envelope and the records: domain_envelope_every_class, domain_records_every_class;
  M60 those of the archive's structure, records and manifest: domain_archive_every_class,
  domain_records_and_manifest_every_class;
- M61 an export's selection the page leaves open: domain_export_selection (the model's readings);
- M62 a preview of conflicts under conflict=error: domain_import_modes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation, Reading, ReadingTable, predicted
from memconform.kit import batch_failures, domain
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import model
from memconform.suites.memorizz.client import ids_in
from memconform.suites.memorizz.options import OPTIONS
from memconform.suites.memorizz.reading_kinds import (
    KEY_ORDERS,
    ClonedNamespace,
    ClonedRecord,
    Digests,
    ExportSelection,
    ImportedAgent,
    MiddleRecord,
    NaturalId,
    OpenClass,
    PreviewUnderError,
    Restored,
    RuleProblem,
)

Pins = Mapping[str, str]  # the suite's options by name (ctx.option), what `Reading.accepted` reads
DEFAULT_PINS: Pins = OPTIONS.defaults()


def pins_of(ctx: CheckContext) -> dict[str, str]:
    return OPTIONS.pinned(ctx)


def allows(option: str, *values: str) -> Callable[[Pins], bool]:
    """A reading the run accepts unless `option` pins it away (`values`: the option values that keep it)."""
    return lambda pins: pins.get(option, "either") in ("either", *values)


# ---- the requests a point is met in ---------------------------------------------------------------

























def progress_reported(body: Any, written: int) -> bool:
    """A failed restore's report (`ok: false`) whose `imported` count is the number of its records present after it."""
    imported = body.get("imported") if isinstance(body, dict) else None
    return isinstance(body, dict) and body.get("ok") is False and isinstance(imported, int) and not isinstance(imported, bool) \
        and imported == written


def namespace_pin(namespaces: str) -> tuple[str, ...]:
    """The pin a failure of M9 names under the option clone_namespaces (nothing when both readings are accepted)."""
    return {"rewrite": ("M9:namespaces-rewritten",), "keep": ("M9:namespaces-kept",)}.get(namespaces, ())


def export_mismatch(answer: model.ExportAnswer, refused: bool, archive: Any, seed_keys: Iterable[Any]) -> str:
    """How an export's reply differs from one acceptable answer ("" when it fits)."""
    if answer.refused or refused:
        return "" if answer.refused == refused else ("refused" if refused else "not refused")
    if not isinstance(archive, dict):
        return f"answered {type(archive).__name__}, not an archive"
    got = {k for k in ids_in(archive) if k in set(seed_keys)}
    if got != set(answer.keys):
        missing, extra = sorted(set(answer.keys) - got), sorted(got - set(answer.keys))
        return f"holds {len(got)} of the seeded records: missing {missing[:2]}, not selected {extra[:2]}"
    outside = sorted({store for store, _ in ids_in(archive) if store not in answer.stores})
    if outside:
        return f"records in unselected stores {outside[:3]}"
    includes = archive.get("manifest", {}).get("includes") if isinstance(archive.get("manifest"), dict) else None
    said = includes.get("embeddings") if isinstance(includes, dict) else None
    if said is not None and said is not answer.embeddings:
        return f"manifest.includes.embeddings is {said!r} while embeddings were {'' if answer.embeddings else 'not '}requested"
    if not answer.embeddings and list(memorizz.embedding_paths(archive.get("stores"))):
        return "an embedding is exported although none was requested"
    return ""


def export_fits(request: ExportSelection, reading: str, answer: tuple[bool, Any]) -> bool:
    refused, archive = answer
    return any(not export_mismatch(a, refused, archive, request.state) for a in request.answers() if a.reading == reading)


# ---- data the rows are made of ------------------------------------------------------------------------

# M4: the natural ids of the stores the page does not name (NATURAL_IDS_NAMED's are bound: no open point)
IMPLIED_NATURAL_IDS = tuple(dict.fromkeys(v for k, v in memorizz.NATURAL_IDS_IMPLIED.items() if k not in memorizz.NATURAL_IDS_NAMED))
M10_PREDICTIONS: dict[str, Callable[[Any], bool]] = {
    "automations_enabled": lambda agent: agent["automations_enabled"] is False,
    "automations[].enabled": lambda agent: bool(agent["automations"]) and all(s is False for s in agent["automations"]),
}
M10_PINS = {"automations_enabled": "automations_enabled", "automations[].enabled": "automations-list"}
PARTIAL = "the middle record refused by the store, the records before it kept and the committed progress reported"
PREVIEW_OK, PREVIEW_NOT_OK = "a preview of conflicts under conflict=error says ok", "a preview of conflicts under conflict=error says ok: false"
M61_READINGS = ("an unknown agent refused", "an unknown agent selects nothing", "types [] refused", "types [] as every store",
                "types [] as no store", "an unknown store key refused", "an unknown store key exports nothing of it",
                "a namespace and an agent both narrow", "the namespace selects the memories, the agent the agents")

# M35 (checks/domain_imports.py) and M60 (checks/domain_archive.py): the fields each sweep restores, and the
# classes a consumer may restore or refuse although the document rules (M5) bind a producer
M35_ENVELOPE_FIELDS = ("archive.format", "archive.version", "archive.integrity.digest", "manifest.created_at",
                       "manifest.record_count")
M35_RECORD_FIELDS = ("record.id", "record.data.number", "record.data.number_more", "record.data.text")
# the validation sentence names no timestamp rule and errata M5 makes created_at's form a SHOULD of a
# producer: a consumer may refuse a created_at that is no date, or restore the archive anyway
M35_CONSUMER_OPEN = frozenset({"manifest.created_at:not_a_date", "manifest.created_at:impossible"})
M60_ENVELOPE_FIELDS = ("archive.envelope", "archive.taxonomy", "archive.stores", "archive.integrity.algorithm")
M60_RECORD_MANIFEST_FIELDS = ("record.shape", "record.data.id", "record.data.natural_id", "record.id.uniqueness",
                              "manifest.required", "manifest.scope.user_scoped", "manifest.counts", "manifest.includes",
                              "manifest.omitted_fields", "manifest.external_references", "manifest.warnings")
# the validation sentence does not name the manifest's value types; memconform's reading of them (M5) binds a
# document, and a consumer may restore such an archive or refuse it
M60_CONSUMER_OPEN = frozenset({"manifest.scope.user_scoped:not_boolean", "manifest.includes:not_boolean",
                               "manifest.omitted_fields:not_array", "manifest.external_references:not_array",
                               "manifest.warnings:not_array"})
OPEN_CLASS_CHECKS = {"M35": {M35_ENVELOPE_FIELDS: "domain_envelope_every_class", M35_RECORD_FIELDS: "domain_records_every_class"},
                     "M60": {M60_ENVELOPE_FIELDS: "domain_archive_every_class",
                             M60_RECORD_MANIFEST_FIELDS: "domain_records_and_manifest_every_class"}}
CONSUMER_OPEN = {"M35": M35_CONSUMER_OPEN, "M60": M60_CONSUMER_OPEN}


def expectation(point: str, vc: domain.ValueClass) -> str:
    """A class as a consumer meets it in the sweep of `point`: open where the point's CONSUMER_OPEN says so."""
    return "open" if vc.key in CONSUMER_OPEN[point] else vc.expect


# ---- the examples: a request meeting each point, an answer per reading, and one no reading allows ----------

# M2: keys a UTF-16 sort orders otherwise than a code point sort (U+FB01 before U+1F600, or after its surrogates)
DIGEST_ARCHIVE = memorizz.seal(memorizz.empty_archive(created_at="2026-01-01T00:00:00Z", source_provider="memconform table"))
DIGEST_ARCHIVE["stores"]["knowledge_base"] = [{"id": "k1", "data": {"id": "k1", "memory_id": "ns", "content": "sorted",
                                                                    "\ufb01": 1, "\U0001f600": 2}}]
DIGEST_ARCHIVE = memorizz.seal(DIGEST_ARCHIVE)
DIGESTS = Digests.of(DIGEST_ARCHIVE)
EXPORT_STATE: model.State = {("agents", "a1"): {"id": "a1", "memory_ids": ["ns2"]},
                             ("knowledge_base", "k1"): {"id": "k1", "memory_id": "ns1", "content": "one"},
                             ("knowledge_base", "k2"): {"id": "k2", "memory_id": "ns2", "content": "two"}}
M61_SELECTIONS: dict[str, dict[str, Any]] = {"an unknown agent": {"agent_id": "nobody"}, "types []": {"types": []},
                  "an unknown store key": {"types": ["knowledge_base", "no_such_store"]},
                  "a namespace and an agent": {"memory_id": "ns1", "agent_id": "a1"}}


def selection_of(reading: str) -> ExportSelection:
    """The example selection the reading answers: the one its name opens with (the split agent: both narrow's)."""
    opening = next((p for p in M61_SELECTIONS if reading.startswith(p)), "a namespace and an agent")
    selection: Mapping[str, Any] = M61_SELECTIONS[opening]
    return ExportSelection(EXPORT_STATE, selection)


def archive_holding(keys: Iterable[tuple[str, Any]], state: model.State) -> dict[str, Any]:
    archive = memorizz.empty_archive(created_at="2026-01-01T00:00:00Z", source_provider="memconform table")
    for store, rid in keys:
        archive["stores"][store].append({"id": rid, "data": dict(state[(store, rid)])})
    return memorizz.seal(archive)


def export_example(reading: str) -> tuple[bool, Any]:
    found = next(a for a in selection_of(reading).answers() if a.reading == reading)
    return (True, None) if found.refused else (False, archive_holding(sorted(found.keys), EXPORT_STATE))


# ---- the rows ---------------------------------------------------------------------------------------

def open_classes() -> dict[tuple[str, str], tuple[str, ...]]:
    """{(point, the check that sweeps them): the domain table's open class keys}."""
    table = domain.load("memorizz")
    found: dict[tuple[str, str], list[str]] = {}
    for point, groups in OPEN_CLASS_CHECKS.items():
        for fields, check in groups.items():
            keys = found.setdefault((point, check), [])
            for field_id in fields:
                if table is None:
                    continue
                keys += [vc.key for vc in table.field(field_id).classes if expectation(point, vc) == "open"]
    return {k: tuple(dict.fromkeys(v)) for k, v in found.items()}


# ---- the predictions the rows are made of ---------------------------------------------------------------

Meets = Callable[[Any], bool]
Predicts = Callable[[Any, Any], bool]


def of_kind(*kinds: type) -> Meets:
    return lambda request: isinstance(request, kinds)


def answer_is_exactly(expected: bool | None) -> Predicts:
    return lambda request, answer: answer is expected


def _digest_is(order: str) -> Predicts:
    return lambda request, claimed: bool(claimed == request.by_order[order])


def _problem_under(reading: str) -> Meets:
    return lambda request: isinstance(request, RuleProblem) and request.reading == reading


def _natural(natural: str) -> Meets:
    return lambda request: isinstance(request, NaturalId) and request.natural == natural


def _problem_holds_under(reading: str) -> Predicts:
    return lambda request, readings: reading in readings


def _natural_is(which: str) -> Predicts:
    """The natural id exported is the record's new id (`new`), or the value the archive held (`sent`)."""
    return lambda request, got: bool(got == getattr(request, which))


def _agent_fits(prediction: Callable[[Any], bool]) -> Predicts:
    return lambda request, agent: prediction(agent)


def _middle_record(open_only: bool) -> Meets:
    return lambda request: isinstance(request, MiddleRecord) and (not open_only or request.expect == "open")


def _restore_fits(reading: str) -> Predicts:
    if reading == PARTIAL:
        return lambda request, got: bool(got.partial_with_progress())
    return lambda request, got: bool(got.predictions()[reading])


def _open_class(point: str, key: str) -> Meets:
    return lambda request: isinstance(request, OpenClass) and (request.point, request.key) == (point, key)


def _export_fits(reading: str) -> Predicts:
    return lambda request, got: export_fits(request, reading, got)


def _rows() -> list[Reading]:
    rows: list[Reading] = []
    # M2: the digest under each key order (option key_order)
    rows += [Reading("M2", name, meets=of_kind(Digests), predicts=_digest_is(order),
                     accepted=allows("key_order", order), checks=("integrity_digest",),
                     example=(DIGESTS, DIGESTS.by_order[order]), wrong="0" * 64) for order, name in KEY_ORDERS.items()]
    # M4, M5, M8 in the document rules: a problem only under a reading the option does not pin (each option value
    # that pins the reading takes the row away)
    for reading, check, option, default in (("M4:implied", "natural_id_matches", "natural_ids", "named"),
                                            ("M5:memorizz-includes-keys", "manifest_field_types", "includes_keys", "any"),
                                            ("M8:with-vector", "embeddings_follow_includes", "embedding_fields", "named")):
        point, _, value = reading.partition(":")
        rows.append(Reading(point, f"not {value}", meets=_problem_under(reading), predicts=_problem_holds_under(reading),
                            accepted=allows(option, default), checks=(check,), example=(RuleProblem(reading), (reading,)),
                            wrong=()))
    # M4: an implied natural id rebound to the new id, or kept as data (option natural_ids=implied: rebound only)
    for natural in IMPLIED_NATURAL_IDS:
        case = NaturalId(natural, "old-natural", "new-id")
        rows += [Reading("M4", f"{natural} rebound to the new id by a clone", meets=_natural(natural), predicts=_natural_is("new"), checks=("clone_rewrites_ids",), example=(case, "new-id"), wrong="other"),
                 Reading("M4", f"{natural} kept as data by a clone", meets=_natural(natural), predicts=_natural_is("sent"), accepted=allows("natural_ids", "named"),
                         checks=("clone_rewrites_ids",), example=(case, "old-natural"), wrong="other")]
    # M9: namespaces kept or rewritten (option clone_namespaces), seen on a record and on a namespace
    record = ClonedRecord("ns-a")
    for name, pin, on_record in (("namespaces kept", "keep", "ns-a"), ("namespaces rewritten", "rewrite", "ns-b")):
        rows.append(Reading("M9", name, meets=of_kind(ClonedRecord, ClonedNamespace), predicts=_clone_fits(kept=pin == "keep"),
                            accepted=allows("clone_namespaces", pin), checks=("clone_rewrites_ids", "domain_import_modes"),
                            example=(record, on_record), wrong="",
                            # the namespace form's control: some clones beside the originals, others elsewhere
                            controls=(("domain_import_modes", ["one"]),)))
    # M10: the field that says imported automations start disabled (option automations_field)
    rows += [Reading("M10", name, meets=of_kind(ImportedAgent), predicts=_agent_fits(prediction),
                     accepted=allows("automations_field", M10_PINS[name]), checks=("imported_automations_disabled",),
                     example=(ImportedAgent(), {"automations_enabled": False if name == "automations_enabled" else "<absent>",
                                                "automations": [False] if name != "automations_enabled" else []}),
                     wrong={"automations_enabled": True, "automations": [True]})
             for name, prediction in M10_PREDICTIONS.items()]
    # M34: the whole restore, none of it, or (an open value) the store's refusal with its progress reported
    five = (True,) * 5
    answers = {batch_failures.ALL: Restored(True, False, five), batch_failures.REFUSED: Restored(False, True, (False,) * 5),
               PARTIAL: Restored(False, True, (True, True, False, False, False), progress=True)}
    for name in (batch_failures.ALL, batch_failures.REFUSED, PARTIAL):
        partial = name == PARTIAL
        rows.append(Reading("M34", name, meets=_middle_record(open_only=partial), predicts=_restore_fits(name),
                            checks=("import_batch_middle_item", "domain_records_every_class") if partial else ("import_batch_middle_item",),
                            example=(MiddleRecord("open"), answers[name]),
                            wrong=Restored(False, False, (True, True, False, False, False))))
    # M35, M60: the open classes of the domain table, restored or refused (no answer at all is neither)
    for (point, check), keys in open_classes().items():
        for key in keys:
            rows += [Reading(point, f"{key} {verb}", meets=_open_class(point, key), predicts=answer_is_exactly(want), checks=(check,), example=(OpenClass(point, key), want),
                             wrong=None)
                     for verb, want in (("restored", True), ("refused", False))]
    # M61: an export's open selections, judged by the model's answer for each reading
    rows += [Reading("M61", name, meets=of_kind(ExportSelection), predicts=_export_fits(name),
                     checks=("domain_export_selection",), example=(selection_of(name), export_example(name)), wrong=(False, []))
             for name in M61_READINGS]
    # M62: a preview under conflict=error says ok, or ok: false
    rows += [Reading("M62", name, meets=of_kind(PreviewUnderError), predicts=answer_is_exactly(want),
                     checks=("domain_import_modes",), example=(PreviewUnderError(), want), wrong=None)
             for name, want in ((PREVIEW_OK, True), (PREVIEW_NOT_OK, False))]
    return rows


def _clone_fits(kept: bool) -> Predicts:
    """A record's memory_id as sent (kept) or another namespace (rewritten); a namespace holding every clone beside
    the originals (kept) or none of them (rewritten)."""
    def fits(request: Any, got: Any) -> bool:
        if isinstance(request, ClonedRecord):
            return bool(got == request.sent) if kept else isinstance(got, str) and bool(got) and got != request.sent
        return list(got) == sorted(request.contents) if kept else list(got) == []
    return fits


TABLE = ReadingTable(_rows())
# M9 in its namespace form (domain_import_modes meets it so): the request, and the answer of each reading
CLONED_NAMESPACE = ClonedNamespace(("one", "two"))
NAMESPACE_EXAMPLES = {"namespaces kept": ["one", "two"], "namespaces rewritten": []}


# ---- asking the table ---------------------------------------------------------------------------------

def meeting(point: str, request: Any) -> list[Reading]:
    """The rows of `point` the request meets (read from TABLE when asked, so a test can replace it)."""
    return TABLE.meeting(point, request, "suites/memorizz/readings.py")


def observe(ctx: CheckContext, point: str, request: Any, answer: Any, *, accepted: Iterable[str] | None = None,
            shown: Any = None, **how: Any) -> Observation:
    """Record each reading of `point` the answer fits (core ReadingTable.ask); the run accepts the readings its
    options allow, narrowed to `accepted` when the check knows more. `shown`: the answer as a failure shows it."""
    observation: Observation = TABLE.ask(ctx, point, request, answer, pins_of(ctx), accepted=accepted, shown=shown,
                                         where="suites/memorizz/readings.py", **how)
    return observation


def tolerated(ctx: CheckContext, reading: str) -> bool:
    """A document rule's problem under `reading` ("M5:memorizz-includes-keys") is no failure in this run: the
    table's row for it is accepted (the option does not pin the reading)."""
    point, _, value = reading.partition(":")
    return TABLE.named(point, f"not {value}").accepted(pins_of(ctx))


def follows(ctx: CheckContext, point: str, request: Any, answer: Any, name: str) -> bool:
    """The answer fits the accepted reading `name` (nothing recorded: for what a check judges after observing)."""
    pins = pins_of(ctx)
    return any(row.name == name and row.accepted(pins) and predicted(row, request, answer) for row in meeting(point, request))

