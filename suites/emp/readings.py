"""EMP's readings of its open points as data: what each situation a check meets is (`Asked`), what the answer
looks like, and each reading's prediction. The rows are suites/emp/table.py's TABLE; the checks ask it
(table.observe), never a copy of their own.

A request is an `Asked(situation, given)`: the situation names the point's occasion (a delete next to other
apps' lines, a lock older than the stale limit, a value the query spec is silent on...), `given` what the check
handed the target (the id of an append, the entry it sent, the form it tried). An answer is what the target
was seen to do, in the smallest shape the readings tell apart (`Held`, `Stale`, `Written`, `Queried`...). The
pins are the run's options (`ctx.option`): a callable from an option's name to its value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memconform.core.readings import Asked
from memconform.kit import domain
from memconform.suites.emp import format as emp
from memconform.suites.emp import model

Pins = Callable[[str], str]

# the situations (a request's kind), one or two per point
HONOURED = "a tombstone of one form in a file read back"  # E1, the reader
DELETED = "a delete next to other apps' lines"  # E1, the writer
REWRITTEN = "a delete that rewrote a file holding a corrupt line"  # E13
STALE = "an append past a lock older than the stale limit"  # E2
HELD = "a write while another app holds a fresh lock"  # E6
TIE = "two lines of one id with equal ts"  # E3
NEWER_MAJOR = "a file holding a line of a newer major version"  # E8
APPEND_REPLY = "an append's reply"  # E14
OPEN_CLASS = "an open value class written"  # E36
VERSION = "an entry handed with a version, written as given"  # E65
AT_RISK = "a file whose BOM or unterminated last line puts one line at risk"  # E64
UPPER_UUID = "an upper-case UUID id read back"  # E66
NEAR_ASKED = "a query of valid parameters carrying near"  # E60
TAGS_ASKED = "a query of valid parameters with several tags"  # E62
ODD_VALUE = "a query value the spec is silent on"  # E61, E60 (near)


# ---- E1: the tombstone forms ------------------------------------------------------------------------

TOMBSTONE_FORMS = ("deleted-flag", "type-tombstone")
TYPE_TOMBSTONE_LINE, DELETED_FLAG_LINE = "a type-tombstone line", "a deleted-flag line"


@dataclass(frozen=True)
class Deletion:
    """A delete as the file shows it: lines appended after the old bytes (of these kinds), or the file rewritten."""

    appended: bool
    kinds: frozenset[str] = frozenset()


def form_allowed(form: str) -> Callable[[Pins], bool]:
    return lambda option: option("tombstone") in ("either", form)


# ---- E2, E6: the lock --------------------------------------------------------------------------------

TAKES_OVER, GIVES_UP, WAITS = "takes over a stale lock", "waits on a stale lock, then gives up", "waits on a stale lock"
WAITS_HELD, GIVES_UP_HELD = "waits for the lock", "gives up while the lock is held"


@dataclass(frozen=True)
class Stale:
    """An append past a stale lock: acknowledged (True), refused (False) or still waiting after 5 s (None), and
    whether the file changed by then."""

    acknowledged: bool | None
    changed: bool = False


def takeover_optional(option: Pins) -> bool:
    return option("stale_lock_takeover") != "required"


@dataclass(frozen=True)
class Held:
    """A write while another app held a fresh lock: did the call return during the hold, was it acknowledged,
    did the file stay as it was during the hold."""

    returned: bool
    acknowledged: bool
    unchanged: bool = True


# ---- E36, E65: what a writer makes of the entry it is handed ------------------------------------------

AS_GIVEN, REFUSED, REPAIRED = "appended as given", "refused", "written valid, changed"
OWN_VERSION = "the writer writes its own protocol version"
KEEPS_VERSION = "the writer keeps the version it is given"


@dataclass(frozen=True)
class Written:
    """A write's reply (acknowledged or not) and the lines it added to the file."""

    acknowledged: bool
    new: tuple[Any, ...] = ()


def same_number_or_value(sent: Any, got: Any) -> bool:
    """Equal as JSON values; numbers as doubles (a JavaScript reader holds 2^53+1 as 2^53)."""
    if isinstance(sent, bool) or isinstance(got, bool):
        return sent is got
    if isinstance(sent, (int, float)) and isinstance(got, (int, float)):
        return domain.same_number(got, sent, "double")  # ts, a number in meta or emb: the spec types them `number`
    if isinstance(sent, dict) and isinstance(got, dict):
        return sent.keys() == got.keys() and all(same_number_or_value(sent[k], got[k]) for k in sent)
    if isinstance(sent, list) and isinstance(got, list):
        return len(sent) == len(got) and all(same_number_or_value(a, b) for a, b in zip(sent, got, strict=True))
    return bool(sent == got)


def same_major(sent: Any, written: Any) -> bool:
    """Two "MAJOR.MINOR" versions of one major: a writer of 1.0 may write 1.0 for an entry handed it as 1.1."""
    both = [v for v in (sent, written) if isinstance(v, str) and emp.VERSION_RE.match(v)]
    return len(both) == 2 and both[0].split(".")[0] == both[1].split(".")[0]


def as_given(sent: dict[str, Any], written: dict[str, Any]) -> bool:
    """The written line holds the fields sent, as sent (numbers as doubles), and no other; the id and the ts
    may be the writer's own (E14: it picks the id; an app stamps the time it writes), and so may the
    version, within the major given (E65)."""
    own = {"id", "ts"}
    fields = set(sent) - own
    same = all(k in written and (same_number_or_value(sent[k], written[k]) or k == "v" and same_major(sent[k], written[k]))
               for k in fields)
    return same and set(written) - own == fields and own <= set(written)


