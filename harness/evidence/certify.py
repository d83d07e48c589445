"""Certification evidence: `memconform certify` writes a bundle, `memconform verify` checks one.

A bundle (one JSON file) holds the whole report (its lines, verbatim), the harness version, the spec
version of each suite, the profile, seed and options, the target as declared by whoever ran it, the
level verdicts claimed, and a SHA-256 digest over all of it (canonical JSON). No expectations file:
a certification run is judged on every check.

`verify` recomputes the digest, reads the report back (a truncated report is refused), checks the
bundle's fields against the report's header, and recomputes every level verdict from the results
under the verdict policy (core/verdicts.level_verdicts), taking each check's keyword, level and
clause membership from the installed suite, not from the bundle. The digest shows the bundle is
intact; it is not a signature (anyone can recompute it). `certify --key` therefore wraps the bundle
in an in-toto Statement inside a DSSE envelope signed with the vendor's Ed25519 key (attest.py), and
`verify` checks that signature first, against the key the verifier names (`--key`, or `--fingerprint`
for the key the bundle carries): a signature checked only against the key inside the bundle says who
signed, not that it is who the verifier trusts, so it is "signature valid, signer unverified", exit 1.

certify signs what the run kept in memory (the report lines as the run wrote them), never what is on
disk: a target that rewrote the run's folder changes nothing that is signed, and the run, seeing its
folder changed, ends "tampered with" (exit 2) before anything is certified (run/session.py). Every
JSON text of a bundle (envelope, Statement, report lines) is read refusing a member named twice, and
everything printed from a bundle is shown with its control characters visible.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.registry import REGISTRY
from ..core.report import Report, ReportError
from ..core.results import Failure, HarnessError, Outcome, Result
from ..core.runner import in_clause
from ..core.suite import get_suite
from ..core.verdicts import exit_code, level_verdicts

BUNDLE_VERSION = 1
MAX_BUNDLE_BYTES = 256 * 1024 * 1024
# C0, DEL, C1, and the line and bidirectional-override characters: never sent to the terminal as they are
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


def visible(text: Any) -> str:
    """Text from a bundle as the terminal may show it: every control character as \\xNN or \\uNNNN."""
    return _INVISIBLE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                          str(text))


def canonical(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")


def digest(bundle: dict[str, Any]) -> str:
    body = {k: v for k, v in bundle.items() if k != "digest"}
    return hashlib.sha256(canonical(body)).hexdigest()


def build_bundle(report_lines: list[str], target: str, declared: dict[str, str],
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
    report = Report.from_lines(report_lines, source="certification report")  # complete, with results
    h = report.header
    suites = h["suites"]
    bundle: dict[str, Any] = {
        "bundle_version": BUNDLE_VERSION,
        "harness_version": h["harness_version"],
        "spec_versions": {s: {"title": get_suite(s).spec_title, "version": get_suite(s).version} for s in suites},
        "suites": suites, "profile": h["profile"], "seed": h["seed"], "options": h["options"],
        "target": {"address": target, **declared},
        "claims": [{"suite": lv["suite"], "level": lv["level"], "title": lv["title"], "status": lv["status"]}
                   for lv in (report.footer or {}).get("levels", [])],
        "exit_code": (report.footer or {}).get("exit_code"),
        "report": list(report_lines),
        **(extra or {}),
    }
    bundle["digest"] = {"algorithm": "sha256", "value": digest(bundle)}
    return bundle


def _result(line: dict[str, Any], strict: bool) -> Result:
    check = next((c for c in REGISTRY.for_suite(line["suite"]) if c.id == line["check_id"]), None)
    if check is None:
        raise HarnessError(f"{line['check_id']}: no such check in the installed suite {line['suite']!r}")
    suite = get_suite(line["suite"])
    return Result(
        check_id=check.id, suite=check.suite, spec=check.spec, section=check.section, keyword=check.keyword.value,
        level=check.level, sentence=check.sentence, outcome=Outcome(line["outcome"]), reason=line["reason"],
        failures=[Failure(f["title"], f["received"], f["expected"], f["path"]) for f in line["failures"]],
        not_applicable=bool(line.get("not_applicable")), inconclusive=bool(line.get("inconclusive")),
        in_clause=in_clause(check.id, suite), strict=strict,
        needs=str(line.get("needs", "")), needs_kind=str(line.get("needs_kind", "")),
    )


def verify_bundle(bundle: Any) -> list[str]:
    """Every problem found (empty: the bundle is intact and its claims follow from its results)."""
    from ..core.profile import PROFILES

    if not isinstance(bundle, dict) or bundle.get("bundle_version") != BUNDLE_VERSION:
        return [f"not a memconform certification bundle (bundle_version {BUNDLE_VERSION})"]
    problems: list[str] = []
    stated = (bundle.get("digest") or {}).get("value") if isinstance(bundle.get("digest"), dict) else None
    if stated != digest(bundle):
        problems.append("digest mismatch: the bundle was changed after it was written")
    lines = bundle.get("report")
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        return [*problems, "the bundle holds no report lines"]
    try:
        report = Report.from_lines(lines, source="bundle report")
    except ReportError as exc:
        return [*problems, f"the report does not read back: {exc}"]
    chained = report.verify_chain("the bundle's report", required=True)
    if chained is not None:
        problems.append(chained)
    h, footer = report.header, report.footer
    assert footer is not None
    for key in ("harness_version", "suites", "profile", "seed", "options"):
        if bundle.get(key) != h.get(key):
            problems.append(f"{key}: the bundle says {bundle.get(key)!r}, the report's header {h.get(key)!r}")
    if h["harness_version"] != __version__:
        problems.append(f"the report was made by harness {h['harness_version']}; verify with that version (this is {__version__})")
    strict = bool(PROFILES.get(h["profile"], {}).get("strict"))
    claims = {(c.get("suite"), c.get("level")): c.get("status") for c in bundle.get("claims", []) if isinstance(c, dict)}
    in_footer = {(lv["suite"], lv["level"]): lv["status"] for lv in footer["levels"]}
    if claims != in_footer:
        problems.append("the claimed levels differ from the report's footer")
    recomputed_all = []
    for name in h["suites"]:
        try:
            suite = get_suite(name)
            results = [_result(r, strict) for r in report.results if r["suite"] == name]
        except HarnessError as exc:
            problems.append(str(exc))
            continue
        versions = (bundle.get("spec_versions") or {}).get(name) or {}
        if versions.get("version") != suite.version:
            problems.append(f"{name}: spec version {versions.get('version')!r} in the bundle, {suite.version!r} installed")
        claimed_by_target = {lv["level"] for lv in footer["levels"] if lv["suite"] == name and lv.get("claimed")}
        asked = any(lv.get("claimed") is not None for lv in footer["levels"] if lv["suite"] == name)
        ran = {r.check_id for r in results}
        not_run = [c for c in REGISTRY.for_suite(name) if c.id not in ran]
        verdicts = level_verdicts(suite, results, claimed_by_target if asked else None, not_run, strict,
                                  bool(h.get("require_hooks")))
        recomputed_all += verdicts
        for v in verdicts:
            claim = claims.get((name, v.key))
            if claim != v.status:
                problems.append(f"{name} level {v.key}: claimed {claim!r}, the results give {v.status!r}")
    if not problems:
        results_all = [_result(r, strict) for r in report.results]
        code = exit_code(results_all, recomputed_all)
        if code != footer["exit_code"] or code != bundle.get("exit_code"):
            problems.append(f"exit code: the report says {footer['exit_code']}, the results give {code}")
    return problems


def cmd_certify(args: Any) -> int:
    from ..core.profile import Profile
    from ..run.session import Session
    from . import attest

    options = {}
    for pair in args.option:
        key, sep, value = pair.partition("=")
        if not sep:
            raise HarnessError(f"--option takes NAME=VALUE, got {pair!r}")
        options[key.strip()] = value.strip()
    signing_key = attest.load_private(Path(args.key))  # before the run: a bad key costs nothing
    profile = Profile.named(args.profile, seed=args.seed, options=options)
    profile.require_hooks = True  # a certificate says nothing was left unassessed for want of a test hook
    out = Path(args.out)
    report_dir = out.parent / (out.name + ".report")
    api_key = args.api_key or os.environ.get("MEMCONFORM_API_KEY")
    session = Session(args.suite, args.target, profile, report_dir, api_key, None)
    shown = session.shown_target or args.target
    session.command = (f"memconform certify --suite {' --suite '.join(args.suite)} --target {shown} "
                       f"--profile {profile.name} --seed {profile.seed}")
    from ..core.registry import select_checks
    from ..render.progress import Progress
    from ..run.estimate import estimate

    planned = {s: len(select_checks(s, None)) for s in args.suite}
    progress = Progress(sum(planned.values()), session.printer)
    session.on_start, session.on_result = progress.on_start, progress.on_result
    session.printer(f"memconform certify: suites {', '.join(args.suite)}; target {shown}; profile {profile.name}; "
                    f"seed {profile.seed}; estimate: {estimate(planned, profile.name).text()}; at most "
                    f"{profile.limits.run_deadline_s:g} s (the profile's run budget); progress with what is left below")
    with progress:  # a live status line on a terminal (checks done, failures, time left), plain lines otherwise
        outcome = session.run()  # a folder changed during the run raises (tampered with): nothing is certified
    assert outcome.report is not None and session.writer is not None
    lines = list(session.writer.lines)  # the lines as the run wrote them, from its memory: never read back
    declared = {k: v for k, v in (("name", args.target_name), ("version", args.target_version)) if v}
    public = signing_key.public_key()
    extra = {"options_given": options,
             "signer": {"keyid": attest.fingerprint(public), "public_key": attest.public_pem(public)}}
    bundle = build_bundle(lines, shown, {k: session.redactor.text(v) for k, v in declared.items()}, extra)
    envelope = attest.sign(attest.statement("\n".join(lines) + "\n", bundle), signing_key)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(envelope, indent=1) + "\n", encoding="utf-8")
    session.printer(session.summary(), end="")
    session.printer(f"certification bundle: {out} (in-toto Statement, DSSE envelope, signed by key "
                    f"{attest.fingerprint(public)}; profile {profile.name}, seed {profile.seed}); report files in {report_dir}")
    return outcome.exit_code


def verify_signed(envelope: dict[str, Any], trusted: Any | None) -> tuple[dict[str, Any] | None, str, list[str]]:
    """(the bundle, the signer's fingerprint, problems): signature, subject digest, then the bundle itself."""
    from . import attest

    doc, named, problems = attest.open_envelope(envelope, trusted)
    if not doc:
        return None, named, problems
    bundle = doc.get("predicate")
    if not isinstance(bundle, dict):
        return None, named, [*problems, "the Statement has no predicate"]
    report = bundle.get("report")
    lines = report if isinstance(report, list) else []
    text = "\n".join(str(x) for x in lines) + "\n"
    subject = {"name": attest.SUBJECT_NAME, "digest": {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}}
    if doc.get("subject") != [subject]:
        problems.append("the Statement's subject digest is not the SHA-256 of the report it carries")
    return bundle, named, problems + verify_bundle(bundle)


def read_bundle(path: Path) -> tuple[Any, str | None]:
    """(the bundle file's JSON, None) or (None, why it is refused as ambiguous); unreadable: HarnessError."""
    from ..core.json_reader import STRICT, JsonRejected, read_json

    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_BUNDLE_BYTES + 1)
    except OSError as exc:
        raise HarnessError(f"cannot read bundle {visible(path)}: {exc.strerror or exc}") from None
    if len(raw) > MAX_BUNDLE_BYTES:
        raise HarnessError(f"bundle {visible(path)} is larger than {MAX_BUNDLE_BYTES} bytes")
    try:
        return read_json(raw, STRICT), None
    except JsonRejected as exc:
        if exc.kind == "duplicate":
            return None, f"the bundle file names a member twice ({exc.message}): readers would disagree on what it says"
        raise HarnessError(f"cannot read bundle {visible(path)}: {exc.message}") from None


