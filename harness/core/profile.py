"""Profiles: how hard to fuzz, how strict to be, and which reading of ambiguous spec text to take.

Every reading a suite takes of an ambiguous sentence is a named option, declared in the suite's own
options table (suites/<spec>/options.py, held by its SuiteSpec; core/options.py) with its default and
alternatives, and explained in the suite's errata.md. A profile holds the values given (`--option`)
and resolves them against those tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .results import HarnessError

if TYPE_CHECKING:
    from .suite import SuiteSpec


def _installed(suites: Iterable[SuiteSpec] | None) -> list[SuiteSpec]:
    """The suites whose options a profile is checked against: the given ones, or every installed suite."""
    if suites is not None:
        return list(suites)
    from .suite import all_suites

    return all_suites()


@dataclass(frozen=True)
class Limits:
    """The bounds of a run: a call's time and bytes, a check's budget and the whole run's."""

    request_timeout_s: float = 10.0
    call_deadline_s: float = 60.0
    max_response_bytes: int = 64 * 1024 * 1024
    dir_wait_s: float = 30.0
    # the whole run (every target of it): past it every remaining call errors at once and the report
    # is completed; each check has its own budget inside it (None: only the run's)
    run_deadline_s: float = 1800.0
    check_deadline_s: float | None = None


PROFILES: dict[str, dict[str, Any]] = {
    # derandomized and small: what CI gates on
    "ci": {"examples": 5, "derandomize": True, "strict": False},
    "default": {"examples": 25, "derandomize": False, "strict": False},
    "thorough": {"examples": 200, "derandomize": False, "strict": False},
    # like default, but SHOULD-level warnings the spec names (checksum mismatch) count as failures
    "strict": {"examples": 25, "derandomize": False, "strict": True},
}

CI_SEED = 20260528

# multiplies every profile's run and check budgets (never a budget given on the command line, never a
# call's own deadline): a slow or busy machine, and the harness's own tests, whose verdicts must not
# depend on how loaded the machine is
BUDGET_SCALE_ENV = "MEMCONFORM_BUDGET_SCALE"


def budget_scale() -> float:
    """The factor of $MEMCONFORM_BUDGET_SCALE (1 when unset); a value that is not a positive number is refused."""
    import os

    text = os.environ.get(BUDGET_SCALE_ENV, "").strip()
    if not text:
        return 1.0
    try:
        scale = float(text)
    except ValueError:
        scale = 0.0
    if not (0 < scale < 1e6):
        raise HarnessError(f"{BUDGET_SCALE_ENV}={text!r} is not a positive number (a factor such as 4)")
    return scale

# (run budget, check budget) in seconds: every call of a run and of a check draws on them
BUDGETS: dict[str, tuple[float, float]] = {
    "ci": (240.0, 60.0),
    "default": (900.0, 180.0),
    "thorough": (3600.0, 600.0),
    "strict": (900.0, 180.0),
}


def _random_seed() -> int:
    import random  # only for a profile that is not derandomized: `validate` (ci) starts without it

    return random.randrange(2**31)


