"""The target kinds, by the prefix of the string that names one (TARGET_KINDS), and open_target, which picks
one: every kind is opened lazily, so naming a target imports only its own module."""


from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeGuard

from ..core.profile import Limits
from ..core.results import HarnessError
from .base import Route, Target

if TYPE_CHECKING:  # a type only: importing httpx at start-up is what is_http avoids
    from .http import HttpTarget


def is_http(target: object) -> TypeGuard[HttpTarget]:
    """Is this an HttpTarget? Asked without importing httpx (which imports its own CLI, rich and pygments)."""
    return getattr(target, "kind", None) == "http"



def _open_http(spec: str, routes: dict[str, Route], limits: Limits, api_key: str | None) -> Target:
    from .http import HttpTarget

    return HttpTarget(spec, routes, limits, api_key)


def _open_cmd(spec: str, routes: dict[str, Route], limits: Limits, api_key: str | None) -> Target:
    from .command import CommandTarget

    return CommandTarget(spec[len("cmd:"):], limits, api_key)


def _open_cmd_lines(spec: str, routes: dict[str, Route], limits: Limits, api_key: str | None) -> Target:
    from .lines import LineCommandTarget

    return LineCommandTarget(spec[len("cmd-lines:"):], limits, api_key)


def _open_dir(spec: str, routes: dict[str, Route], limits: Limits, api_key: str | None) -> Target:
    from .dropdir import DropDirTarget

    return DropDirTarget(spec[len("dir:"):], limits)


def _open_python(spec: str, routes: dict[str, Route], limits: Limits, api_key: str | None) -> Target:
    from .pyobj import PythonTarget

    return PythonTarget.from_path(spec[len("python:"):], limits=limits)


def _open_reference(spec: str, routes: dict[str, Route], limits: Limits, api_key: str | None) -> Target:
    from ..core.suite import all_suites, get_suite
    from .pyobj import PythonTarget

    name = spec[len("reference:"):]
    factory = get_suite(name).reference
    if factory is None:
        known = ", ".join(s.name for s in all_suites() if s.reference is not None)
        raise HarnessError(f"suite {name!r} has no embedded reference; suites with one: {known}")
    impl = factory()  # one fresh implementation per run
    return impl if isinstance(impl, Target) else PythonTarget(impl, description=spec, limits=limits)


TARGET_KINDS: dict[str, Callable[[str, dict[str, Route], Limits, str | None], Target]] = {
    "http://": _open_http,
    "https://": _open_http,
    "cmd:": _open_cmd,
    "cmd-lines:": _open_cmd_lines,
    "dir:": _open_dir,
    "python:": _open_python,
    "reference:": _open_reference,
}


def open_target(
    spec: str, routes: dict[str, Route] | None = None, limits: Limits | None = None, api_key: str | None = None
) -> Target:
    for prefix, opener in TARGET_KINDS.items():
        if spec.startswith(prefix):
            return opener(spec, routes or {}, limits or Limits(), api_key)
    raise HarnessError(
        f"cannot tell the kind of target {spec!r}: it must start with one of {', '.join(TARGET_KINDS)}"
    )
