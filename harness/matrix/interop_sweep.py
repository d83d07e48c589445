"""The interop-hole sweep: every value class of a field a producer writes and a consumer reads (a suite's domain
table and its `Pairing`, harness/kit/interop_pairing.py), judged on both sides by the suite's own code, the producer
side by running the suite's document checks on a document holding the value, the consumer side by the import
check's own expectation of the class. A class is a candidate hole when the producer writing it passes (no check
flags it, not even a SHOULD) and

- the consumer may refuse it (`consumer_may_refuse`: the class is open on import, either answer recorded), or
- the consumer must refuse it (`consumer_must_refuse`: the class is invalid on import), or
- the producer's acceptance rests on an errata reading (the class's `why` names one) while a consumer refusing it
  is failed (`consumer_held_to_a_reading`: the reading is pinned for consumers, not given by the text).

A producer warned (a SHOULD the text states) or refused is no candidate: the text tells that producer what to
write. Candidates are grouped by field and kind; each class of a group is judged against the spec sentence once,
in interop_review.json, as part of a hole (with its errata entry) or rejected (with the sentence that decides it);
a class once a candidate that a producer check now flags is kept there as settled (the check and why), and is a
candidate again only if that check stops flagging it. A class the review does not judge, or a judgement no class
needs, stops the sweep: scripts/interop_holes.py writes
interop_holes.json only from a complete review, and `--check` fails when the committed file differs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ..core.results import HarnessError
from ..kit.domain import Domain, Field, ValueClass
from ..kit.interop_pairing import Pairing

KINDS = ("consumer_may_refuse", "consumer_must_refuse", "consumer_held_to_a_reading")
# memconform's verdict on a consumer that refuses the class, per kind
CONSUMER_VERDICT = {"consumer_may_refuse": "accepted", "consumer_must_refuse": "required",
                    "consumer_held_to_a_reading": "refused"}
_ERRATA_POINT = re.compile(r"\berrata ([A-Z][A-Z0-9]*[0-9]+)\b")

# (verdict, the checks that flagged the value): "accepted", "warned" (only SHOULD/MAY checks failed), "refused"
ProducerJudge = Callable[[str, Any], tuple[str, tuple[str, ...]]]


@dataclass(frozen=True)
class Candidate:
    """A group of classes of one field where the two sides disagree in the same way (`kind`)."""

    suite: str
    field: str
    kind: str
    classes: tuple[str, ...]  # class ids of the field
    readings: tuple[str, ...]  # the errata points the producer's acceptance rests on (held_to_a_reading)
    producer_judges_field: bool  # some class of the field is flagged by the document checks (else they never read it)
    producer_checks: tuple[str, ...]
    consumer_checks: tuple[str, ...]
    sentences: tuple[str, ...]

    @property
    def group(self) -> tuple[str, str, str]:
        return self.suite, self.field, self.kind


def judge_document(suite: str, doc: Any) -> tuple[str, tuple[str, ...]]:
    """The suite's document checks on `doc` (memconform validate's own run, profile ci). An errored check is a
    harness problem here (the document is the sweep's own), never a verdict."""
    from ..core.profile import Profile
    from ..core.results import Outcome
    from ..run.document_run import validate_document

    results = validate_document(doc, suite, Profile.named("ci"))
    errored = [r.check_id for r in results if r.outcome is Outcome.ERRORED]
    if errored:
        raise HarnessError(f"interop sweep: document checks errored on the sweep's own {suite} document: {errored}")
    refused = tuple(r.check_id for r in results if r.outcome is Outcome.FAILED and r.blocking)
    warned = tuple(r.check_id for r in results if r.outcome is Outcome.FAILED and not r.blocking)
    return ("refused", refused) if refused else ("warned", warned) if warned else ("accepted", ())


def kind_of(producer: str, consumer: str, reading: str) -> str | None:
    """The candidate kind of a class (None: the two sides agree, or the producer is told what to write)."""
    if producer != "accepted":
        return None
    if consumer == "open":
        return "consumer_may_refuse"
    if consumer == "invalid":
        return "consumer_must_refuse"
    return "consumer_held_to_a_reading" if reading else None


def reading_of(vc: ValueClass) -> str:
    """The errata point a class's verdict rests on, as its `why` names it ("" when it rests on the text)."""
    found = _ERRATA_POINT.search(vc.why)
    return found.group(1) if found else ""


def sweep(pairing: Pairing, table: Domain, statements: Iterable[Mapping[str, Any]],
          judge: ProducerJudge = judge_document, document_checks: Iterable[str] | None = None) -> list[Candidate]:
    """Every candidate of the pairing's shared fields, in the table's order (see the module). `document_checks`:
    the suite's document check ids (default: the registry's)."""
    statements = list(statements)
    documents = list(document_checks) if document_checks is not None else None
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for field in table.fields:
        if not pairing.shared(field):
            continue
        flagged_any = False
        for vc in field.classes:
            verdicts = [judge(pairing.suite, doc) for doc in pairing.documents(field, vc)]
            producer = "accepted" if all(v == "accepted" for v, _ in verdicts) else "flagged"
            flagged_any = flagged_any or producer == "flagged"
            kind = kind_of(producer, pairing.expectation(vc), reading_of(vc))
            if kind is None:
                continue
            group = found.setdefault((field.id, kind), {"classes": [], "readings": [], "field": field})
            group["classes"].append(vc.id)
            if kind == "consumer_held_to_a_reading":
                group["readings"].append(reading_of(vc))
        for (field_id, _), group in found.items():
            if field_id == field.id:
                group["judged"] = flagged_any
    out = []
    for (field_id, kind), group in found.items():
        field = group["field"]
        consumer_checks = pairing.consumer_checks(field)
        out.append(Candidate(pairing.suite, field_id, kind, tuple(group["classes"]), tuple(dict.fromkeys(group["readings"])),
                             group["judged"], producer_checks(pairing.suite, field, statements, documents), consumer_checks,
                             sentences(field, consumer_checks, statements)))
    return out


def _producer_statements(field: Field, statements: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [s for s in statements if s.get("quote") == field.sentence]


def producer_checks(suite: str, field: Field, statements: list[Mapping[str, Any]],
                    documents: list[str] | None = None) -> tuple[str, ...]:
    """The document checks of the requirement statements quoting the field's own sentence (none quoting it: every
    document check of the suite, each of which let the value pass)."""
    from ..core.registry import select_document_checks

    if documents is None:
        documents = [c.id for c in select_document_checks(suite, None)]
    quoting = tuple(dict.fromkeys(c for s in _producer_statements(field, statements) for c in s.get("checks", ())
                                  if c in documents))
    return quoting or tuple(documents)  # no statement quotes the sentence: every document check passed it


def sentences(field: Field, consumer_checks: tuple[str, ...], statements: list[Mapping[str, Any]]) -> tuple[str, ...]:
    """The statement ids of both sides: the field's own sentence, then those the consumer checks hold."""
    own = [str(s["id"]) for s in _producer_statements(field, statements)]
    consumer = [str(s["id"]) for s in statements if set(s.get("checks", ())) & set(consumer_checks)]
    return tuple(dict.fromkeys([*own, *consumer]))


# ---- the review: each group judged once against the spec sentence ----------------------------------------

_CLASSES = {"type": "array", "minItems": 1, "items": {"type": "string"}}
_GROUP = {"type": "object", "additionalProperties": False, "required": ["field", "kind"],
          "properties": {"field": {"type": "string"}, "kind": {"enum": list(KINDS)}, "classes": _CLASSES}}
REVIEW_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["about", "holes", "rejected"],
    "properties": {
        "about": {"type": "string"},
        "holes": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["id", "suite", "erratum", "title", "groups", "producer", "consumer"],
            "properties": {"id": {"type": "string", "pattern": "^IH[0-9]+$"}, "suite": {"type": "string"},
                           "erratum": {"type": "string", "pattern": "^[A-Z][A-Z0-9]*[0-9]+$"},
                           "title": {"type": "string", "minLength": 1},
                           "groups": {"type": "array", "minItems": 1, "items": _GROUP},
                           "producer": {"type": "string", "minLength": 1}, "consumer": {"type": "string", "minLength": 1}}}},
        "rejected": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["suite", "fields", "kind", "why"],
            "properties": {"suite": {"type": "string"}, "kind": {"enum": list(KINDS)},
                           "fields": {"type": "array", "minItems": 1, "items": {"type": "string"}}, "classes": _CLASSES,
                           "why": {"type": "string", "minLength": 20}}}},
        # once candidates, now no candidate: a producer check flags the class (the text told the producer what to write)
        "settled": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["suite", "fields", "checks", "why"],
            "properties": {"suite": {"type": "string"}, "fields": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                           "classes": _CLASSES, "checks": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                           "why": {"type": "string", "minLength": 20}}}}}}


