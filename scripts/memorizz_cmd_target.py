"""The memorizz CLI as a memconform `cmd:` target for the memorizz suite (filesystem provider, private root).

    python scripts/memorizz_cmd_target.py --root DIR [--memorizz PATH] {op} {input} {output}

Operations (suites/memorizz/errata.md, "Target operations") map onto the real commands:
    export          -> memorizz memory export OUT [--memory-id M] [--agent-id A] [--types a,b]
                       (include_embeddings has no CLI flag: exit 4, the check is skipped)
    import_archive  -> memorizz memory import FILE [--apply] [--new-ids] [--conflict C]
                       preview = no --apply; restore = --apply; clone = --apply --new-ids
    arm_failure     -> exit 4 (the CLI has no way to make its provider fail)
Exit codes follow the cmd protocol: 0 done, 3 refused (the output may hold a report), 4 not offered.
Everything memorizz writes (memory, settings, .env, caches) stays under --root; Ollama is pointed at a
closed loopback port and the update check is off, so nothing leaves the machine.

The request is hostile input too (the hostile-JSON battery splices its bytes in as the archive): the
archive's bytes are cut out of the request as they are and handed to memorizz unparsed, so the
product's own reader meets them, and this script never crashes on them. A request it cannot split into
an object of fields is refused (exit 3) with the reason; memorizz failing to run, or running past
TIMEOUT_S, exits 5 with the reason on stderr (the target erroring, never a refusal).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_REJECTED, EXIT_UNSUPPORTED, EXIT_ERROR = 0, 3, 4, 5
TIMEOUT_S = 120


def environment(root: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH")}
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {**keep, "HOME": str(home), "MEMORIZZ_HOME": str(home / ".memorizz"),
            "MEMORIZZ_ENV_FILE": str(home / ".memorizz" / ".env"), "MEMORIZZ_MEMORY_ROOT": str(root / "memory"),
            "MEMORIZZ_BACKEND": "filesystem", "MEMORIZZ_NO_UPDATE_CHECK": "1", "OLLAMA_HOST": "http://127.0.0.1:9",
            "NO_COLOR": "1", "COLUMNS": "200"}


def memorizz(cli: str, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # what memorizz prints is read as UTF-8 with any other bytes replaced: its output never crashes this script
    return subprocess.run([cli, "memory", *args], env=environment(root), capture_output=True, encoding="utf-8",
                          errors="replace", timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)


class BadRequest(ValueError):
    """The request is not a JSON object this script can split into its fields."""


def value_end(raw: bytes, i: int) -> int:
    """Where the JSON value starting at raw[i] ends (its bytes are not checked: memorizz reads them)."""
    if i >= len(raw):
        raise BadRequest("a value is missing")
    if raw[i:i + 1] == b'"':
        j = i + 1
        while j < len(raw):
            if raw[j:j + 1] == b"\\":
                j += 2
            elif raw[j:j + 1] == b'"':
                return j + 1
            else:
                j += 1
        raise BadRequest("a string is not closed")
    if raw[i:i + 1] in (b"{", b"["):
        depth, j = 0, i
        while j < len(raw):
            c = raw[j:j + 1]
            if c == b'"':
                j = value_end(raw, j)
                continue
            depth += c in (b"{", b"[")
            depth -= c in (b"}", b"]")
            j += 1
            if depth == 0:
                return j
        raise BadRequest("an object or array is not closed")
    j = i
    while j < len(raw) and raw[j:j + 1] not in b",}] \t\r\n":
        j += 1
    if j == i:
        raise BadRequest(f"no value at byte {i}")
    return j


def skip_space(raw: bytes, i: int) -> int:
    while i < len(raw) and raw[i:i + 1] in b" \t\r\n":
        i += 1
    return i


def split_request(raw: bytes) -> tuple[dict[str, Any], bytes | None]:
    """(every field but the archive, parsed; the archive's bytes as sent, or None): a top-level object only."""
    i = skip_space(raw, 0)
    if raw[i:i + 1] != b"{":
        raise BadRequest("the request is not a JSON object")
    fields: dict[str, Any] = {}
    archive: bytes | None = None
    i = skip_space(raw, i + 1)
    if raw[i:i + 1] == b"}":
        return fields, archive
    while True:
        end = value_end(raw, i)
        try:
            key = json.loads(raw[i:end])
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError included; nesting too deep
            raise BadRequest(f"a key is not a JSON string: {exc}") from None
        if not isinstance(key, str):
            raise BadRequest("a key is not a JSON string")
        i = skip_space(raw, end)
        if raw[i:i + 1] != b":":
            raise BadRequest(f"no ':' after the key {key!r}")
        i = skip_space(raw, i + 1)
        end = value_end(raw, i)
        if key == "archive":
            archive = raw[i:end]
        else:
            try:
                fields[key] = json.loads(raw[i:end])
            except (ValueError, RecursionError) as exc:
                raise BadRequest(f"the field {key!r:.60} is not JSON: {exc}") from None
        i = skip_space(raw, end)
        if raw[i:i + 1] == b"}":
            if skip_space(raw, i + 1) != len(raw):
                raise BadRequest("bytes after the request object")
            return fields, archive
        if raw[i:i + 1] != b",":
            raise BadRequest(f"no ',' or '}}' at byte {i}")
        i = skip_space(raw, i + 1)


def write(output: Path, body: Any) -> None:
    """The reply as UTF-8 JSON; a string no UTF-8 can hold (a lone surrogate memorizz's report carried as an
    escape) stays an escape."""
    try:
        output.write_bytes(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    except UnicodeEncodeError:
        output.write_bytes(json.dumps(body).encode("ascii"))


def do_export(cli: str, root: Path, body: dict[str, Any], output: Path, work: Path) -> int:
    if body.get("include_embeddings"):
        return EXIT_UNSUPPORTED
    archive = work / "export.memorizz.json"
    args = [str(archive)]
    for key, flag in (("memory_id", "--memory-id"), ("agent_id", "--agent-id")):
        if body.get(key) is not None:
            args += [flag, str(body[key])]
    types = body.get("types")
    if types:
        if not (isinstance(types, list) and all(isinstance(t, str) for t in types)):
            write(output, {"error": f"types must be a list of strings, not {types!r:.100}"})
            return EXIT_REJECTED
        args += ["--types", ",".join(types)]
    proc = memorizz(cli, root, "export", *args)
    if proc.returncode != 0:
        write(output, {"error": proc.stderr.strip()[-2000:], "exit": proc.returncode})
        return EXIT_REJECTED
    if not archive.is_file():  # done, it says, but nothing written: the target erring, not a refusal
        print(f"memorizz export exited 0 but wrote no archive: {proc.stderr.strip()[-500:]}", file=sys.stderr)
        return EXIT_ERROR
    shutil.copyfile(archive, output)
    return EXIT_OK


def do_import(cli: str, root: Path, body: dict[str, Any], archive_bytes: bytes | None, output: Path, work: Path) -> int:
    mode, conflict = body.get("mode", "preview"), body.get("conflict", "error")
    if mode not in ("preview", "restore", "clone") or not isinstance(conflict, str) or conflict.startswith("-"):
        write(output, {"ok": False, "errors": [f"unknown mode {mode!r:.60} or conflict {conflict!r:.60}"]})
        return EXIT_REJECTED
    archive = work / "import.memorizz.json"
    archive.write_bytes(archive_bytes if archive_bytes is not None else b"null")  # as sent: memorizz judges them
    args = [str(archive), "--conflict", conflict]
    if mode != "preview":
        args.append("--apply")
    if mode == "clone":
        args.append("--new-ids")
    proc = memorizz(cli, root, "import", *args)
    try:
        report = json.loads(proc.stdout)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth: no report
        report = None
    if proc.returncode == 0 and isinstance(report, dict):
        write(output, report)
        return EXIT_OK
    if proc.returncode == 1 and isinstance(report, dict):
        # ok=false: a preview that found conflicts is still the preview asked for; a failed apply is refused
        write(output, report)
        return EXIT_OK if mode == "preview" else EXIT_REJECTED
    write(output, {"ok": False, "errors": [(proc.stderr or proc.stdout).strip()[-2000:]], "exit": proc.returncode})
    return EXIT_REJECTED


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="a private folder for the memorizz store (created if absent)")
    parser.add_argument("--memorizz", default=shutil.which("memorizz") or "memorizz", help="the memorizz executable")
    parser.add_argument("op")
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args(argv)
    if args.op not in ("export", "import_archive"):
        return EXIT_UNSUPPORTED
    root = Path(args.root)
    root.mkdir(parents=True, exist_ok=True)
    output = Path(args.output)
    try:
        body, archive_bytes = split_request(Path(args.input).read_bytes() or b"{}")
    except BadRequest as exc:
        write(output, {"ok": False, "errors": [f"the request cannot be read: {exc}"]})
        return EXIT_REJECTED
    try:
        with tempfile.TemporaryDirectory(prefix="mz-call-", dir=root) as work:
            if args.op == "export":
                return do_export(args.memorizz, root, body, output, Path(work))
            return do_import(args.memorizz, root, body, archive_bytes, output, Path(work))
    except (OSError, subprocess.SubprocessError) as exc:  # memorizz missing, or hung past TIMEOUT_S: an error, not a refusal
        print(f"memorizz could not be run: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