def cmd_verify(args: Any) -> int:
    from . import attest

    path = Path(args.bundle)
    say = lambda text: print(visible(text))  # noqa: E731 - every line may carry the bundle's own text
    fingerprint = getattr(args, "fingerprint", None)
    if fingerprint and not re.fullmatch(r"SHA256:[0-9a-f]{64}", fingerprint):
        raise HarnessError("--fingerprint takes SHA256: and 64 lowercase hex digits (as keygen and verify print it)")
    doc, ambiguous = read_bundle(path)
    trusted = None
    if args.key:
        try:
            trusted = attest.load_public(Path(args.key).read_bytes(), args.key)
        except OSError as exc:
            raise HarnessError(f"cannot read the public key {args.key}: {exc}") from None
    if ambiguous is not None:
        say(f"verify: {ambiguous}")
        say(f"{path}: NOT verified (1 problem)")
        return 1
    if not attest.is_envelope(doc):
        say(f"verify: {path} is not signed (no DSSE envelope): a digest alone proves only that the file is "
            "intact, not who vouches for it; certify with --key")
        say(f"{path}: NOT verified (1 problem)")
        return 1
    bundle, named, problems = verify_signed(doc, trusted)
    if trusted is None and fingerprint and named != fingerprint:
        problems.append(f"signed by key {named}, not by the key {fingerprint} you named")
    for p in problems:
        say(f"verify: {p}")
    if problems or bundle is None:
        say(f"{path}: NOT verified ({len(problems)} problem{'s' if len(problems) != 1 else ''})")
        return 1
    pinned = f"the key you gave ({args.key})" if trusted is not None else \
        "the fingerprint you named" if fingerprint else "the key inside the bundle: no --key or --fingerprint named the signer"
    say(f"signed by key {named} ({pinned})")
    target = bundle.get("target") or {}
    say(f"target {target.get('name') or target.get('address')} {target.get('version', '')}".rstrip()
        + f"; profile {bundle['profile']}, seed {bundle['seed']}; options given: "
        + (", ".join(f"{k}={v}" for k, v in sorted((bundle.get("options_given") or {}).items())) or "none"))
    for c in bundle["claims"]:
        say(f"  {c['suite']} {c['title']}: {c['status']}")
    if trusted is None and not fingerprint:
        say(f"{path}: signature valid, signer unverified (the bundle is intact and every level verdict follows from "
            f"its results, but only the key inside it vouches for it: name the vendor's key with --key PUBKEY or "
            f"--fingerprint {named})")
        return 1
    say(f"{path}: verified (signature by {named}; digest intact; every level verdict follows from the results)")
    return 0


def cmd_keygen(args: Any) -> int:
    from . import attest

    public, named = attest.keygen(Path(args.out))
    print(f"private key: {args.out} (keep it secret; certify --key {args.out})")
    print(f"public key:  {public} (publish it, or its fingerprint; verify --key {public})")
    print(f"fingerprint: {named}")
    return 0
