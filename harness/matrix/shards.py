"""Read shard results back: shard folders (shard.json + report/) or bare report.jsonl files a vendor published.

Reports are combined only when they align: the same harness version, suite version, profile, the
same seeds for every implementation of a suite, and the same readings (options) apart from the ones an
implementation's own entry sets. Anything else is refused with a named error, never averaged away.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.report import Report, ReportError
from ..core.results import HarnessError
from .run import SHARD_FILE
from .safe_read import MAX_REPORT_BYTES, UnsafeFile, read_bounded


class MisalignedReports(HarnessError):
    """Reports that cannot stand side by side in one matrix."""


class HarnessVersionMismatch(MisalignedReports):
    pass


class SuiteVersionMismatch(MisalignedReports):
    pass


class ProfileMismatch(MisalignedReports):
    pass


class SeedMismatch(MisalignedReports):
    pass


class OptionsMismatch(MisalignedReports):
    pass


class DuplicateShard(MisalignedReports):
    pass


@dataclass
class ShardResult:
    implementation: str
    suite: str
    status: str  # ran, skipped, errored
    source: str
    entry: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    reason: str = ""
    report: Report | None = None
    suite_version: str | None = None
    report_dir: Path | None = None  # where the run's saved sequences are (sequences/<check>-<run>.json)

    @property
    def spec_title(self) -> str | None:
        return self.report.results[0]["spec"] if self.report and self.report.results else None

    def own_options(self) -> set[str]:
        return {str(o).split("=", 1)[0] for o in self.entry.get("options", [])}


def find_inputs(paths: list[Path]) -> list[tuple[Path, Path]]:
    """Shard folders and bare report files under the given paths, in a stable order, each with the folder it
    was found in (nothing it reads may lead outside that folder)."""
    found: list[tuple[Path, Path]] = []
    for path in paths:
        if path.is_file() or (path.exists() and not path.is_dir()):
            found.append((path, path.parent))
        elif (path / SHARD_FILE).exists() or (path / "report.jsonl").exists():
            found.append((path, path))
        elif path.is_dir():
            inner = sorted({p.parent for p in path.rglob(SHARD_FILE)})
            bare = sorted(p for p in path.rglob("report.jsonl")
                          if not any(p.is_relative_to(f) for f in inner))
            found += [(p, path) for p in inner + bare]
        else:
            raise HarnessError(f"{path}: no such file or folder")
    if not found:
        raise HarnessError(f"no shard folders or report.jsonl files under {', '.join(map(str, paths))}")
    return found


def read_report(path: Path, root: Path) -> Report:
    """A report read as a handed file: regular, inside `root`, at most MAX_REPORT_BYTES (safe_read)."""
    if not path.exists() and not path.is_symlink():
        raise ReportError(f"cannot read {path}: no such file")
    data = read_bounded(path, root, MAX_REPORT_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportError(f"cannot read {path}: {exc}") from None
    lines = text.split("\n")  # on "\n" only: U+2028 and friends may sit inside JSON strings
    if lines and lines[-1] == "":
        lines.pop()
    report = Report.from_lines(lines, source=str(path))
    report.check_chain(str(path))  # a shard report changed after its run wrote it is named, never combined
    return report


def read_input(path: Path, root: Path | None = None) -> ShardResult:
    root = root if root is not None else (path if path.is_dir() else path.parent)
    if path.is_dir() and (path / SHARD_FILE).exists():
        return _read_shard_folder(path, root)
    report_path = path / "report.jsonl" if path.is_dir() else path
    report = read_report(report_path, root)
    owner = report_path.parent.parent if report_path.parent.name == "report" else report_path.parent
    suites = report.header["suites"]
    if len(suites) != 1:
        raise HarnessError(f"{report_path}: a matrix report covers one suite, this one {len(suites)}: {suites}")
    return ShardResult(implementation=owner.name, suite=suites[0], status="ran", source=str(report_path),
                       seed=report.header["seed"], report=report, report_dir=report_path.parent)


MAX_SHARD_FILE_BYTES = 1 << 20  # a shard.json from another machine is data to check, not to trust
_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")


def _read_meta(path: Path, root: Path) -> dict[str, Any]:
    raw = read_bounded(path, root, MAX_SHARD_FILE_BYTES)
    try:
        meta = json.loads(raw)
    except ValueError as exc:
        raise HarnessError(f"{path}: cannot be read as JSON: {exc}") from None
    problems = [] if isinstance(meta, dict) else ["not an object"]
    if not problems:
        if not isinstance(meta.get("implementation"), str) or not _ID.match(meta["implementation"]):
            problems.append("implementation is not an id")
        if not isinstance(meta.get("suite"), str) or not meta["suite"].isidentifier():
            problems.append("suite is not a name")
        if meta.get("status") not in ("ran", "skipped", "errored"):
            problems.append("status is not ran, skipped or errored")
        if not isinstance(meta.get("seed"), int | None) or isinstance(meta.get("seed"), bool):
            problems.append("seed is not an integer")
        if not isinstance(meta.get("implementation_entry", {}), dict):
            problems.append("implementation_entry is not an object")
    if problems:
        raise HarnessError(f"{path}: not a shard record: {'; '.join(problems)}")
    return dict(meta)


def _read_shard_folder(folder: Path, root: Path) -> ShardResult:
    meta = _read_meta(folder / SHARD_FILE, root)
    report = None
    if meta.get("status") == "ran":
        try:
            report = read_report(folder / "report" / "report.jsonl", root)
        except UnsafeFile:
            raise  # refused with its one clear error, never folded into an errored shard
        except ReportError as exc:
            meta.update(status="errored", reason=f"its report cannot be read: {exc}")
    return ShardResult(implementation=str(meta["implementation"]), suite=str(meta["suite"]), status=str(meta["status"]),
                       source=str(folder), entry=dict(meta.get("implementation_entry") or {}), seed=meta.get("seed"),
                       reason=str(meta.get("reason") or ""), report=report, suite_version=meta.get("suite_version"),
                       report_dir=folder / "report")


def check_aligned(shards: list[ShardResult]) -> None:
    """Raise the named MisalignedReports subclass for the first disagreement found."""
    ran = [s for s in shards if s.report is not None]
    _same(ran, "harness version", lambda s: s.report.header["harness_version"] if s.report else None,
          HarnessVersionMismatch)
    _same(ran, "profile", lambda s: s.report.header["profile"] if s.report else None, ProfileMismatch)
    for suite in sorted({s.suite for s in ran}):
        of_suite = [s for s in ran if s.suite == suite]
        _same(of_suite, f"{suite} suite version", lambda s: s.spec_title, SuiteVersionMismatch)
        _same([s for s in of_suite if s.suite_version], f"{suite} suite version", lambda s: s.suite_version,
              SuiteVersionMismatch)
        _check_duplicates(of_suite)
        _check_seeds(of_suite, suite)
        _check_options(of_suite, suite)


def _same(shards: list[ShardResult], what: str, value: Any, error: type[MisalignedReports]) -> None:
    seen: dict[Any, str] = {}
    for s in shards:
        seen.setdefault(value(s), s.source)
    if len(seen) > 1:
        listed = "; ".join(f"{v!r} in {src}" for v, src in seen.items())
        raise error(f"{error.__name__}: the reports do not share one {what}: {listed}")


def _check_duplicates(shards: list[ShardResult]) -> None:
    seen: dict[tuple[str, int | None], str] = {}
    for s in shards:
        key = (s.implementation, s.seed)
        if key in seen:
            raise DuplicateShard(f"DuplicateShard: {s.implementation} {s.suite} seed {s.seed} twice: "
                                 f"{seen[key]} and {s.source}")
        seen[key] = s.source


def _check_seeds(shards: list[ShardResult], suite: str) -> None:
    by_impl: dict[str, set[int | None]] = {}
    for s in shards:
        by_impl.setdefault(s.implementation, set()).add(s.seed)
    distinct = {frozenset(v) for v in by_impl.values()}
    if len(distinct) > 1:
        listed = "; ".join(f"{i}: {sorted(v, key=str)}" for i, v in sorted(by_impl.items()))
        raise SeedMismatch(f"SeedMismatch: the {suite} reports were run with different seeds: {listed}")


def _check_options(shards: list[ShardResult], suite: str) -> None:
    own = set().union(*(s.own_options() for s in shards)) if shards else set()
    first: tuple[dict[str, str], str] | None = None
    for s in shards:
        assert s.report is not None
        options = {k: v for k, v in s.report.header["options"].items() if k not in s.own_options()}
        if first is None:
            first = (options, s.source)
            continue
        shared = set(options) | set(first[0])
        differ = sorted(k for k in shared if k not in own and options.get(k) != first[0].get(k))
        if differ:
            k = differ[0]
            raise OptionsMismatch(f"OptionsMismatch: {suite} option {k} is {first[0].get(k)!r} in {first[1]} but "
                                  f"{options.get(k)!r} in {s.source}")
