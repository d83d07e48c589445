"""`memconform matrix plan | run | combine | diff`: the matrix subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..core.results import HarnessError
from ..matrix.plan import github_matrix, index_table, plan, shard_at
from ..matrix.registry import DEFAULT_FILE, by_id, load_registry

DEFAULT_OUT = "reports/matrix"


def add_matrix_parser(sub: Any) -> None:
    matrix = sub.add_parser("matrix", help="many implementations side by side: plan shards, run, combine, diff")
    msub = matrix.add_subparsers(dest="matrix_command", required=True)

    def selection(p: argparse.ArgumentParser) -> None:
        p.add_argument("--implementations", default=DEFAULT_FILE, metavar="FILE",
                       help=f"the registry (default {DEFAULT_FILE}; schema schemas/implementations.schema.json)")
        p.add_argument("--suite", action="append", help="only these suites (repeatable)")
        p.add_argument("--implementation", action="append", metavar="ID", help="only these implementations (repeatable)")
        p.add_argument("--seeds", type=int, default=1, metavar="K", help="seeds per implementation and suite (default 1)")
        p.add_argument("--ci-only", action="store_true", help="only the entries with ci = true")

    pl = msub.add_parser("plan", help="print the shards (implementation x suite x seed)")
    selection(pl)
    pl.add_argument("--format", choices=("json", "k8s"), default="json",
                    help="json: the fromJson of a GitHub Actions matrix; k8s: the index table of an Indexed Job")
    pl.set_defaults(func=cmd_plan)

    run = msub.add_parser("run", help="run one shard (--shard N) or every shard (--all, a local pool)")
    selection(run)
    which = run.add_mutually_exclusive_group(required=True)
    which.add_argument("--shard", type=int, metavar="N", help="the shard of the plan to run (its index)")
    which.add_argument("--all", action="store_true", help="every shard, then combine them")
    run.add_argument("--jobs", type=int, default=1, metavar="J", help="shards at once (bounded by memory too)")
    run.add_argument("--out", default=DEFAULT_OUT, help=f"where shard folders (and with --all the matrix) go "
                                                        f"(default {DEFAULT_OUT})")
    run.add_argument("--profile", default="ci")
    run.add_argument("--run-budget", type=float, metavar="SECONDS",
                     help="each shard's own run budget (default: the profile's); a shard that ran out of it beside "
                          "others is run again alone")
    run.add_argument("--check", action="append", default=[], metavar="ID", help="run only this check (repeatable)")
    run.set_defaults(func=cmd_run)

    comb = msub.add_parser("combine", help="combine shard reports into matrix.json, matrix.md, matrix.html, badges")
    comb.add_argument("reports", nargs="+", help="shard folders, report.jsonl files, or folders holding them")
    comb.add_argument("--implementations", metavar="FILE", help="registry for names, claims and links (optional)")
    comb.add_argument("--out", default=DEFAULT_OUT)
    comb.set_defaults(func=cmd_combine)

    diff = msub.add_parser("diff", help="exit 1 on a new split, a new cell not assessed or a regression")
    diff.add_argument("old")
    diff.add_argument("new")
    diff.add_argument("--json", action="store_true")
    diff.set_defaults(func=cmd_diff)


def _plan(args: argparse.Namespace) -> tuple[Any, Any]:
    entries = load_registry(Path(args.implementations))
    shards = plan(entries, args.suite, args.seeds, ci_only=args.ci_only, only=args.implementation)
    if not shards:
        raise HarnessError("the plan is empty: no implementation of the registry speaks the suites asked for")
    return entries, shards


def cmd_plan(args: argparse.Namespace) -> int:
    _, shards = _plan(args)
    print(github_matrix(shards) if args.format == "json" else index_table(shards), end="\n" if args.format == "json" else "")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from ..matrix.run import RunSettings, run_shards

    entries, shards = _plan(args)
    _stop_started_on_sigterm()
    if args.run_budget is not None and not args.run_budget > 0:
        raise HarnessError(f"--run-budget must be a positive number of seconds, not {args.run_budget}")
    settings = RunSettings(profile=args.profile, checks=tuple(args.check), run_budget_s=args.run_budget)
    out = Path(args.out)
    chosen = shards if args.all else [shard_at(shards, args.shard)]
    folders = run_shards(chosen, by_id(entries), out / "shards", settings, jobs=args.jobs if args.all else 1)
    if not args.all:
        print(f"shard folder: {folders[0]}")
        return 0
    return write_matrix(folders, by_id(entries), out)


def _stop_started_on_sigterm() -> None:
    """A terminated run stops the implementations its shards started (they run in sessions of their own)."""
    import os
    import signal

    from ..matrix.launch import RUNNING

    def handler(signum: int, frame: Any) -> None:
        RUNNING.stop_all()
        os._exit(128 + signum)  # the pool's threads cannot be joined mid-shard: leave at once, nothing left behind

    signal.signal(signal.SIGTERM, handler)


def cmd_combine(args: argparse.Namespace) -> int:
    registry = by_id(load_registry(Path(args.implementations))) if args.implementations else None
    return write_matrix([Path(p) for p in args.reports], registry, Path(args.out))


def write_matrix(paths: list[Path], registry: Any, out: Path) -> int:
    from ..matrix.badges import write_badges
    from ..matrix.combine import combine, read_all
    from ..matrix.errata import copy_errata
    from ..matrix.render_html import render_html
    from ..matrix.render_md import render_markdown
    from ..matrix.text import visible

    shards = read_all(paths)
    doc = combine(shards, registry)
    out.mkdir(parents=True, exist_ok=True)
    copy_errata([s["name"] for s in doc["suites"]], out)  # where matrix.md and matrix.html link, beside them
    (out / "matrix.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")
    (out / "matrix.md").write_text(render_markdown(doc), "utf-8")
    (out / "matrix.html").write_text(render_html(doc, report_links(shards, out)), "utf-8")
    badges = write_badges(doc, out / "badges")
    counts = ", ".join(f"{k} {v}" for k, v in doc["counts"].items())
    print(visible(f"matrix: {len(doc['implementations'])} implementations, {len(doc['sentences'])} sentences "
                  f"({counts}); {doc['not_assessed_cells']} cells not assessed; "
                  f"{len(doc['interop_holes'])} interop holes needing an erratum"
                  + ("" if doc["verified"] else f"; UNVERIFIED: reports of harness {doc['harness_version']}")))
    print(visible(f"wrote {out / 'matrix.json'}, matrix.md, matrix.html and {badges} badges in {out / 'badges'}"))
    return 0


def report_links(shards: list[Any], out: Path) -> dict[str, dict[str, str]]:
    """implementation -> suite -> its shard's report.html (else its report.jsonl), relative to `out`: the
    first seed's, so a matrix folder moved together with its shards keeps its links."""
    import os
    from urllib.parse import quote

    links: dict[str, dict[str, str]] = {}
    for s in shards:
        if s.report_dir is None or s.report is None or s.suite in links.get(s.implementation, {}):
            continue
        page = s.report_dir / "report.html"
        target = page if page.is_file() else s.report_dir / "report.jsonl"
        try:
            href = quote(os.path.relpath(target.resolve(), out.resolve()).replace(os.sep, "/"))
        except ValueError:  # another drive (Windows): no relative path, so the absolute one
            href = target.resolve().as_uri()
        links.setdefault(s.implementation, {})[s.suite] = href
    return links


