"""`memconform translate`, `memconform portability` and `memconform port` (added to the parser by main.py).

translate: exit 0 written, 1 refused (the ledger says why), 2 the file could not be read.
portability: the loss matrix of every pair of formats (Markdown on stdout, --md / --html / --json files).
The formats are those the installed suites declare (portability/formats.py): a format name is checked when the
command runs, not by the parser, so the parser imports no suite.
port: exit 0 when every loss was predicted by the ledger, 1 when one was not, 2 when a target failed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any


def _write(where: Any, text: str) -> None:
    """Write a file the user named; a folder, a missing parent or a read-only place is one error line, exit 2."""
    from memconform.core.results import HarnessError

    try:
        Path(where).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise HarnessError(f"cannot write {str(where)!r}: {exc.strerror or exc}") from None


def _write_chunks(where: Any, pieces: Any) -> None:
    """A translation written piece by piece (a 100k-record output is never one string in memory)."""
    from memconform.core.results import HarnessError

    part = f"{where}.part"  # beside it, renamed when whole: a failure never leaves a file that looks written
    try:
        with open(part, "w", encoding="utf-8") as out:
            for piece in pieces:
                out.write(piece)
        os.replace(part, where)
    except OSError as exc:
        raise HarnessError(f"cannot write {str(where)!r}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(part):
            os.unlink(part)


def cmd_translate(args: argparse.Namespace) -> int:
    import tempfile
    from itertools import chain

    from memconform.core.results import HarnessError

    from ..portability.detected import detect_file
    from ..portability.formats import portable
    from ..portability.jsontext import pieces
    from ..portability.sourced import read_source, refused_if_not_utf8
    from ..portability.translate import load, read_checked
    from ..portability.written import write_judged

    for named in (args.to, args.source):  # an unknown format: one error line naming the known ones, exit 2
        if named is not None:
            portable(named)
    out = Path(args.out) if args.out else None
    if out is not None and out.is_dir():  # refused before any work, as writing it would be
        raise HarnessError(f"cannot write {str(out)!r}: Is a directory")

    # the cyclic collector paused: a translation builds trees (parsed JSON, records, output) that reference
    # counting frees, and the collector's passes over 100k growing records were a third of the CPU time
    # (omp->memoryai 100k: 13.3 -> 9.3 CPU s, the same peak RSS)
    collecting = gc.isenabled()
    gc.disable()
    with tempfile.TemporaryDirectory(prefix="memconform-translate-") as scratch:
        try:
            # the source's format named, or found from a skim where that is provably detect's answer on the
            # whole document (detected.py): read in windows or by lines where its format can be (sourced.py),
            # else parsed whole (and detected from the whole document when not named)
            source = args.source or detect_file(Path(args.file))
            first = read_source(Path(args.file), source, args.to) if source is not None else None
            if first is None:
                source, doc = load(Path(args.file), args.source)
                # a text that is not UTF-8 is judged from its bytes, as the line path judges it
                first = (refused_if_not_utf8(Path(args.file), source, args.to)
                         or read_checked(doc, source, args.to, consume=True))
                del doc  # the parsed source is let go as it is read: a 100k-record translation never holds it beside the output
            # the output is written beside its destination (stdout: a scratch folder) and judged from the file
            tr, written = write_judged(first, out.absolute().parent if out is not None else Path(scratch))
        finally:
            if collecting:
                gc.enable()
        try:
            if args.ledger:  # json.dumps(indent=2)'s text, written by orjson: 100k records' lines in a second, not ten
                _write_chunks(args.ledger, chain(pieces(tr.ledger.to_json()), "\n"))
            summary = tr.ledger.summary()
            if written is None:
                print(summary, file=sys.stderr)
                return 1
            if out is not None:
                try:
                    os.replace(written, out)  # judged whole: only now does it take the destination's name
                except OSError as exc:
                    raise HarnessError(f"cannot write {str(out)!r}: {exc.strerror or exc}") from None
                print(summary)
            else:
                with open(written, encoding="utf-8", newline="") as text:
                    while piece := text.read(1 << 20):
                        sys.stdout.write(piece)
                print(summary, file=sys.stderr)
            return 0
        finally:
            if written is not None:
                written.unlink(missing_ok=True)


def cmd_portability(args: argparse.Namespace) -> int:
    from ..portability.matrix import as_json, matrix
    from ..portability.report import html_page, markdown

    cells = matrix()
    md = markdown(cells)
    if args.md:
        _write(args.md, md + "\n")
    if args.html:
        _write(args.html, html_page(cells))
    if args.json:
        _write(args.json, json.dumps(as_json(cells), ensure_ascii=False, indent=2) + "\n")
    if args.errata:
        from ..portability.errata import BEGIN, generated

        path = Path(args.errata)
        head = path.read_text(encoding="utf-8").split(BEGIN)[0] if path.exists() else ""
        _write(path, head + generated() + "\n")
    if args.live:
        from ..portability.formats import formats
        from ..portability.port import port
        from ..portability.report import live_markdown

        live = live_markdown({(a, b): port(f"reference:{a}", f"reference:{b}") for a in formats() for b in formats() if a != b})
        md += "\n\n" + live
        if args.md:
            _write(args.md, md + "\n")
    if not (args.md or args.html or args.json or args.errata):
        print(md)
    refused = sum(len(c.refused) for c in cells.values())
    if refused:
        print(f"memconform: {refused} translations of reference fixtures were refused (listed in the report)", file=sys.stderr)
    return 0


def cmd_port(args: argparse.Namespace) -> int:
    from memconform.cli.common import profile_from_args
    from memconform.core.results import HarnessError, TargetError

    from ..portability.port import port

    shared = args.api_key or os.environ.get("MEMCONFORM_API_KEY") or None
    try:
        result = port(args.source, args.to, args.from_format, args.to_format, Path(args.seed) if args.seed else None,
                      seed_a=not args.no_seed, key_a=args.from_api_key or shared, key_b=args.to_api_key or shared,
                      profile=profile_from_args(args))
    except TargetError as exc:  # a target that failed or refused: one error line, exit 2, never a traceback
        raise HarnessError(f"port: a target failed: {exc}") from None
    if args.ledger_dir:
        folder = Path(args.ledger_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for name, tr in (("there", result.there), ("back", result.back)):
            if tr is not None:
                _write(folder / f"{name}.ledger.json", json.dumps(tr.ledger.to_json(), indent=2) + "\n")
    if args.json:
        from .json_output import document

        print(json.dumps(document("port", _port_json(result)), ensure_ascii=False, indent=2))
    else:
        for tr in (result.there, result.back):
            if tr is not None:
                print(tr.ledger.summary())
        for note in result.notes:
            print(f"note: {note}")
        for f in result.findings:
            print(f"unpredicted loss: {f.line()}")
        print(f"{result.source} -> {result.target} -> {result.source}: "
              + ("every loss was predicted by the ledger" if result.ok else f"{len(result.findings)} unpredicted losses"))
    return 0 if result.ok else 1


def _port_json(result: Any) -> dict[str, Any]:
    return {"from": result.source, "to": result.target, "ok": result.ok, "notes": result.notes,
            "findings": [{"where": f.where, "record": f.record, "field": f.field, "expected": repr(f.expected),
                          "got": repr(f.got)} for f in result.findings],
            "ledgers": [tr.ledger.to_json() for tr in (result.there, result.back) if tr is not None]}


def add_portability_parsers(sub: Any) -> None:
    tr = sub.add_parser("translate", help="translate a document into another format, with a loss ledger")
    tr.add_argument("file")
    tr.add_argument("--to", required=True, help="the format to write (an installed suite that declares portability)")
    tr.add_argument("--from", dest="source", help="the document's format (default: detected from a skim of the file "
                    "where the formats' detectors allow, else by parsing it whole; a format that can be is read in "
                    "windows or by lines: docs/portability.md)")
    tr.add_argument("--out", help="write the translation here (default: stdout, the ledger summary on stderr)")
    tr.add_argument("--ledger", help="write the loss ledger here as JSON (schemas/ledger.schema.json)")
    tr.set_defaults(func=cmd_translate)

    mat = sub.add_parser("portability", help="the loss matrix of every pair of formats (Markdown, HTML, JSON)")
    mat.add_argument("--md", help="write the Markdown report here")
    mat.add_argument("--html", help="write the HTML report here")
    mat.add_argument("--json", help="write the matrix as JSON here")
    mat.add_argument("--live", action="store_true", help="also port between every pair of embedded references")
    mat.add_argument("--errata", help="rewrite the generated part of this errata file (harness/portability/errata.md)")
    mat.set_defaults(func=cmd_portability)

    port = sub.add_parser("port", help="export from one target, translate, import into another, and back")
    port.add_argument("--from", dest="source", required=True, help="target A, e.g. reference:memoryai or http://...")
    port.add_argument("--to", required=True, help="target B")
    port.add_argument("--from-format", help="A's format (default: from reference:NAME)")
    port.add_argument("--to-format", help="B's format (default: from reference:NAME)")
    port.add_argument("--seed", help="a document imported into A first (default: a reference fixture of A's format)")
    port.add_argument("--no-seed", action="store_true", help="port what A already holds")
    port.add_argument("--api-key", help="the API key of both targets (default: $MEMCONFORM_API_KEY)")
    port.add_argument("--from-api-key", help="target A's API key (default: --api-key)")
    port.add_argument("--to-api-key", help="target B's API key (default: --api-key)")
    port.add_argument("--profile", default="ci", help="the profile whose limits and options the targets are called with")
    port.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                      help="a profile option, as for run (e.g. omp.credentials=FILE)")
    port.add_argument("--ledger-dir", help="write both ledgers here")
    port.add_argument("--json", action="store_true")
    port.set_defaults(func=cmd_port)
