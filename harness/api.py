"""memconform as a library: run suites, validate a document, translate between formats, verify a
certification bundle, each returning typed, frozen results (docs/api.md).

    from memconform import api

    outcome = api.run(["memoryai"], "http://127.0.0.1:8765", profile="ci")
    if not outcome.conformant:
        for result in outcome.failed:
            print(result.check_id, result.failures[0].title)

These are the command line's own paths (`memconform run`, `validate`, `translate`, `verify`), with the same
verdicts and the same report folder; a usage or harness problem raises `api.Error` (the command line's exit 2).
Everything here is stable within a minor version; anything else in the package may move.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .core.results import HarnessError
from .core.results import Result as _Result

__all__ = ["CheckResult", "Error", "Failure", "LevelVerdict", "RunResult", "TranslationResult", "ValidationResult",
           "VerificationResult", "run", "translate", "validate", "verify"]

Error = HarnessError  # a usage or harness problem: what exits 2 on the command line
Outcome = Literal["passed", "failed", "errored", "skipped"]


@dataclass(frozen=True)
class Failure:
    """One broken rule: what was received, what was expected, where (a JSON path or a request)."""

    title: str
    path: str
    received: Any
    expected: Any
    detail: str = ""


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome. `warning`: a failed SHOULD/MAY rule no level requires (not a failure of the run)."""

    check_id: str
    suite: str
    section: str
    keyword: str
    level: str
    sentence: str
    outcome: Outcome
    reason: str
    failures: tuple[Failure, ...]
    warning: bool = False
    not_applicable: bool = False
    reproduce: str = ""

    @classmethod
    def _from(cls, r: _Result) -> CheckResult:
        j = r.to_json()
        return cls(check_id=j["check_id"], suite=j["suite"], section=j["section"], keyword=j["keyword"], level=j["level"],
                   sentence=j["sentence"], outcome=j["outcome"], reason=j.get("reason") or "",
                   failures=tuple(Failure(f["title"], f["path"], f.get("received"), f.get("expected"), f.get("detail") or "")
                                  for f in j.get("failures") or []),
                   warning=bool(j.get("warning")), not_applicable=bool(j.get("not_applicable")),
                   reproduce=j.get("reproduce") or "")


@dataclass(frozen=True)
class LevelVerdict:
    """A conformance level's verdict: `status` is conformant, not conformant, not assessed, not applicable or not
    claimed; `line` says it in words, with why."""

    suite: str
    level: str
    title: str
    status: str
    line: str
    claimed: bool | None


@dataclass(frozen=True)
class RunResult:
    """A run: the exit code the command line would give (0 conformant, 1 not, 2 no check ran), every check's
    result, every level's verdict, and the report folder written (None when none was asked for)."""

    exit_code: int
    results: tuple[CheckResult, ...]
    levels: tuple[LevelVerdict, ...]
    report_dir: Path | None

    @property
    def conformant(self) -> bool:
        return self.exit_code == 0

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        """Failed checks, warnings left out."""
        return tuple(r for r in self.results if r.outcome == "failed" and not r.warning)

    @property
    def warnings(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.outcome == "failed" and r.warning)

    @property
    def errored(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.outcome == "errored")


@dataclass(frozen=True)
class ValidationResult:
    """One document judged: `verdict` is valid, invalid or not assessed (a check errored)."""

    path: Path
    format: str
    named_by: str
    verdict: Literal["valid", "invalid", "not assessed"]
    results: tuple[CheckResult, ...]

    @property
    def valid(self) -> bool:
        return self.verdict == "valid"

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.outcome == "failed" and not r.warning)


@dataclass(frozen=True)
class TranslationResult:
    """A document in another format, or why not (`refused`), with the loss ledger as JSON (what was kept,
    carried, lost and invented, record by record: schemas/ledger.schema.json)."""

    source: str
    target: str
    output: Any
    refused: str | None
    ledger: Mapping[str, Any]
    summary: str

    @property
    def translated(self) -> bool:
        return self.refused is None and self.output is not None


@dataclass(frozen=True)
class VerificationResult:
    """A certification bundle checked: signature, subject digest, bundle digest and every level verdict recomputed.
    `signer` is the key's fingerprint (SHA256:...); worth what your trust in that fingerprint is worth."""

    verified: bool
    signer: str
    problems: tuple[str, ...]
    profile: str = ""
    seed: int | None = None
    claims: tuple[Mapping[str, Any], ...] = ()


