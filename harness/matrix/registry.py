"""The implementations registry (`implementations.toml`, schema `schemas/implementations.schema.json`).

One `[[implementation]]` table per implementation: how to reach it (a target string), how to start and
stop it, the suites it speaks and the levels it claims. An entry whose built copy or executable is
absent here is skipped with the reason, never run against something else.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.results import HarnessError

DEFAULT_FILE = "implementations.toml"
_PLACEHOLDER = re.compile(r"\{(port|home|workdir|python|node|root|key)\}")


@dataclass(frozen=True)
class Slot:
    """What one shard gives its implementation: a loopback port, a private folder, a fresh API key."""

    workdir: Path
    port: int | None = None
    key: str | None = None


class RegistryError(HarnessError):
    """An implementations file that cannot be read, or breaks its schema."""


@lru_cache(maxsize=1)
def registry_schema() -> dict[str, Any]:
    text = resources.files("memconform").joinpath("schemas/implementations.schema.json").read_text("utf-8")
    return dict(json.loads(text))


@dataclass(frozen=True)
class Implementation:
    id: str
    name: str
    version: str
    source: str
    suites: tuple[str, ...]
    target: str
    claims: dict[str, list[str]]
    license: str
    ci: bool
    issues: str = ""
    start: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    health: str | None = None
    home_env: str | None = None
    requires: tuple[str, ...] = ()
    api_key_from: str | None = None
    independent_of: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    notes: str = ""
    root: str = "."  # the folder of the registry file ({root})

    @classmethod
    def from_entry(cls, entry: dict[str, Any], root: Path) -> Implementation:
        tuples: dict[str, Any] = {k: tuple(entry[k]) for k in ("suites", "start", "requires", "independent_of", "options") if k in entry}
        fields: dict[str, Any] = {**entry, **tuples, "root": str(root)}
        return cls(**fields)

    def to_json(self) -> dict[str, Any]:
        """The entry as it was written (what a shard records beside its report)."""
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if key == "root" or value in ((), {}, None, ""):
                continue
            out[key] = list(value) if isinstance(value, tuple) else value
        return out

    def option_names(self) -> set[str]:
        return {o.split("=", 1)[0] for o in self.options}

    def home(self) -> str | None:
        return os.environ.get(self.home_env) if self.home_env else None

    def skip_reason(self) -> str | None:
        """Why this entry cannot run here (None: it can)."""
        if self.home_env:
            home = self.home()
            if not home:
                return f"{self.id}: {self.home_env} is not set (it names where a built copy lives)"
            if not Path(home).is_dir():
                return f"{self.id}: {self.home_env}={home} is not a folder"
        missing = [exe for exe in self.requires if find_executable(exe) is None]
        if missing:
            return f"{self.id}: not installed here ({', '.join(missing)} not found)"
        return None

    def expand(self, text: str, slot: Slot) -> str:
        """`text` with {port} {home} {workdir} {python} {node} {root} {key} filled in; other braces kept (cmd:'s {op})."""
        values = {"port": str(slot.port) if slot.port is not None else "", "home": self.home() or "",
                  "workdir": str(slot.workdir), "python": sys.executable, "root": self.root, "key": slot.key or "",
                  "node": os.environ.get("MEMCONFORM_NODE") or "node"}
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)

    def _uses(self, placeholder: str) -> bool:
        texts = [self.target, *self.start, *self.env.values(), *self.options]
        return any(placeholder in t for t in texts)

    def needs_port(self) -> bool:
        return self._uses("{port}")

    def needs_key(self) -> bool:
        """A fresh API key per shard, handed to the implementation ({key}) and sent by the run (redacted)."""
        return self._uses("{key}")


def find_executable(name: str) -> str | None:
    """On PATH, or beside the interpreter (a virtual environment not activated)."""
    return shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))


def load_registry(path: Path) -> list[Implementation]:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise RegistryError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"{path} is not TOML: {exc}") from None
    return registry_from_data(data, path.resolve().parent, str(path))


def registry_from_data(data: dict[str, Any], root: Path, source: str = "implementations") -> list[Implementation]:
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(registry_schema()).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(top)"
        raise RegistryError(f"{source}: {where}: {first.message}")
    entries = [Implementation.from_entry(e, root) for e in data["implementation"]]
    _check_ids(entries, source)
    return entries


def _check_ids(entries: list[Implementation], source: str) -> None:
    seen: set[str] = set()
    for e in entries:
        if e.id in seen:
            raise RegistryError(f"{source}: implementation id {e.id!r} appears twice")
        seen.add(e.id)
    for e in entries:
        unknown = [i for i in e.independent_of if i not in seen]
        if unknown:
            raise RegistryError(f"{source}: {e.id}: independent_of names unknown ids {unknown}")
        unclaimed = [s for s in e.claims if s not in e.suites]
        if unclaimed:
            raise RegistryError(f"{source}: {e.id}: claims levels of suites it does not list: {unclaimed}")


def by_id(entries: list[Implementation]) -> dict[str, Implementation]:
    return {e.id: e for e in entries}
