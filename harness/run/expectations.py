"""Known failures and flaky checks (`memconform run --expect FILE`), for CI gates on real targets.

The report stays the whole truth: its results, level verdicts and footer exit code are never
changed. The expectations decide only the process exit code:
- a check listed in `known_failures` may fail (outcome failed) without failing the run;
- a listed check that now passes, or errors instead of failing, fails the run (remove or move it);
- an entry that names no check of the suites run, or a check listed twice, fails the run;
- checks in `flaky` do not decide the exit code, whatever their outcome;
- a run that fails prints the entries to paste for its unexpected failures.
Schema: harness/schemas/expectations.schema.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.results import HarnessError, Outcome, Result
from ..core.verdicts import NOT_ASSESSED, NOT_CONFORMANT, LevelVerdict

MAX_FILE_BYTES = 4 * 1024 * 1024


@lru_cache(maxsize=1)
def expectations_schema() -> dict[str, Any]:
    return json.loads(resources.files("memconform").joinpath("schemas/expectations.schema.json").read_text("utf-8"))


@dataclass
class Expectations:
    known: dict[str, str] = field(default_factory=dict)  # check id -> reason
    flaky: dict[str, str] = field(default_factory=dict)
    duplicates: list[str] = field(default_factory=list)
    source: str = "expectations"

    @classmethod
    def from_data(cls, data: Any, source: str = "expectations") -> Expectations:
        import jsonschema

        try:
            jsonschema.Draft202012Validator(expectations_schema()).validate(data)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "(top)"
            raise HarnessError(f"{source}: not an expectations file at {where}: {exc.message}") from None
        out = cls(source=source)
        seen: set[str] = set()
        for key, into in (("known_failures", out.known), ("flaky", out.flaky)):
            for entry in data.get(key, []):
                check = entry["check"]
                if check in seen:
                    out.duplicates.append(check)
                seen.add(check)
                into[check] = entry["reason"]
        return out

    @classmethod
    def from_path(cls, path: Path) -> Expectations:
        try:
            raw = path.read_bytes()[: MAX_FILE_BYTES + 1]
        except OSError as exc:
            raise HarnessError(f"cannot read expectations file {path}: {exc}") from None
        if len(raw) > MAX_FILE_BYTES:
            raise HarnessError(f"{path}: expectations file over {MAX_FILE_BYTES} bytes")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise HarnessError(f"{path}: not JSON: {exc}") from None
        return cls.from_data(data, str(path))


@dataclass
class Verdict:
    exit_code: int
    problems: list[str]  # each fails the run
    excused: list[str]  # known failures and flaky checks that did not decide the exit code
    paste: list[dict[str, str]]  # entries for the unexpected failures, ready to paste


def _short(check_id: str) -> str:
    return check_id.split(".", 1)[-1]


def _level_excused(v: LevelVerdict, excused: set[str]) -> bool:
    """A gating level made so only by excused checks (failed ones, or errored flaky ones)."""
    shorts = {_short(c) for c in excused}
    if v.status == NOT_CONFORMANT:
        # its own failures all excused, and a prerequisite level gates (or not) on its own verdict
        return bool(v.failed or v.why) and set(v.failed) <= shorts and all(w.startswith("requires ") for w in v.why)
    if v.status == NOT_ASSESSED:
        return bool(v.why) and all(w.split(" ", 1)[0] in shorts and " errored:" in w for w in v.why)
    return False


def apply(exp: Expectations, results: list[Result], levels: list[LevelVerdict], known_ids: set[str],
          exit_code: int) -> Verdict:
    """The run's exit code under the expectations. `known_ids`: every check id of the suites run."""
    problems = [f"{c}: listed twice in {exp.source}" for c in dict.fromkeys(exp.duplicates)]
    problems += [f"{c}: matches no check of the suites run (listed in {exp.source})"
                 for c in [*exp.known, *exp.flaky] if c not in known_ids]
    by_id = {r.check_id: r for r in results}
    excused: set[str] = set()
    for check in exp.known:
        r = by_id.get(check)
        if r is None or r.outcome is Outcome.SKIPPED:
            continue  # not run, or not observable here: neither a pass nor a failure
        if r.outcome is Outcome.PASSED:
            problems.append(f"{check}: listed as a known failure but now passes: remove it from {exp.source}")
        elif r.outcome is Outcome.ERRORED:
            problems.append(f"{check}: listed as a known failure but errored ({r.reason[:160]}); "
                            "a known failure excuses a failure only (list it under flaky if it is one)")
        else:
            excused.add(check)
    excused |= {c for c in exp.flaky if c in by_id}
    unexpected = [r for r in results if r.blocking and r.check_id not in excused]
    gating = [v for v in levels if v.gating and not _level_excused(v, excused)]
    if exit_code == 2:
        code = 2
    elif problems or unexpected or gating:
        code = 1
    else:
        code = 0
    paste = [{"check": r.check_id, "reason": (r.failures[0].title if r.failures else r.reason)[:200] or r.outcome.value}
             for r in unexpected if r.outcome is Outcome.FAILED]
    return Verdict(code, problems, sorted(excused), paste)


def print_verdict(v: Verdict, say: Any) -> None:
    for line in v.problems:
        say(f"expectations: {line}")
    if v.excused:
        say(f"expectations: {len(v.excused)} known or flaky check(s) did not decide the exit code: {', '.join(v.excused)}")
    if v.paste:
        say("expectations: unexpected failures; entries to paste under \"known_failures\" if they are known:")
        say(",\n".join(json.dumps(e, ensure_ascii=False) for e in v.paste))
    say(f"expectations: exit code {v.exit_code}")