@lru_cache(maxsize=1)
def review() -> dict[str, Any]:
    text = resources.files("memconform").joinpath("matrix/interop_review.json").read_text("utf-8")
    return review_from(json.loads(text))


def review_from(data: Any) -> dict[str, Any]:
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(REVIEW_SCHEMA).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(top)"
        raise HarnessError(f"interop_review.json: {where}: {errors[0].message}")
    return dict(data)


def _judged_classes(group: Mapping[str, Any], candidate: Candidate | None) -> list[str]:
    """The classes a judgement names (`classes`), or every class of its candidate group."""
    if "classes" in group:
        return list(group["classes"])
    return list(candidate.classes) if candidate is not None else ["*"]


def holes_document(candidates: list[Candidate], judged: Mapping[str, Any], swept: Mapping[str, Any]) -> dict[str, Any]:
    """interop_holes.json from the sweep's candidates and the review. Every class of every candidate group must be
    judged exactly once (a judgement names a group, or some of its classes); a class left unjudged, judged twice, or
    a judgement with no candidate behind it raises, naming every one."""
    by_group = {c.group: c for c in candidates}
    verdicts: dict[tuple[str, str, str, str], list[str]] = {}
    for hole in judged["holes"]:
        for g in hole["groups"]:
            group = (hole["suite"], g["field"], g["kind"])
            for k in _judged_classes(g, by_group.get(group)):
                verdicts.setdefault((*group, k), []).append(hole["id"])
    for r in judged["rejected"]:
        for field in r["fields"]:
            group = (r["suite"], field, r["kind"])
            for k in _judged_classes(r, by_group.get(group)):
                verdicts.setdefault((*group, k), []).append("rejected")
    wanted = {(*c.group, k): c for c in candidates for k in c.classes}
    problems = [f"not judged in interop_review.json: {' '.join(key)}" for key in wanted if key not in verdicts]
    problems += [f"judged more than once: {' '.join(key)} ({', '.join(v)})" for key, v in verdicts.items() if len(v) > 1]
    problems += [f"judged with no candidate behind it (the sweep no longer finds it): {' '.join(key)}"
                 for key in verdicts if key not in wanted and key[0] in swept]
    for settled in judged.get("settled", ()):
        again = [" ".join(key) for key in wanted if key[0] == settled["suite"] and key[1] in settled["fields"]
                 and ("classes" not in settled or key[3] in settled["classes"])]
        problems += [f"settled in interop_review.json ({', '.join(settled['checks'])} flags it) but a candidate again: {key}"
                     for key in again]
    if problems:
        raise HarnessError("interop sweep: " + "; ".join(problems))
    holes = []
    for hole in judged["holes"]:
        if hole["suite"] not in swept:
            continue
        groups = [(by_group[(hole["suite"], g["field"], g["kind"])], g) for g in hole["groups"]]
        kinds = {c.kind for c, _ in groups}
        if len(kinds) != 1:
            raise HarnessError(f"interop sweep: {hole['id']} groups kinds that differ ({sorted(kinds)}): one kind a hole")
        kind = kinds.pop()
        classes = [f"{c.field}:{k}" for c, g in groups for k in _judged_classes(g, c)]
        readings = [r for c, _ in groups for r in c.readings]
        holes.append({
            "id": hole["id"], "suite": hole["suite"], "erratum": hole["erratum"], "title": hole["title"], "kind": kind,
            "sentences": list(dict.fromkeys(s for c, _ in groups for s in c.sentences)),
            # "not judged": no document check flags any class of a field the hole holds, so passing them says nothing
            "producer": {"behaviour": hole["producer"],
                         "verdict": "accepted" if all(c.producer_judges_field for c, _ in groups) else "not judged",
                         "checks": list(dict.fromkeys(k for c, _ in groups for k in c.producer_checks)), "domain_classes": classes},
            "consumer": {"behaviour": hole["consumer"], "verdict": CONSUMER_VERDICT[kind],
                         "checks": list(dict.fromkeys(k for c, _ in groups for k in c.consumer_checks)), "domain_classes": classes},
            **({"readings": list(dict.fromkeys(readings))} if readings else {}),
        })
    return {"about": ABOUT, "swept": dict(swept), "holes": holes}