def run(suites: Sequence[str], target: str | None = None, *, profile: str = "ci", seed: int | None = None,
        options: Mapping[str, str] | None = None, checks: Sequence[str] | None = None, api_key: str | None = None,
        report_dir: str | Path | None = None) -> RunResult:
    """Run the named suites against `target` (a target string, as `--target` takes; None: each suite's embedded
    reference). `report_dir`: write the report folder there (report.jsonl, junit.xml, summary.md, report.html);
    None writes none."""
    from .core.profile import Profile
    from .core.suite import get_suite
    from .run.session import execute_run

    chosen = Profile.named(profile, seed=seed, options=dict(options or {}))
    chosen.validate_options([get_suite(name) for name in suites])  # the suites run, as execute_run does
    outcome = execute_run(list(suites), target, chosen, Path(report_dir) if report_dir is not None else None, api_key,
                          list(checks) if checks else None, command="memconform.api.run")
    levels = tuple(LevelVerdict(suite, v.key, v.title, v.status, v.line(), v.claimed)
                   for suite, verdicts in outcome.levels.items() for v in verdicts)
    return RunResult(outcome.exit_code, tuple(CheckResult._from(r) for r in outcome.results), levels, outcome.report_dir)


def validate(path: str | Path, *, format: str | None = None, profile: str = "ci",
             options: Mapping[str, str] | None = None, max_bytes: int | None = None) -> ValidationResult:
    """Judge one document file (its format named by `format`, its content or its name), read once and bounded."""
    from .core.profile import Profile
    from .core.results import Outcome as _Outcome
    from .run.validate import MAX_DOCUMENT_BYTES, validate_file

    chosen = Profile.named(profile, options=dict(options or {}))
    chosen.validate_options()
    suite, how, results = validate_file(Path(path), format, chosen, None,
                                        MAX_DOCUMENT_BYTES if max_bytes is None else max_bytes)
    invalid = any(r.blocking and r.outcome is _Outcome.FAILED for r in results)
    errored = any(r.outcome is _Outcome.ERRORED for r in results)
    verdict: Literal["valid", "invalid", "not assessed"] = "invalid" if invalid else "not assessed" if errored else "valid"
    return ValidationResult(Path(path), suite.name, how, verdict, tuple(CheckResult._from(r) for r in results))


def translate(document: Any, *, to: str, source: str | None = None, check: bool = True) -> TranslationResult:
    """Translate a parsed document (EMP: the memory.jsonl text) into format `to`. `source` None: detected.
    `check`: refuse a source, or an output, that its own format's checks reject (the default)."""
    from .portability.translate import detect
    from .portability.translate import translate as _translate

    named = source or detect(document)
    if named is None:
        raise Error("the document's format cannot be named: give source=")
    done = _translate(document, named, to, validate=check)
    return TranslationResult(done.source, done.target, done.output, done.refused, done.ledger.to_json(),
                             done.ledger.summary())


def verify(bundle: str | Path, *, key: str | Path | None = None) -> VerificationResult:
    """Check a certification bundle (`memconform certify`'s file); `key`: accept only a signature by this public
    key (PEM). An unsigned bundle is never verified."""
    from .evidence import attest
    from .evidence.certify import MAX_BUNDLE_BYTES, verify_signed

    path = Path(bundle)
    try:
        raw = path.read_bytes()[: MAX_BUNDLE_BYTES + 1]
        doc = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise Error(f"cannot read bundle {path}: {exc}") from None
    trusted = None
    if key is not None:
        try:
            trusted = attest.load_public(Path(key).read_bytes(), str(key))
        except OSError as exc:
            raise Error(f"cannot read the public key {key}: {exc}") from None
    if not attest.is_envelope(doc):
        return VerificationResult(False, "", ("not signed (no DSSE envelope): a digest alone proves only that the "
                                              "file is intact, not who vouches for it",))
    try:
        found, signer, problems = verify_signed(doc, trusted)
    except HarnessError as exc:  # an envelope whose payload is not even a Statement: not verified, and why
        return VerificationResult(False, "", (str(exc),))
    if found is None:
        return VerificationResult(False, signer, tuple(problems) or ("the bundle could not be read",))
    return VerificationResult(not problems, signer, tuple(problems), str(found.get("profile", "")), found.get("seed"),
                              tuple(found.get("claims") or ()))
