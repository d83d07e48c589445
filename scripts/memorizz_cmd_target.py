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

EXIT_OK, EXIT_REJECTED, EXIT_UNSUPPORTED = 0, 3, 4
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
    return subprocess.run([cli, "memory", *args], env=environment(root), capture_output=True, text=True,
                          timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)


def write(output: Path, body: Any) -> None:
    output.write_text(json.dumps(body, ensure_ascii=False), "utf-8")


def do_export(cli: str, root: Path, body: dict[str, Any], output: Path, work: Path) -> int:
    if body.get("include_embeddings"):
        return EXIT_UNSUPPORTED
    archive = work / "export.memorizz.json"
    args = [str(archive)]
    for key, flag in (("memory_id", "--memory-id"), ("agent_id", "--agent-id")):
        if body.get(key) is not None:
            args += [flag, str(body[key])]
    if body.get("types"):
        args += ["--types", ",".join(body["types"])]
    proc = memorizz(cli, root, "export", *args)
    if proc.returncode != 0:
        write(output, {"error": proc.stderr.strip()[-2000:], "exit": proc.returncode})
        return EXIT_REJECTED
    shutil.copyfile(archive, output)
    return EXIT_OK


def do_import(cli: str, root: Path, body: dict[str, Any], output: Path, work: Path) -> int:
    mode, conflict = body.get("mode", "preview"), body.get("conflict", "error")
    if mode not in ("preview", "restore", "clone"):
        write(output, {"ok": False, "errors": [f"unknown mode {mode!r}"]})
        return EXIT_REJECTED
    archive = work / "import.memorizz.json"
    archive.write_text(json.dumps(body.get("archive"), ensure_ascii=False), "utf-8")
    args = [str(archive), "--conflict", conflict]
    if mode != "preview":
        args.append("--apply")
    if mode == "clone":
        args.append("--new-ids")
    proc = memorizz(cli, root, "import", *args)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
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
    root = Path(args.root)
    root.mkdir(parents=True, exist_ok=True)
    body = json.loads(Path(args.input).read_text("utf-8") or "{}")
    output = Path(args.output)
    with tempfile.TemporaryDirectory(prefix="mz-call-", dir=root) as work:
        if args.op == "export":
            return do_export(args.memorizz, root, body, output, Path(work))
        if args.op == "import_archive":
            return do_import(args.memorizz, root, body, output, Path(work))
    return EXIT_UNSUPPORTED


if __name__ == "__main__":
    sys.exit(main())