def rendered(doc: Mapping[str, Any]) -> str:
    """interop_holes.json's text, byte for byte as scripts/interop_holes.py writes it."""
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


ABOUT = ("Interop holes: a producer behaviour a suite accepts beside a consumer behaviour the spec text lets a consumer "
         "take against it. Written by scripts/interop_holes.py from the sweep (harness/matrix/interop_sweep.py) and the "
         "judgement of each candidate against the spec sentence (interop_review.json); do not edit by hand. Schema: "
         "harness/matrix/interop.py (HOLE_SCHEMA), checked on load.")


def sweep_suites(names: Iterable[str] | None = None) -> tuple[list[Candidate], dict[str, Any]]:
    """The candidates of every installed suite that declares a pairing (SuiteSpec.interop), or of `names`, and
    per suite what was swept ({"fields", "classes", "candidates"}; a suite with no pairing: {"not_swept": why})."""
    from ..core.suite import all_suites, get_suite
    from ..kit import domain

    suites = [get_suite(n) for n in names] if names is not None else all_suites(missing_ok=False)
    candidates: list[Candidate] = []
    swept: dict[str, Any] = {}
    for suite in suites:
        if suite.interop is None:
            swept[suite.name] = {"not_swept": "the suite declares no producer/consumer pairing (SuiteSpec.interop)"}
            continue
        pairing: Pairing = suite.interop()
        table = domain.required(suite.name)
        statements = json.loads(suite.requirements.read_text("utf-8"))["statements"] if suite.requirements else []
        found = sweep(pairing, table, statements)
        fields = [f for f in table.fields if pairing.shared(f)]
        swept[suite.name] = {"fields": len(fields), "classes": sum(len(f.classes) for f in fields), "candidates": len(found)}
        candidates += found
    return candidates, swept
