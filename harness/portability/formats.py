"""The formats portability knows, and what each declares: found through the installed suites, never by name.

A suite takes part in `translate`, the loss matrix and `port` when its SuiteSpec names a `portability` factory
(`Later("package.portability.declared:portable")`) returning a `Portable`. Everything format-specific lives in
the suite's package; this module only asks the registry (core/suite.py), so a sixth suite joins with no edit here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memconform.core.results import HarnessError, TargetError
from memconform.core.suite import all_suites, get_suite

if TYPE_CHECKING:  # only annotations: translating a file imports no runner, hypothesis or ledger types here
    from hypothesis.strategies import SearchStrategy
    from memconform.core.runner import Context

    from .canonical import Document, LineReading, Reading
    from .ledger import Ledger
    from .witness import Witness


@dataclass
class Endpoint:
    """One live implementation of one format (endpoints.py opens it): its target, and what the format's
    operations keep between calls (`held`: the subjects given, a file prepared, ...)."""

    fmt: str
    spec: str
    ctx: Context
    held: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        self.ctx.target.close()


def _same(key: str) -> str:
    return key


@dataclass(frozen=True)
class Portable:
    """One format's part in portability, declared by its suite."""

    name: str  # the suite's name, which is the format's
    mapping: Path  # the mapping table (schema harness/schemas/mapping.schema.json)
    read: Callable[[Any], Document]  # a document of the format -> canonical records
    write: Callable[[Document, Ledger], Any]  # canonical records -> a document, every field told to the ledger
    detect: Callable[[Any], bool]  # is this parsed document (a text format: the file's text) of the format?
    samples: Callable[[], list[Path]]  # the document source: the valid documents the loss matrix measures
    seed: str  # the sample `port` imports into A when no --seed is given (a file name among `samples()`)
    export: Callable[[Endpoint], Any]  # the target's export, by the suite's own operation names
    import_: Callable[[Endpoint, Any], None]  # give the target a document; a refusal raises TargetError
    witness: Witness  # a reader of the format apart from the translator: judges every ledger line
    # valid documents for the round-trip properties, and a document with one edge of the domain put in
    # (strategies.EDGES); named with core.suite.Later so that translating imports no hypothesis
    documents: Callable[[], SearchStrategy[Any]] | None = None
    edge: Callable[[Any, str], Any] | None = None
    prepare: Callable[[Endpoint], None] | None = None  # what an endpoint needs before its first operation
    narrow: Callable[[Any, set[str]], Any] | None = None  # an export without the records of these ids (None: cannot)
    text: bool = False  # the document is text (JSON Lines), not one JSON value
    order: int = 100  # where the format stands in the loss matrix's rows and columns
    native_id: Callable[[str], str] = _same  # a record's own id from the key a document names it by
    match_by_text: bool = False  # two exports name the same record by its text, not its id (consumers assign ids)
    not_compared: frozenset[str] = frozenset()  # fields a target may rewrite on import without it being a loss
    sanctioned: Mapping[str, str] = field(default_factory=dict)  # field -> the sentence that lets a consumer drop it
    size_limit: Callable[[], tuple[str, int]] | None = None  # (the limit's name, bytes) an output may not exceed
    output_problems: Callable[[Any], list[str]] | None = None  # what the format's checks cannot see but must refuse
    # a format's own answer to "could a writer have written `value` as `shown`?" for a field (None: ask the rule)
    consistent: Callable[[str, Any, Any], bool | None] | None = None
    respellings: Mapping[str, str] = field(default_factory=dict)  # id/type respelling rule -> its ledger wording
    # the reader in steps (canonical.Reading): a file of the format is then read in windows by the CLI (sourced.py)
    reading: Reading | None = None
    # a text format's reader by lines (canonical.LineReading): a file of it is then read a line at a time (sourced.py)
    lines: LineReading | None = None
    # the writer writes the records in one pass, in order (written_records, drain), any pass before it through
    # canonical.again or id_lists: it may be handed a OnePass, records read in windows as it writes them
    one_pass: bool = False
    # detect answers from the top-level shape alone: on an object, from its member names, which members are arrays
    # or objects, and the values of the others (never what an array or object holds); anything else, a text too,
    # by its type alone (but see detect_lines). `translate` without --from then finds the format from a skim of
    # the file (detected.py) where every format declares this; otherwise it parses the file whole to ask
    detect_by_shape: bool = False
    # a text format's detect answers a text from its first this many lines that are not blank (None: not a text format)
    detect_lines: int | None = None


def refused(end: Endpoint, reply: Any, what: str = "import") -> None:
    """Raise TargetError when `reply` refuses: a format's operations call this after each call that must succeed."""
    if not reply.ok:
        status = getattr(reply, "status", None)
        raise TargetError(f"{end.fmt} {what} was refused{f' ({status})' if status else ''}: {reply.raw[:300]!r}")


@functools.cache
def portable(name: str) -> Portable:
    """The format `name` declares; a format no suite declares is a harness error naming those that are."""
    try:
        suite = get_suite(name)
    except HarnessError:
        suite = None
    if suite is None or suite.portability is None:
        raise HarnessError(f"unknown format {name!r}; formats: {', '.join(formats())}")
    return _checked(suite.name, suite.portability())


def _checked(suite: str, declared: Any) -> Portable:
    if not isinstance(declared, Portable) or declared.name != suite:
        raise HarnessError(f"suite {suite}: SuiteSpec.portability must return a Portable named {suite!r}, "
                           f"not {declared!r:.120}")
    return declared


@functools.cache
def formats() -> tuple[str, ...]:
    """Every format a suite declares, in the loss matrix's order."""
    declared = [portable(s.name) for s in all_suites() if s.portability is not None]
    return tuple(p.name for p in sorted(declared, key=lambda p: (p.order, p.name)))
