"""What a suite tells the harness, and how the harness finds suites: the `memconform.suites` entry points.

A suite is any installed distribution that declares, in its packaging metadata,

    [project.entry-points."memconform.suites"]
    NAME = "package.module:SUITE"        # a SuiteSpec, or a zero-argument function returning one

The entry point may name the module that registers the suite's checks (`@check`), so loading it
registers them; or it names the module of the SuiteSpec alone, whose `checks_module` then names the
module that registers them, imported the first time the checks are asked for (`registered()`,
`load_checks()`). Naming a file's format (`validate`) needs each suite's `detect` alone (a module `detect`
beside the SuiteSpec's, core/detectors.py), then the named suite's SuiteSpec and its document checks
(`document_checks`: the modules load_document_checks imports), not every check: the built-in suites take the
second way. The core never names a suite module itself.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .check import Check, CheckFn, declaration_problems, parse_keyword, squash
from .entry_point_files import ENTRY_POINT_GROUP, _declared_on_sys_path
from .options import Options, OptionSpec
from .results import HarnessError

if TYPE_CHECKING:
    from .mutants import Mutants

@dataclass(frozen=True)
class Level:
    """A conformance level of a suite: the levels it requires and the check ids its clause lists."""

    key: str
    title: str
    requires: tuple[str, ...] = ()
    # check ids (short names, without the suite prefix) that the spec's conformance clause lists
    clause: tuple[str, ...] = ()
    optional: bool = False
    # judged whatever the target claims (OMP's 0.2 AI endpoints and §7): its checks run, and it is never
    # labelled claimed, since the target's claim (SuiteSpec.claimed_levels) does not name it
    always_judged: bool = False


class Later:
    """A callable named as "module:attr", imported on its first call: the call is `attr(*args, **kw)`; named
    as "module" alone, the call returns the module (a suite's mutants). A SuiteSpec names what it loads late
    this way (reference=Later("pkg.reference:Store")), so naming a format or listing suites imports no
    reference, client or mutant."""

    def __init__(self, where: str) -> None:
        self.where = where

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        module_name, _, attr = self.where.partition(":")
        module = importlib.import_module(module_name)
        return getattr(module, attr)(*args, **kwargs) if attr else module

    def __repr__(self) -> str:
        return f"Later({self.where!r})"


@dataclass
class SuiteSpec:
    """What a suite tells the harness (the module docstring): its levels, checks, formats and targets."""

    name: str
    spec_title: str
    version: str
    levels: list[Level]
    # where "document" checks get their document during a run against a target
    document_source: Callable[[Any], Any] | None = None
    # validate FILE: does this text look like our format? and, for a format that is not plain JSON,
    # how to parse it (None: the file is parsed once as JSON)
    detect: Callable[[Any], bool] | None = None
    parse: Callable[[bytes], Any] | None = None
    # validate FILE for a line-oriented format: open the file as a document read in a stream
    # (instead of loading and parsing it whole), so memory stays bounded
    stream: Callable[[Any], Any] | None = None
    routes: dict[str, Any] = field(default_factory=dict)
    # before any check: raise HarnessError when the run cannot mean anything (a refused key, say)
    preflight: Callable[[Any], None] | None = None
    # findings about the whole run that no one check owns (a latency pattern, say): report notes
    run_notes: Callable[[Any], list[str]] | None = None
    # which levels a target claims, from the target itself (None: all levels apply)
    claimed_levels: Callable[[Any], set[str] | None] | None = None
    # `reference:NAME`: a zero-argument factory of the embedded implementation (an object with one
    # method per operation, or a ready Target)
    reference: Callable[[], Any] | None = None
    # `memconform serve NAME`: serve(host=, port=, db=) blocks serving the reference over HTTP
    serve: Callable[..., None] | None = None
    # `memconform replay FILE --suite NAME`: replay(ctx, saved_example) -> failures
    replay: Callable[[Any, Any], Iterator[Any]] | None = None
    # the mutants module: MUTANTS {name: factory}, EXPECTED_KILLS {name: {check ids}}
    mutants: Callable[[], ModuleType] | None = None
    # the requirement map (schema harness/schemas/requirements.schema.json); None: the one in
    # the installed fixtures, fixtures/<name>/requirements.json, when there is one
    requirements: Path | None = None
    # `memconform run` without --suite: does this target speak the suite? (None: the suite runs
    # only against its own reference)
    probe: Callable[[Any], bool] | None = None
    # `memconform validate`: top-level keys of the format's envelope; a document with two or more of
    # one suite's hints (and fewer of any other's) is named as that format even when `detect` says no
    hints: tuple[str, ...] = ()
    # `memconform translate`, `portability` and `port`: a zero-argument factory of the format's Portable
    # (harness/portability/formats.py: mapping table, translator, witness, samples, export and import); None:
    # the suite takes no part in portability
    portability: Callable[[], Any] | None = None
    interop: Callable[[], Any] | None = None  # the interop sweep's Pairing factory (harness/kit/interop_pairing.py)
    # the spec as published: every check's sentence must be verbatim in it (None: not verified)
    spec_text: Path | None = None
    # the module whose import registers the checks and sets what they add to the SuiteSpec (a
    # `document_source`, a `replay`): imported on the first `registered()` or `load_checks()`; None:
    # the checks register when the SuiteSpec's own module loads
    checks_module: str | None = None
    # the modules of the checks package that hold every "document" check (`memconform validate` imports only
    # them: load_document_checks). Declared, the package's __init__ imports no check module: its `__all__`
    # lists them, in the order their checks run, and load_checks imports them in that order
    document_checks: tuple[str, ...] = ()
    # the readings of ambiguous spec text a run can pin (`--option`), declared by the suite package
    # (suites/<spec>/options.py) and read with `ctx.option(name)` (core/options.py)
    options: Options = field(default_factory=Options)
    _checks_import_started: bool = field(default=False, init=False, repr=False, compare=False)
    _checks: dict[str, Check] = field(default_factory=dict, init=False, repr=False, compare=False)
    # per check id, the check module that registered it (the one being imported, else its function's)
    _module_of: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)
    _importing: list[str] = field(default_factory=list, init=False, repr=False, compare=False)
    _text: list[str] = field(default_factory=list, init=False, repr=False, compare=False)

    def check(self, *, section: str, keyword: str, level: str, sentence: str, kind: str = "target",
              needs: tuple[str, ...] = (), sweep: bool = False) -> Callable[[CheckFn], CheckFn]:
        """Register a generator of failures under its function name, which is the stable check id
        `<suite>.<name>`; a wrong declaration is refused here, when the suite loads (core/check.py)."""

        def register(fn: CheckFn) -> CheckFn:
            check_id = f"{self.name}.{fn.__name__}"
            declared = Check(id=check_id, suite=self.name, spec=self.spec_title, section=section,
                             keyword=parse_keyword(keyword, check_id), level=level, sentence=squash(sentence),
                             kind=kind, fn=fn, needs=needs, sweep=sweep)
            self.add_check(declared)
            return fn

        return register

    def add_check(self, check: Check) -> None:
        problems = declaration_problems(check, {lv.key for lv in self.levels}, self.spec_words())
        known = self._checks.get(check.id)
        # the same function registering again is its module being re-imported (pytester restores
        # sys.modules between tests): keep the newer one; two different functions is a clash
        if known is not None and (known.fn.__module__, known.fn.__qualname__) != (check.fn.__module__, check.fn.__qualname__):
            problems.append(f"the id is registered already, by {known.fn.__module__}.{known.fn.__qualname__}")
        if problems:
            raise HarnessError(f"check {check.id} ({check.fn.__module__}) refused: " + "; ".join(problems))
        self._checks[check.id] = check
        self._module_of[check.id] = self._importing[-1] if self._importing else check.fn.__module__.rpartition(".")[2]

    def option(self, name: str) -> OptionSpec:
        """The declared option `name`; reading one the suite does not declare is a harness bug, said here."""
        spec = self.options.get(name)
        if spec is None:
            declared = ", ".join(self.options.names()) or "none"
            raise HarnessError(f"suite {self.name!r} declares no option {name!r} (it declares: {declared}); "
                               f"declare it in the suite's options table")
        return spec

    def mutant_table(self) -> Mutants | None:
        """The suite's known-broken implementations as one validated table (core/mutants.py), or None."""
        if self.mutants is None:
            return None
        from .mutants import Mutants

        return Mutants.of(self.mutants(), self.name)

    def registered(self) -> dict[str, Check]:
        """The suite's checks by id, in the order they registered (the order they run in)."""
        self.load_checks()
        return self._checks

    def load_checks(self) -> SuiteSpec:
        """Import `checks_module` once, which registers the checks and sets what they add to the
        SuiteSpec: read `document_source` or `replay` only after this. A check module that asks for
        `registered()` while the checks load sees those registered so far."""
        if self.checks_module is None or self._checks_import_started:
            return self
        self._checks_import_started = True
        try:
            package = importlib.import_module(self.checks_module)
            if self.document_checks:
                self._import_check_modules(list(getattr(package, "__all__", ())))
        except BaseException:
            self._checks_import_started = False  # the next ask tries again, and says why again
            raise
        return self

    def load_document_checks(self) -> list[Check]:
        """The suite's "document" checks in the order they run, importing only the modules `document_checks`
        names when the suite declares them (`memconform validate`), else every check module."""
        if self.document_checks and not self._checks_import_started and self.checks_module is not None:
            importlib.import_module(self.checks_module)
            self._import_check_modules(list(self.document_checks))
            return [c for c in self._checks.values() if c.kind == "document"]
        return [c for c in self.registered().values() if c.kind == "document"]

    def _import_check_modules(self, names: list[str]) -> None:
        """Import each check module of the package once, in the order given, noting which registered what;
        then put the checks in the order of the package's `__all__`, whichever was imported first (a
        validation imports the document checks alone, and a run in the same process all of them later)."""
        for name in names:
            self._importing.append(name)
            try:
                importlib.import_module(f"{self.checks_module}.{name}")
            finally:
                self._importing.pop()
        package = sys.modules.get(self.checks_module or "")
        rank = {name: i for i, name in enumerate(getattr(package, "__all__", ()))}
        ordered = sorted(self._checks, key=lambda check_id: rank.get(self._module_of.get(check_id, ""), len(rank)))
        self._checks = {check_id: self._checks[check_id] for check_id in ordered}

    def registered_so_far(self) -> dict[str, Check]:
        """The checks registered until now, loading none (a rule table asks while its module registers)."""
        return self._checks

    def spec_words(self) -> str | None:
        if self.spec_text is None:
            return None
        if not self._text:
            try:
                self._text.append(squash(self.spec_text.read_text("utf-8")))
            except OSError as exc:
                raise HarnessError(f"suite {self.name}: spec text {self.spec_text} cannot be read ({exc})") from None
        return self._text[0]


def answers_with(op: str, body: Callable[[], Any], recognise: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """A probe (SuiteSpec.probe): the target answers `op` with `body()` by a document `recognise` knows.
    Refused, absent or garbage: not this suite (a probe never raises)."""

    def probe(target: Any) -> bool:
        try:
            reply = target.call(op, body())
        except Exception:  # noqa: BLE001  refused, absent, garbage: not a target of this suite
            return False
        return bool(reply.ok and recognise(reply.body))

    return probe


def replay_command(reproduce_base: str, suite: str, path: str) -> str:
    """The `memconform replay` line for a saved example: the run's target, and its key as the variable."""
    import shlex  # a run's failure only: validate starts without it

    parts = shlex.split(reproduce_base) if reproduce_base else []
    words = ["memconform", "replay", path, "--suite", suite]
    if "--target" in parts[:-1]:
        words += ["--target", parts[parts.index("--target") + 1]]
    line = " ".join(shlex.quote(w) for w in words)
    if "$MEMCONFORM_API_KEY" in reproduce_base:
        line += ' --api-key "$MEMCONFORM_API_KEY"'
    return line


_LOADED: dict[str, SuiteSpec] = {}


def _entry_points() -> dict[str, Any]:
    """The group's entry points by name (the first on sys.path wins, as for imports). Read from the
    `entry_points.txt` of each distribution folder on sys.path: importing importlib.metadata costs
    about a seventh of `validate`'s start-up (it imports the email package to read METADATA files).
    A sys.path entry that is not a folder (a zip, an egg) takes importlib.metadata's own search."""
    declared = _declared_on_sys_path()
    if declared is None:
        from importlib import metadata

        found: dict[str, Any] = {}
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(ep.name, ep)
        return found
    return {name: DeclaredEntryPoint(name, value) for name, value in reversed(declared)}


@dataclass(frozen=True)
class DeclaredEntryPoint:
    """What the harness reads of an entry point (importlib.metadata.EntryPoint's name, value, module, load)."""

    name: str
    value: str

    @property
    def module(self) -> str:
        return self.value.partition(":")[0].strip()

    def load(self) -> Any:
        target: Any = importlib.import_module(self.module)
        attrs = self.value.partition(":")[2].partition("[")[0].strip()
        for attr in attrs.split(".") if attrs else []:
            target = getattr(target, attr)
        return target


def suite_names() -> list[str]:
    """Every suite installed, by name (a stable order whatever the install order)."""
    return sorted(_entry_points())


def get_suite(name: str) -> SuiteSpec:
    if name in _LOADED:
        return _LOADED[name]
    return _load(name, _entry_points().get(name))


def _load(name: str, ep: Any) -> SuiteSpec:
    """The SuiteSpec an entry point names (None: no such suite), loaded once."""
    if name in _LOADED:
        return _LOADED[name]
    if ep is None:
        known = ", ".join(suite_names()) or "none"
        raise HarnessError(f"unknown suite {name!r}; installed suites: {known}")
    obj = ep.load()
    if not isinstance(obj, SuiteSpec) and callable(obj):
        obj = obj()
    if not isinstance(obj, SuiteSpec):
        raise HarnessError(f"entry point {ENTRY_POINT_GROUP}:{name} ({ep.value}) is not a SuiteSpec")
    if obj.name != name:
        raise HarnessError(f"entry point {ENTRY_POINT_GROUP}:{name} names a SuiteSpec called {obj.name!r}")
    _LOADED[name] = obj
    return obj


def all_suites(missing_ok: bool = True) -> list[SuiteSpec]:
    """Every installed suite; with missing_ok, one whose code cannot be imported is left out."""
    out = []
    points = _entry_points()  # read once for every suite (each reading lists every folder on sys.path)
    for name in sorted(points):
        try:
            out.append(_load(name, points[name]))
        except ModuleNotFoundError as exc:
            if not (missing_ok and is_stale(name, exc)):
                raise
    return out


def is_stale(name: str, exc: ModuleNotFoundError) -> bool:
    """The entry point's own module is gone (a stale install), not a module it imports."""
    ep = _entry_points().get(name)
    module = ep.module if ep is not None else ""
    return bool(exc.name) and (module == exc.name or module.startswith(f"{exc.name}."))



def entry_point_modules() -> dict[str, str]:
    """The module each installed suite's entry point names, by suite name (nothing imported)."""
    return {name: ep.module for name, ep in _entry_points().items()}
