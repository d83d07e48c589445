"""How long a run will take, said before it starts (`certify`, whose default profile runs for many minutes).

The checks planned, suite by suite, times the wall seconds one check of that suite took on average under that
profile, measured against the suite's embedded reference on a 2-core machine shared with other work
(MEASURED, with the load it was taken at; the README quotes the same figures). A profile with no figure of its
own is extrapolated from `default` by its examples per property (`thorough`: 200 against 25), and says so; a
suite with no figure (one installed from elsewhere) is counted apart. A target slower than the reference takes
longer; the profile's run budget still bounds the run. An estimate is shown, and orders the start of suites run side by side (run/suite_processes.py); it never
decides a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..core.profile import PROFILES
from ..render.progress import duration

# suite -> profile -> (wall seconds of `memconform run --suite S --profile P` against reference:S, checks run)
MEASURED: dict[str, dict[str, tuple[float, int]]] = {
    "memoryai": {"ci": (20.3, 51), "default": (61.7, 51)},
    "amps": {"ci": (3.5, 29), "default": (6.1, 29)},
    "emp": {"ci": (18.2, 52), "default": (36.6, 52)},
    "memorizz": {"ci": (13.1, 56), "default": (64.1, 56)},
    "omp": {"ci": (55.8, 95), "default": (88.9, 95)},
}
MEASURED_ON = "2 cores shared with other work, load average 21-30"
BASE_PROFILE = "default"  # what a profile with no figure of its own is extrapolated from


@dataclass(frozen=True)
class Estimate:
    seconds: float  # the checks with a figure; 0 when none has one
    checks: int  # every check planned
    extrapolated: bool  # some figure comes from BASE_PROFILE scaled by examples per property
    unknown: tuple[str, ...] = ()  # suites planned with no figure at all

    def text(self) -> str:
        """'about 2m10s for 183 checks (...)', or what is not known."""
        measured = f"measured against the embedded references on {MEASURED_ON}"
        how = (f"extrapolated: the {BASE_PROFILE} profile's time {measured}, times the examples per property"
               if self.extrapolated else measured)
        known = (f"about {duration(self.seconds)} for {self.checks} checks ({how}; a slower target takes longer)"
                 if self.seconds else f"{self.checks} checks, no measured time")
        return known + (f"; no figure for {', '.join(self.unknown)}" if self.unknown and self.seconds else "")


def per_check_s(suite: str, profile: str) -> tuple[float, bool] | None:
    """(seconds per check, extrapolated?) for one suite under one profile, or None without a figure."""
    figures = MEASURED.get(suite, {})
    if profile in figures:
        seconds, checks = figures[profile]
        return seconds / checks, False
    if BASE_PROFILE not in figures or profile not in PROFILES:
        return None
    seconds, checks = figures[BASE_PROFILE]
    scale = PROFILES[profile]["examples"] / PROFILES[BASE_PROFILE]["examples"]
    return seconds / checks * scale, True


def estimate(planned: Mapping[str, int], profile: str) -> Estimate:
    """`planned`: suite -> the checks the run will start."""
    seconds, extrapolated, unknown = 0.0, False, []
    for suite, checks in planned.items():
        found = per_check_s(suite, profile)
        if found is None:
            unknown.append(suite)
            continue
        seconds += found[0] * checks
        extrapolated = extrapolated or found[1]
    return Estimate(seconds, sum(planned.values()), extrapolated, tuple(unknown))


def suite_seconds(suite: str, profile: str) -> float:
    """A whole suite's measured (or extrapolated) seconds under `profile`; 0 without a figure."""
    figure = per_check_s(suite, profile)
    checks = MEASURED.get(suite, {}).get(profile, MEASURED.get(suite, {}).get(BASE_PROFILE, (0.0, 0)))[1]
    return figure[0] * checks if figure is not None else 0.0