def what_was_done(acknowledged: bool, new: tuple[Any, ...] | list[Any], sent: dict[str, Any]) -> str:
    if not acknowledged and not new:
        return REFUSED
    if len(new) == 1 and isinstance(new[0], dict) and as_given(sent, new[0]):
        return AS_GIVEN
    return REPAIRED


def new_problems(sent: dict[str, Any], new: tuple[Any, ...] | list[Any]) -> bool:
    """A written line breaks a rule (under every reading) the entry as sent did not break."""
    allowed = set(emp.hard_errors(sent))
    return any(not isinstance(e, dict) or set(emp.hard_errors(e)) - allowed for e in new)


def open_class_done(name: str) -> Callable[[Asked, Written], bool]:
    """E36's three answers: as given; refused with nothing written; written (something) valid, changed (no rule
    broken the entry as sent did not already break)."""
    def predicts(request: Asked, answer: Written) -> bool:
        done = what_was_done(answer.acknowledged, answer.new, request.given)
        if done == REPAIRED:
            return name == REPAIRED and bool(answer.new) and not new_problems(request.given, answer.new)
        return done == name
    return predicts


# ---- E64, E66: a reader's view --------------------------------------------------------------------------

LINE_READ, LINE_LEFT_OUT = "the line is read", "the line is left out"
UUID_AS_WRITTEN = "an upper-case UUID id is returned as written"
UUID_FOLDED = "an upper-case UUID id is returned in another case (compared case-insensitively)"


@dataclass(frozen=True)
class AtRisk:
    """The entries of a file (its line form no entry) and the id the form puts at risk."""

    lines: tuple[dict[str, Any], ...]
    optional: str


def view_fits(lines: tuple[dict[str, Any], ...], shown: Any, absent: str | None = None) -> bool:
    """The view is the model's for these entries (`absent`: with that id left out)."""
    answers = {i: ((None,) if i == absent else options) for i, options in model.view_answers(list(lines)).items()}
    return isinstance(shown, list) and not model.view_problems(shown, answers, same=same_entry)


def same_entry(a: Any, b: Any) -> bool:
    return isinstance(a, dict) and isinstance(b, dict) and same_number_or_value(dict(a), dict(b))


# ---- E60, E61, E62: queries -----------------------------------------------------------------------------

SEMANTIC_REFUSED, SIMILAR, NEAR_IGNORED = "semantic search not offered (refused)", "similar vectors returned", "near ignored"
EVERY_TAG, ANY_TAG = "every given tag present", "any given tag present"


@dataclass(frozen=True)
class Queried:
    """A query on a file: its lines, the parameters sent, the parameter whose value is open (E61/E60 odd values),
    the tombstone form the reader honours."""

    lines: tuple[Any, ...]
    query: dict[str, Any]
    name: str = ""
    form: str | None = None


@dataclass(frozen=True)
class Answered:
    """A query's reply: answered (with these entries) or refused."""

    ok: bool
    entries: tuple[Any, ...] = ()


def problems_under(lines: tuple[Any, ...], query: dict[str, Any], readings: model.Readings, answer: Any) -> list[str]:
    if query.get("text") == model.NOTHING["text"]:
        return [] if not answer else [f"{len(answer)} entries returned; this reading matches nothing"]
    return model.view_problems(list(answer), model.query_answers(lines, query, readings), same=same_entry)


def tag_readings(query: dict[str, Any], form: str | None) -> dict[str, model.Readings]:
    """E62: several tags asked: every one present, or any one (one tag: the two agree)."""
    base = model.Readings(tombstone=form or "either")
    if len(query.get("tags") or []) < 2:
        return {EVERY_TAG: base}
    return {EVERY_TAG: base, ANY_TAG: model.Readings(tombstone=base.tombstone, query_tags="any")}


def near_readings(query: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """E60: the query as each reading of `near` reads it (without near: the query itself)."""
    if "near" not in query:
        return {SIMILAR: query}
    return {SIMILAR: query, NEAR_IGNORED: {k: v for k, v in query.items() if k != "near"}}


def fitting(asked: Queried, answer: Answered) -> set[tuple[str, str]]:
    """The (tags reading, near reading) pairs under which the model allows an answered query's entries."""
    if not answer.ok:
        return set()
    return {(tags, near) for tags, readings in tag_readings(asked.query, asked.form).items()
            for near, query in near_readings(asked.query).items() if not problems_under(asked.lines, query, readings, answer.entries)}


def odd_reading(name: str) -> Callable[[Asked, Answered], bool]:
    """One reading of a value the spec is silent on (model.odd_value_readings): refused, or answered with the
    entries the model gives the query that reading reads the request as."""
    def predicts(request: Asked, answer: Answered) -> bool:
        asked: Queried = request.given
        read_as, readings = model.odd_value_readings(asked.query, asked.name)[name]
        if read_as == model.REFUSED:
            return not answer.ok
        readings = model.Readings(tombstone=asked.form or "either", case=readings.case)
        return answer.ok and not problems_under(asked.lines, read_as, readings, answer.entries)
    return predicts


def odd_met(point: str, name: str) -> Callable[[Asked], bool]:
    """An odd value of the parameter the point covers (E60: near; E61: the others) that this reading reads."""
    def meets(request: Asked) -> bool:
        asked = request.given
        return (request.situation == ODD_VALUE and (asked.name == "near") == (point == "E60")
                and name in model.odd_value_readings(asked.query, asked.name))
    return meets


ODD_NAMES = ("refused", "read as absent", "matching nothing", "compared as the number", "read as one tag", "exact",
             "case-insensitive", NEAR_IGNORED)
