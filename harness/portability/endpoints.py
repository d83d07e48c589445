"""Each format's export and import through a live target, by the operations its suite declares (its Portable's
`export` and `import_`, written beside the suite's own client): the driver names no operation itself."""

from __future__ import annotations

from typing import Any

from memconform.core.profile import Profile
from memconform.core.runner import Context  # the port builds and owns its own contexts
from memconform.core.suite import get_suite
from memconform.targets import open_target

from .formats import Endpoint, portable


def open_endpoint(spec: str, fmt: str, api_key: str | None = None, profile: Profile | None = None) -> Endpoint:
    """One target, opened as `run` opens it: its routes, the profile's limits and options (a suite's credentials
    file, say: --option SUITE.credentials=FILE), and the API key it is called with."""
    declared = portable(fmt)
    suite = get_suite(fmt)
    profile = profile or Profile.named("ci")
    target = open_target(spec, suite.routes, profile.limits, api_key)
    try:
        target.preflight()
    except BaseException:
        target.close()
        raise
    ctx = Context(suite=suite, target=target, profile=profile)
    ctx.add_secret(api_key)
    end = Endpoint(fmt, spec, ctx)
    if declared.prepare is not None:
        declared.prepare(end)
    return end


def export(end: Endpoint) -> Any:
    """The target's export: a document of its format (a text format: the text)."""
    return portable(end.fmt).export(end)


def import_(end: Endpoint, doc: Any) -> None:
    """Give the target a document of its format; a refusal is the target's answer, raised as TargetError."""
    portable(end.fmt).import_(end, doc)

