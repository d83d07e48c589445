"""What the `memconform` subcommands share: the profile built from the command line and the installed
suites (reading a handed document is run/validate.py's)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..core.profile import Profile
from ..core.results import HarnessError
from ..core.suite import SuiteSpec, all_suites
from ..run.validate import MAX_DOCUMENT_BYTES as MAX_DOCUMENT_BYTES
from ..run.validate import read_document as read_document

if TYPE_CHECKING:
    import argparse


def installed() -> dict[str, SuiteSpec]:
    """Every suite installed (entry points `memconform.suites`), by name."""
    return {s.name: s for s in all_suites()}


def parse_options(pairs: list[str]) -> dict[str, str]:
    """`--option NAME=VALUE` pairs as a dict."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise HarnessError(f"--option takes NAME=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def profile_from_args(args: argparse.Namespace) -> Profile:
    """The named profile with the seed, options and deadlines given on the command line."""
    profile = Profile.named(args.profile, seed=getattr(args, "seed", None), options=parse_options(args.option))
    profile.require_hooks = bool(getattr(args, "require_hooks", False))
    bounds = {"run_deadline_s": getattr(args, "run_deadline", None), "call_deadline_s": getattr(args, "call_deadline", None),
              "check_deadline_s": getattr(args, "check_deadline", None)}
    if any(v is not None for v in bounds.values()):
        profile.limits = dataclasses.replace(profile.limits, **{k: v for k, v in bounds.items() if v is not None})
    return profile