@dataclass
class Profile:
    """How much a run does (ci, default, strict, thorough), its seed, its options and its limits."""

    name: str = "ci"
    examples: int = 5
    derandomize: bool = True
    strict: bool = False
    seed: int = CI_SEED
    options: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    # a level not assessed for want of a memconform test hook decides the exit code (--require-hooks, certify)
    require_hooks: bool = False

    @classmethod
    def named(cls, name: str, seed: int | None = None, options: dict[str, str] | None = None) -> Profile:
        if name not in PROFILES:
            raise HarnessError(f"unknown profile {name!r}; choose one of: {', '.join(PROFILES)}")
        base = PROFILES[name]
        if seed is None:
            seed = CI_SEED if base["derandomize"] else _random_seed()
        run_s, check_s = BUDGETS.get(name, (Limits.run_deadline_s, None))
        scale = budget_scale()
        run_s, check_s = run_s * scale, (check_s * scale if check_s is not None else None)
        return cls(name=name, seed=seed, options=dict(options or {}),
                   limits=Limits(run_deadline_s=run_s, check_deadline_s=check_s), **base)

    def option(self, suite: SuiteSpec, name: str) -> str:
        """The value of `suite`'s option `name` in this run: `--option suite.name=`, `--option name=`, or
        its declared default; an option the suite does not declare is refused (SuiteSpec.option)."""
        spec = suite.option(name)
        value = self.options.get(f"{suite.name}.{name}", self.options.get(name, spec.default))
        if spec.choices and value not in spec.choices:  # no choices: a free value (a path, say)
            raise HarnessError(
                f"option {suite.name}.{name}={value!r} is not one of {', '.join(spec.choices)}"
            )
        return value

    def validate_options(self, suites: Iterable[SuiteSpec] | None = None) -> None:
        """Every value given names an option some suite declares (`suite.name` or a bare `name`) and is one
        of its choices; `suites`: those to check against (None: every installed suite)."""
        tables = [(s.name, s.options) for s in _installed(suites)]
        known = {f"{s}.{o.name}" for s, opts in tables for o in opts} | {o.name for _, opts in tables for o in opts}
        unknown = sorted(k for k in self.options if k not in known)
        if unknown:
            raise HarnessError(f"unknown profile option(s): {', '.join(unknown)}; `memconform list --options` shows them")
        for key, value in self.options.items():
            suite, _, name = key.rpartition(".")
            for s, opts in tables:
                spec = opts.get(name)
                if (not suite or suite == s) and spec is not None and spec.choices and value not in spec.choices:
                    raise HarnessError(f"option {key}={value!r} is not one of {', '.join(spec.choices)}")

    def effective_options(self, suites: Iterable[SuiteSpec] | None = None) -> dict[str, str]:
        """`suite.name` -> the value this run takes, for every option of `suites` (None: every installed suite)."""
        return {
            f"{s.name}.{o.name}": self.options.get(f"{s.name}.{o.name}", self.options.get(o.name, o.default))
            for s in sorted(_installed(suites), key=lambda s: s.name)
            for o in s.options
        }

    def hypothesis_settings(self) -> Any:
        from hypothesis import HealthCheck, Phase, settings

        keep_hypothesis_files_in(None)
        draws_from_the_seed_alone()

        return settings(
            max_examples=self.examples,
            derandomize=self.derandomize,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            # shrinking replays examples against the target (each replay writes fresh unique content, so
            # it is sound); the ci profile skips it to keep gates bounded in time: its failing example is
            # still saved and replayable, just not minimal
            phases=[Phase.explicit, Phase.generate] if self.name == "ci"
            else [Phase.explicit, Phase.generate, Phase.shrink],
            print_blob=True,
        )


_HYPOTHESIS_HOME: list[str] = []


def keep_hypothesis_files_in(folder: Any) -> None:
    """Hypothesis's own files (its Unicode table cache; the example database is off) go under `folder`
    (the report folder) or, with none, a private temporary folder removed at exit: never the working
    directory. The first choice of the process holds; HYPOTHESIS_STORAGE_DIRECTORY, when set, wins."""
    import os

    if _HYPOTHESIS_HOME or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    if folder is None:
        import atexit
        import shutil
        import tempfile

        home = tempfile.mkdtemp(prefix="memconform-hypothesis-")
        atexit.register(shutil.rmtree, home, True)
    else:
        home = os.path.join(str(folder), ".hypothesis")
    set_hypothesis_home_dir(home)
    _HYPOTHESIS_HOME.append(home)


_PINNED: list[bool] = []


def draws_from_the_seed_alone() -> None:
    """Hypothesis (6.131 and later) draws about one value in twenty from constants it finds in the source of
    the "local" modules loaded so far: which those are depends on what the process imported before and on
    whether memconform runs from a checkout or an installed wheel. The same seed then drew other sequences
    (importing emp's format module before an AMPS run turned a mutant's model_sequences from passed to
    failed). memconform's draws come from the profile's seed alone: the local pool is pinned empty, once
    per process, for every hypothesis run in it; the constants hypothesis ships with are still drawn."""
    if _PINNED:
        return
    _PINNED.append(True)
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # a hypothesis without local constants draws from the seed alone already
        return
    if not hasattr(providers, "_get_local_constants"):
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if cache is not None and hasattr(cache, "max_size"):  # a pool cached before the pin is not drawn from
        providers.CONSTANTS_CACHE = type(cache)(cache.max_size)
