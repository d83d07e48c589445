"""What the hostile-zoo tests share: run `memconform` in a subprocess and judge its survival.

Survival: the run ends within a generous bound of its budget, exits 1 (or 2 with one start-up
line), leaves a complete report (footer, junit.xml, summary.md, report.html) unless it could not
start, prints no traceback, leaks the key in no form (whole or any run of 16 of its characters,
literal, url-encoded, JSON-escaped, \\u-escaped, HTML-escaped), leaves no process of the target,
writes nothing outside its folders, and passes no check on purely hostile answers.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).parent
MEMCONFORM = Path(sys.executable).with_name("memconform")
KEY = "sk-zoo+Key/with=Chars 0123456789-abcdefXYZ"  # every character an encoder touches
LEAK_RUN = 16
_U_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def run_cli(cwd: Path, argv: list[str], limit_s: float = 120, key: str | None = KEY,
            extra_env: dict[str, str] | None = None) -> dict:
    """`memconform ARGV --api-key KEY --report-dir rep` (key None: ARGV alone) in `cwd`; exit code,
    seconds, memconform's peak memory, stdout, stderr, its pid."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCONFORM", "HYPOTHESIS"))}
    env["PYTHONPATH"] = str(HERE)
    env.update(extra_env or {})
    full = [str(MEMCONFORM), *argv, *(["--api-key", key, "--report-dir", "rep"] if key is not None else [])]
    started = time.monotonic()
    peak = 0
    with open(cwd / "out.txt", "wb") as out, open(cwd / "err.txt", "wb") as err:
        proc = subprocess.Popen(full, cwd=cwd, env=env, stdout=out, stderr=err)
        while proc.poll() is None:
            peak = max(peak, _high_water_kib(proc.pid))  # memconform's own peak, read while it runs
            if time.monotonic() - started > limit_s:
                proc.kill()
                proc.wait()
                raise AssertionError(f"{' '.join(argv)} did not end within {limit_s}s")
            time.sleep(0.05)
    return {"code": proc.returncode, "seconds": time.monotonic() - started, "maxrss_kib": peak, "pid": proc.pid,
            "out": (cwd / "out.txt").read_text("utf-8", "replace"), "err": (cwd / "err.txt").read_text("utf-8", "replace")}


def _high_water_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def decodings(text: str) -> list[str]:
    """`text` and what it reads as once url-, JSON-, HTML- or base64-decoded, or all of them at once (a
    key with its characters in different forms): a key in any of those forms shows in one."""
    def unescape(t: str) -> str:
        return _U_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), t).replace("\\/", "/").replace('\\"', '"')

    unescaped = unescape(text)
    twice = unescape(text.replace("\\\\", "\\"))  # an escape inside a JSON string of a JSON file
    mixed = html.unescape(urllib.parse.unquote(twice))
    mixed_plus = html.unescape(urllib.parse.unquote_plus(twice))
    return [text, urllib.parse.unquote(text), urllib.parse.unquote_plus(text), unescaped, twice,
            html.unescape(text), html.unescape(unescaped), mixed, mixed_plus, base64_decodings(text)]


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}")


def base64_decodings(text: str) -> str:
    """Every run of base64 characters in `text` decoded at each of the four character offsets, in both
    alphabets (a key's base64 may start anywhere in a larger stream), as latin-1 text on one line each."""
    out = []
    for run in _BASE64_RUN.findall(text):
        for start in range(4):
            chunk = run[start:]
            chunk = chunk[: len(chunk) - len(chunk) % 4]
            for alphabet in (None, b"-_"):
                try:
                    data = base64.b64decode(chunk.encode("ascii"), altchars=alphabet or b"+/", validate=alphabet is None)
                except ValueError:
                    continue
                out.append(data.decode("latin-1"))
    return "\n".join(out)


def key_leaks(texts: dict[str, str], key: str = KEY, run: int = LEAK_RUN) -> list[tuple[str, str]]:
    """(where, run of the key) for every run of `run` key characters found in a text or its decodings."""
    runs = {key[i:i + run] for i in range(max(1, len(key) - run + 1))}
    found = []
    for where, text in texts.items():
        for decoded in decodings(text):
            found += [(where, r) for r in runs if r in decoded]
    return sorted(set(found))


def report_texts(cwd: Path, run: dict) -> dict[str, str]:
    texts = {"terminal": run["out"] + run["err"]}
    for path in (cwd / "rep").rglob("*"):
        if path.is_file():
            texts[str(path.relative_to(cwd))] = path.read_bytes().decode("utf-8", "replace")
    return texts


def strict_lines(path: Path) -> list[dict]:
    def no_constant(name: str):
        raise ValueError(f"bare {name} in the report")

    return [json.loads(line, parse_constant=no_constant) for line in path.read_text("utf-8").splitlines()]


def assert_survived(cwd: Path, run: dict, expected_files: set[str], within_s: float, answers_json: bool = False,
                    key: str = KEY) -> list[dict]:
    """Every survival criterion; the report's result lines. `answers_json`: the fake answers well-formed
    (if wrong) JSON, so a check may fail on it; none may pass."""
    context = f"\nstdout:\n{run['out'][-3000:]}\nstderr:\n{run['err'][-2000:]}"
    assert run["seconds"] < within_s, f"took {run['seconds']:.1f}s" + context
    assert run["code"] in (1, 2), f"exit {run['code']}" + context
    assert "Traceback" not in run["out"] + run["err"] and "internal error" not in run["out"] + run["err"], context
    if run["code"] == 2:
        assert run["err"].strip().count("\n") == 0 and run["err"].startswith("memconform: error:"), context
    lines = strict_lines(cwd / "rep" / "report.jsonl")
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "footer", "the report is not complete" + context
    assert all((cwd / "rep" / name).is_file() for name in ("junit.xml", "summary.md", "report.html"))
    results = [line for line in lines if line.get("type") == "result"]
    allowed = {"errored", "skipped", "failed"} if answers_json else {"errored", "skipped"}
    outcomes = [(r["check_id"], r["outcome"], r.get("reason", "")[:160]) for r in results]
    assert all(r["outcome"] in allowed for r in results), outcomes
    verdicts = [v["verdict"] for v in lines[-1]["levels"]]
    assert not any(v.partition(": ")[2].startswith("conformant") for v in verdicts), verdicts
    assert key_leaks(report_texts(cwd, run), key) == []
    assert {p.name for p in cwd.iterdir()} == expected_files | {"rep", "out.txt", "err.txt"}
    return results


def survivors(track: Path) -> list[str]:
    """Processes whose command line carries the track's token (see tests/hostile/cmd_escape.py)."""
    token = f"memconform-hostile-{track.name}".encode()
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if token in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                pass
    return found