def cmd_diff(args: argparse.Namespace) -> int:
    from ..matrix.diff import diff_matrices, gate_fails, render_diff

    old, new = (_read_matrix(Path(p)) for p in (args.old, args.new))
    changes = diff_matrices(old, new)
    fails = gate_fails(changes)
    if args.json:
        from .json_output import document

        # ensure_ascii: no C1 control character from a handed-in matrix reaches a terminal
        print(json.dumps(document("matrix-diff", {**changes, "gate_fails": fails}), indent=1, ensure_ascii=True))
    else:
        sys.stdout.write(render_diff(changes))
    return 1 if fails else 0


def _read_matrix(path: Path) -> dict[str, Any]:
    """A matrix.json handed in (bounded, a regular file); version 1 (before cells not assessed had a
    reason) is read for its sentences, outcomes and levels only."""
    from ..matrix.combine import validate_matrix
    from ..matrix.safe_read import MAX_REPORT_BYTES, read_bounded

    if path.is_dir():
        path = path / "matrix.json"
    try:
        doc = json.loads(read_bounded(path, path.parent, MAX_REPORT_BYTES))
    except ValueError as exc:
        raise HarnessError(f"{path}: cannot be read as JSON: {exc}") from None
    try:
        if isinstance(doc, dict) and doc.get("matrix_version") == 1:
            _check_version_1(doc)
        else:
            validate_matrix(doc)
    except Exception as exc:  # jsonschema.ValidationError, KeyError, TypeError: one line
        raise HarnessError(f"{path}: not a matrix.json: {getattr(exc, 'message', exc)}") from None
    return dict(doc)


def _check_version_1(doc: dict[str, Any]) -> None:
    for x in doc["sentences"]:
        if not (isinstance(x["id"], str) and isinstance(x["class"], str) and isinstance(x["outcomes"], dict)):
            raise TypeError("a sentence without id, class or outcomes")
    for i in doc["implementations"]:
        for lv in i["levels"]:
            if not all(isinstance(lv[k], str) for k in ("suite", "level", "status")):
                raise TypeError("a level without suite, level or status")
