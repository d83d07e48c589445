"""`memconform report REPORT.jsonl`: render any report file afterwards (HTML, Markdown, JUnit, badges)."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path

from ..core.report import Report
from ..core.results import HarnessError
from ..core.wording import visible


def add_report_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rep = sub.add_parser("report", help="render a report.jsonl as HTML, Markdown, JUnit XML or SVG badges")
    rep.add_argument("file", help="a report.jsonl (a truncated one is shown as a truncated run)")
    rep.add_argument("--html", metavar="FILE", help="write the self-contained HTML report here")
    rep.add_argument("--md", metavar="FILE", help="write the pull-request summary (Markdown) here")
    rep.add_argument("--junit", metavar="FILE", help="write JUnit XML here")
    rep.add_argument("--badge", metavar="DIR", help="write one SVG badge per suite and level into this folder")
    rep.set_defaults(func=cmd_report)

    dif = sub.add_parser("diff", help="what changed between two reports: newly failing/passing, messages, levels, readings")
    dif.add_argument("a", help="the earlier report.jsonl")
    dif.add_argument("b", help="the later report.jsonl")
    dif.add_argument("--json", action="store_true")
    dif.set_defaults(func=cmd_diff)

    from ..core.profile import PROFILES

    cert = sub.add_parser("certify", help="run suites with no expectations file and write a certification bundle")
    cert.add_argument("--suite", action="append", required=True)
    cert.add_argument("--target", required=True)
    cert.add_argument("--target-name", help="the implementation's name, as its vendor declares it")
    cert.add_argument("--target-version", help="the implementation's version, as its vendor declares it")
    cert.add_argument("--out", default="reports/certification/bundle.json")
    cert.add_argument("--api-key", help="sent as a bearer token; redacted everywhere")
    cert.add_argument("--key", required=True, metavar="KEYFILE", help="the Ed25519 private key that signs the bundle "
                      "(memconform keygen)")
    cert.add_argument("--profile", default="thorough", help=f"one of {', '.join(PROFILES)} (default thorough)")
    cert.add_argument("--seed", type=int)
    cert.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    cert.set_defaults(func=_later("evidence.certify", "cmd_certify"))

    ver = sub.add_parser("verify", help="check a certification bundle against the signer's key you name: signature, "
                         "digest chain, and every level verdict from its results")
    ver.add_argument("bundle")
    ver.add_argument("--key", metavar="PUBKEY", help="accept only a signature by this public key (PEM)")
    ver.add_argument("--fingerprint", metavar="SHA256:HEX", help="accept only a signature by the key with this "
                     "fingerprint (as its vendor publishes it); without --key or --fingerprint a valid signature is "
                     "'signer unverified', exit 1")
    ver.set_defaults(func=_later("evidence.certify", "cmd_verify"))

    kg = sub.add_parser("keygen", help="make an Ed25519 key pair for certify --key (KEYFILE and KEYFILE.pub)")
    kg.add_argument("out", nargs="?", default="memconform-signing.key")
    kg.set_defaults(func=_later("evidence.certify", "cmd_keygen"))


def read_possibly_cut(path: Path) -> tuple[Report, bool]:
    """A report, tolerating one partial last line (a run killed mid-write): that line is dropped."""
    from ..core.handed import read_handed
    from ..core.report import MAX_REPORT_BYTES, BadLine, decoded_lines

    try:
        return Report.from_path(path, allow_truncated=True, allow_empty=True), False
    except BadLine:
        raw = read_handed(path, MAX_REPORT_BYTES, what="a report")  # bounded as the first read was
        lines = raw.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if raw.endswith(b"\n") or not lines:
            raise  # the bad line is a whole line: not a cut-off write
        return Report.from_lines(decoded_lines(lines[:-1], path), source=str(path), allow_truncated=True,
                                 allow_empty=True), True


def cmd_report(args: argparse.Namespace) -> int:
    from ..render.badge import write_badges
    from ..render.html import render_html
    from ..render.junit import render_junit
    from ..render.markdown import render_markdown

    report, cut = read_possibly_cut(Path(args.file))
    report.check_chain(str(args.file))  # a report changed after it was written is named, never rendered
    if cut:
        print(visible(f"{args.file}: the last line was cut off mid-write; rendered without it"))
    wanted = [(args.html, render_html), (args.md, render_markdown), (args.junit, render_junit)]
    if not any(w for w, _ in wanted) and not args.badge:
        raise HarnessError("memconform report: name at least one of --html, --md, --junit, --badge")
    for dest, render in wanted:
        if dest:
            path = Path(dest)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(report), encoding="utf-8")
            print(visible(f"wrote {path}"))
    if args.badge:
        for path in write_badges(Path(args.badge), report):
            print(visible(f"wrote {path}"))
    if report.truncated:
        print(visible(f"{args.file}: truncated run (no footer): rendered as such, no level verdicts"))
        return 1
    return 0


def _later(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A subcommand whose module is imported only when it runs (start-up of every other command stays small)."""

    def run(args: argparse.Namespace) -> int:
        command: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f"memconform.{module}"), name)
        return command(args)

    return run


def cmd_diff(args: argparse.Namespace) -> int:
    """`memconform diff A B`: exit 1 when anything newly fails or a level got worse (render/diff.py compares)."""
    from dataclasses import asdict

    from ..core.wording import visible
    from ..render.diff import diff_reports, render_text
    from .json_output import dumps

    a = Report.from_path(Path(args.a), allow_truncated=True, allow_empty=True)
    b = Report.from_path(Path(args.b), allow_truncated=True, allow_empty=True)
    a.check_chain(str(args.a))  # a report changed after it was written is named, never compared
    b.check_chain(str(args.b))
    d = diff_reports(a, b)
    if args.json:
        print(visible(dumps("diff", {**asdict(d), "worse": d.worse})))
    else:
        print(visible(render_text(d)), end="")  # the reports' own words, shown not obeyed
    return 1 if d.worse else 0
