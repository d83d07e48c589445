"""A handed file is data, never a command (issue 31, items 3, 4 and 5).

Every file a user is handed (a saved sequence or example, a report, a document) and every word a target
sends is hostile: `replay` starts only the target given with --target, a saved script embeds each value as
one quoted shell word, every handed file is read bounded (a FIFO, a 2 GiB sparse file, JSON nested
100,000 deep, a crafted report: one `memconform: error:` line and exit 2), and what reaches a terminal
or a rendering is shown, never obeyed. Each refusal has its positive control beside it.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from memconform.core import sequence_files
from memconform.core.handed import HandedFileError, read_handed
from memconform.core.profile import Limits
from memconform.core.report import Report
from memconform.core.wording import visible
from memconform.render.badge import badge_svg, badges
from memconform.render.markdown import render_markdown
from memconform.targets.command import CommandTarget

# what a hostile target or file puts in its words: a clipboard write (OSC 52), a window title (OSC 0), a
# hyperlink (OSC 8), a clear screen and a cursor move (CSI), the one-byte C1 CSI, a bidi override
ESCAPES = ("\x1b]52;c;cHduZWQ=\x07", "\x1b]0;owned\x07", "\x1b]8;;http://127.0.0.1/\x1b\\", "\x1b[2J", "\x1b[1;1H",
           "\x9b31m", "\u202e")
PAYLOAD = "id-" + "".join(ESCAPES)
# what must never reach a terminal from data (a terminal's own renderer may write other escapes)
RAW = ("\x1b]52", "\x1b]0;", "\x1b]8;", "\x1b[2J", "\x1b[1;1H", "\x9b", "\u202e", "\x07")


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`memconform ARGS` in a process of its own (the timeout guards the test run, it decides nothing)."""
    return subprocess.run([sys.executable, "-m", "memconform", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600, check=False, env={**os.environ, **(env or {})})


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The run ended with exit 2 and exactly one `memconform: error:` line on stderr, never an internal error."""
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-1000:], proc.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("memconform: error: "), proc.stderr[-2000:]
    assert "internal error" not in lines[0]
    return lines[0]


def sequence_doc(target: str, suite: str = "memoryai") -> dict[str, Any]:
    return {"format": "memconform-sequence", "version": 1, "suite": suite, "check": f"{suite}.model_sequences",
            "target": {"kind": target.split(":", 1)[0], "string": target}, "profile": "ci", "seed": 1, "options": {},
            "steps": [{"by": "target", "op": "export"},
                      {"by": "check", "op": "reply", "expected": {"ok": True}, "message": "export refused"}],
            "diverged_at": 1}


# ---- 1. a handed file is data, never a command ------------------------------------------------------

def test_replay_never_starts_the_target_a_file_names(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    program = f"open({str(marker)!r}, 'w')"
    target = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(program)} {{op}}"
    path = tmp_path / "seq.json"
    path.write_text(json.dumps(sequence_doc(target)), "utf-8")
    proc = cli("replay", str(path), cwd=tmp_path)
    line = one_error_line(proc)
    assert "pass --target" in line
    assert not marker.exists()  # the file's command never ran
    assert "recorded against" in proc.stdout and str(marker) in proc.stdout  # ... it was shown instead


def test_replay_runs_the_target_given_with_target(tmp_path: Path) -> None:
    """Positive control: the same file replays against the target the user names (the reference: no divergence)."""
    path = tmp_path / "seq.json"
    path.write_text(json.dumps(sequence_doc("cmd:false")), "utf-8")
    proc = cli("replay", str(path), "--target", "reference:memoryai", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "no divergence on this target" in proc.stdout


def test_replay_of_an_example_needs_target_too(tmp_path: Path) -> None:
    cases = sorted((Path(__file__).parents[1] / "fixtures" / "memoryai" / "valid").glob("*.json"))
    example = tmp_path / "example.json"
    example.write_text(json.dumps(json.loads(cases[0].read_text("utf-8"))["document"]), "utf-8")
    assert "pass --target" in one_error_line(cli("replay", str(example), cwd=tmp_path))
    assert cli("replay", str(example), "--target", "reference:memoryai", cwd=tmp_path).returncode == 0


HOSTILE_TARGET = ("cmd:true {op} {input}\ntouch INJ1 '$(touch INJ2)' '`touch INJ3`' '$W/../INJ4'"
                  " ';touch INJ5' \"|| touch INJ6\"")


def _script(tmp_path: Path, doc: dict[str, Any], template: str) -> Path:
    ctx = SimpleNamespace(target=CommandTarget(template, Limits()))
    lines = sequence_files.script_lines(ctx, doc)
    assert lines, "the command target's script was written"
    script = tmp_path / "seq.sh"
    script.write_text("\n".join(lines) + "\n", "utf-8")
    return script


def test_a_newline_in_the_target_string_runs_nothing_from_the_saved_script(tmp_path: Path) -> None:
    """The script (the target string's newline, the model's message, a payload line equal to the old
    here-document's delimiter) run with bash against a harmless target: no injected command ran."""
    work = tmp_path / "work"
    work.mkdir()
    doc = sequence_doc(HOSTILE_TARGET)
    doc["steps"] = [{"by": "target", "op": "append", "raw_text": "x\nMEMCONFORM_EOF\ntouch INJ7\n"},
                    {"by": "target", "op": "append", "body": {"a": "'; touch INJ8; '"}, "params": {"n": "$(touch INJ9)"}},
                    {"by": "check", "op": "reply", "expected": {"ok": True}, "message": "refused\ntouch INJ10"}]
    doc["check"] = "emp.x\ntouch INJ11"
    script = _script(tmp_path, doc, HOSTILE_TARGET.removeprefix("cmd:"))
    text = script.read_text("utf-8")
    proc = subprocess.run(["bash", str(script)], cwd=work, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "W": str(work / "w")}, check=False)
    assert proc.returncode == 0, proc.stderr
    injected = sorted(p.name for p in tmp_path.rglob("INJ*"))
    assert injected == [], (injected, text)
    # positive control: the script did run the target's command line, with the payload as its input
    assert (work / "w" / "0" / "input.json").read_text("utf-8") == "x\nMEMCONFORM_EOF\ntouch INJ7\n\n"
    assert "exit 0" in proc.stdout


def test_the_script_runs_the_command_it_names(tmp_path: Path) -> None:
    """Positive control for the quoting: a harmless template's words reach the program as they were."""
    out = tmp_path / "argv.json"
    program = "import json, sys; json.dump(sys.argv[2:], open(sys.argv[1], 'w'))"
    template = f"{shlex.quote(sys.executable)} -c {shlex.quote(program)} {shlex.quote(str(out))} {{op}} {{input}} 'a b' '$x'"
    doc = sequence_doc("cmd:" + template)
    doc["steps"][0] = {"by": "target", "op": "append", "body": {"k": 1}}
    script = _script(tmp_path, doc, template)
    subprocess.run(["bash", str(script)], cwd=tmp_path, env={**os.environ, "W": str(tmp_path / "w")}, check=True,
                   capture_output=True, timeout=60)
    assert json.loads(out.read_text("utf-8")) == ["append", f"{tmp_path}/w/0/input.json", "a b", "$x"]


@pytest.mark.parametrize("step", [
    {"by": "target", "op": "append", "raw_text": "a\x1b]52;c;eA==\x07"},
    {"by": "target", "op": "append\r", "body": {}},
    {"by": "target", "op": "append", "body": {}, "params": {"n; touch X": "1"}},
])
def test_a_value_no_shell_line_should_carry_is_refused(step: dict[str, Any]) -> None:
    doc = sequence_doc("cmd:impl {op} {input}")
    doc["steps"][0] = step
    with pytest.raises(sequence_files.Unscriptable):
        sequence_files.script_lines(SimpleNamespace(target=CommandTarget("impl {op} {input}", Limits())), doc)


def test_curl_lines_read_the_key_from_memconform_api_key() -> None:
    target = SimpleNamespace(base_url="http://127.0.0.1:9/v1", routes={})
    doc = sequence_doc("http://127.0.0.1:9/v1")
    doc["steps"][0] = {"by": "target", "op": "search", "route": {"method": "POST", "path": "/m"}, "body": {"q": "'; id"}}
    text = "\n".join(sequence_files.script_lines(SimpleNamespace(target=target), doc))
    assert 'Bearer $MEMCONFORM_API_KEY"' in text and "$API_KEY" not in text.replace("$MEMCONFORM_API_KEY", "")
    assert "--data '{\"q\": \"'\"'\"'; id\"}'" in text


# ---- 3. every handed file read bounded ---------------------------------------------------------------

def _deep(n: int) -> bytes:
    return b"[" * n + b"]" * n


def _report_lines(levels: list[dict[str, Any]] | None = None, note: str = "a note") -> list[dict[str, Any]]:
    header = {"type": "header", "report_version": 1, "harness_version": "0", "started_at": "2026-01-01T00:00:00Z",
              "target": "reference:memoryai", "suites": ["memoryai"], "profile": "ci", "seed": 1, "options": {},
              "command": "memconform run"}
    result = {"type": "result", "check_id": "memoryai.x", "suite": "memoryai", "spec": "MemoryAI", "section": "§1",
              "keyword": "MUST", "level": "core", "sentence": "s", "outcome": "failed", "reason": "",
              "failures": [{"title": "t", "received": 1, "expected": 2, "path": "$"}], "duration_s": 0.0,
              "reproduce": "memconform run"}
    footer = {"type": "footer", "finished_at": "2026-01-01T00:00:01Z",
              "counts": {"passed": 0, "failed": 1, "errored": 0, "skipped": 0},
              "levels": levels if levels is not None else [{"suite": "memoryai", "level": "core", "title": "Core",
                                                            "verdict": "Core: not conformant", "status": "not conformant"}],
              "exit_code": 1, "notes": [{"suite": "memoryai", "note": note}], "readings": []}
    return [header, result, footer]


def _write_report(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return path


def _commands(path: Path, good_report: Path) -> dict[str, list[str]]:
    """Each command that reads a handed file, given `path` in that file's place."""
    return {"report": ["report", str(path), "--md", str(path.parent / "out.md")],
            "diff": ["diff", str(good_report), str(path)],
            "replay": ["replay", str(path), "--target", "reference:memoryai"],
            "validate": ["validate", str(path)]}


@pytest.fixture()
def good_report(tmp_path: Path) -> Path:
    return _write_report(tmp_path / "good.jsonl", _report_lines())


def test_a_good_report_is_read_by_report_and_diff(tmp_path: Path, good_report: Path) -> None:
    """Positive control for the crafted files below."""
    assert cli("report", str(good_report), "--md", str(tmp_path / "s.md"), cwd=tmp_path).returncode == 0
    assert cli("diff", str(good_report), str(good_report), cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("command", ["report", "diff", "replay", "validate"])
def test_a_fifo_is_refused_not_waited_on(tmp_path: Path, good_report: Path, command: str) -> None:
    fifo = tmp_path / "handed.json"
    os.mkfifo(fifo)
    line = one_error_line(cli(*_commands(fifo, good_report)[command], cwd=tmp_path))
    assert "FIFO" in line and "not a regular file" in line


# the peak of this process's own memory (VmHWM: ru_maxrss would carry over the peak of the pytest worker
# that forked it)
PEAK = ("import re, sys\nfrom memconform.cli.main import main\nrc = main(sys.argv[1:])\n"
        "hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
        "print(f'peak-rss-kib {hwm}', file=sys.stderr)\nsys.exit(rc)\n")


def _peak(proc: subprocess.CompletedProcess[str]) -> int:
    found = re.search(r"peak-rss-kib (\d+)", proc.stderr)
    assert found, proc.stderr[-2000:]
    return int(found.group(1)) * 1024


@pytest.mark.parametrize("command", ["report", "diff", "replay", "validate"])
def test_a_sparse_2_gib_file_costs_one_stat(tmp_path: Path, good_report: Path, command: str) -> None:
    sparse = tmp_path / "handed.json"
    with sparse.open("wb") as fh:
        fh.truncate(2 << 30)
    proc = subprocess.run([sys.executable, "-c", PEAK, *_commands(sparse, good_report)[command]], capture_output=True,
                          text=True, cwd=tmp_path, timeout=600, check=False)
    assert proc.returncode == 2 and "over the limit" in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.count("memconform: error:") == 1
    assert _peak(proc) < 200 << 20  # the interpreter and the harness: not a byte of the 2 GiB


def test_a_sequence_of_150_mib_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "seq.json"
    doc = json.dumps(sequence_doc("reference:memoryai"))
    with big.open("w", encoding="utf-8") as fh:  # a real sequence file, its one step's body 150 MiB
        fh.write(doc[:-1] + ', "pad": "' + "a" * (150 << 20) + '"}')
    proc = subprocess.run([sys.executable, "-c", PEAK, "replay", str(big), "--target", "reference:memoryai"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False)
    assert proc.returncode == 2 and "over the limit of 33554432" in proc.stderr, proc.stderr[-2000:]
    assert _peak(proc) < 200 << 20


def test_a_sequence_under_the_cap_takes_a_small_multiple_of_its_size(tmp_path: Path) -> None:
    """Measured, not guessed: a 30 MiB sequence of ordinary steps parsed (and shown, no --target) in a
    bounded multiple of its size (the JSON reader's own bound is 12 bytes of objects per byte of text)."""
    steps = [{"by": "target", "op": "export", "body": {"x": "a" * 1000, "n": list(range(50))}} for _ in range(24_000)]
    doc = {**sequence_doc("reference:memoryai"), "steps": [*steps, sequence_doc("x:")["steps"][1]]}
    path = tmp_path / "seq.json"
    path.write_text(json.dumps(doc), "utf-8")
    size = path.stat().st_size
    assert 28 << 20 < size < 32 << 20
    proc = subprocess.run([sys.executable, "-c", PEAK, "replay", str(path)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600, check=False)
    assert proc.returncode == 2 and "pass --target" in proc.stderr
    assert _peak(proc) < 8 * size + (64 << 20), _peak(proc)


@pytest.mark.parametrize("command", ["report", "diff", "replay", "validate"])
def test_json_nested_100000_deep_is_refused_in_one_line(tmp_path: Path, good_report: Path, command: str) -> None:
    deep = tmp_path / "handed.json"
    deep.write_bytes(_deep(100_000) + b"\n")
    proc = cli(*_commands(deep, good_report)[command], cwd=tmp_path)
    if command == "validate":  # a document that is not well-formed is a finding of validate, not a usage error
        assert proc.returncode in (1, 2) and "RecursionError" not in proc.stdout + proc.stderr, proc.stderr
        assert "internal error" not in proc.stderr
        return
    line = one_error_line(proc)
    assert "RecursionError" not in line


@pytest.mark.parametrize("command", ["report", "diff"])
def test_a_report_line_nested_100000_deep_is_refused(tmp_path: Path, good_report: Path, command: str) -> None:
    lines = [json.dumps(x) for x in _report_lines()]
    lines[1] = lines[1].replace('"received": 1', '"received": ' + _deep(100_000).decode())
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    assert "deeper" in one_error_line(cli(*_commands(path, good_report)[command], cwd=tmp_path))


@pytest.mark.parametrize("command", ["report", "diff"])
@pytest.mark.parametrize("crafted", ["no status", "no counts member", "not UTF-8", "NaN"])
def test_a_crafted_report_is_one_error_line(tmp_path: Path, good_report: Path, command: str, crafted: str) -> None:
    path = tmp_path / "crafted.jsonl"
    if crafted == "no status":
        _write_report(path, _report_lines(levels=[{"suite": "memoryai", "level": "core", "title": "Core", "verdict": "?"}]))
    elif crafted == "no counts member":
        lines = _report_lines()
        del lines[2]["counts"]["passed"]
        _write_report(path, lines)
    elif crafted == "not UTF-8":
        path.write_bytes(good_report.read_bytes().replace(b"a note", b"a \xff note"))
    else:
        path.write_text(good_report.read_text("utf-8").replace('"duration_s": 0.0', '"duration_s": NaN'), "utf-8")
    one_error_line(cli(*_commands(path, good_report)[command], cwd=tmp_path))


def test_a_symlink_leading_outside_the_folder_read_is_refused(tmp_path: Path) -> None:
    folder, outside = tmp_path / "shards", tmp_path / "secret.txt"
    folder.mkdir()
    outside.write_text("not the folder's", "utf-8")
    (folder / "own.jsonl").write_text("the folder's own", "utf-8")
    (folder / "link.jsonl").symlink_to(outside)
    assert read_handed(folder / "own.jsonl", within=folder) == b"the folder's own"  # positive control
    with pytest.raises(HandedFileError, match="leads outside"):
        read_handed(folder / "link.jsonl", within=folder)
    (folder / "inner.jsonl").symlink_to(folder / "own.jsonl")  # a link that stays inside is the folder's file
    assert read_handed(folder / "inner.jsonl", within=folder) == b"the folder's own"


# ---- 2. everything rendered escapes everything -----------------------------------------------------

def test_visible_writes_out_every_control_character() -> None:
    shown = visible(PAYLOAD + "\ttab\nline")
    assert not any(raw in shown for raw in RAW) and "\x1b" not in shown
    assert "\\u001b]52;c;cHduZWQ=\\u0007" in shown and "\\u009b" in shown and "\\u202e" in shown
    assert shown.endswith("\ttab\nline")  # tab and line feed kept
    assert json.loads(visible(json.dumps({"k": "\x9b\u202e"}, ensure_ascii=False))) == {"k": "\x9b\u202e"}


SCRIPTED = ['"><script>document.title="PWNED"</script>', "<img src=x onerror=\"document.title='PWNED'\">",
            "</title><svg onload=\"document.title='PWNED'\"/>", "' onmouseover='x", "&lt;b&gt;", "a & b <c>",
            "[x](javascript:alert(1))", "`<b>`", "**bold** | cell", "<details open>"]


def test_badge_attributes_and_text_hold_any_name() -> None:
    for payload in [*SCRIPTED, PAYLOAD]:
        svg = badge_svg(f"memoryai {payload}", "not conformant")
        root = ET.fromstring(svg)  # well-formed: no payload closed or opened an element
        assert [el.tag.rsplit("}", 1)[-1] for el in root.iter()] == ["svg", "title", "rect", "rect", "g", "text", "text"]
        shown = visible(f"memoryai {payload}")
        assert root.get("aria-label") == f"{shown}: not conformant"
        assert root.find("{http://www.w3.org/2000/svg}title").text == f"{shown}: not conformant"


def _hostile_report() -> Report:
    lines = _report_lines(levels=[{"suite": "memoryai", "level": "core", "title": p, "verdict": p, "status": "not conformant"}
                                  for p in SCRIPTED], note=" ".join(SCRIPTED))
    lines[0]["target"] = SCRIPTED[0]
    lines[0]["suites"] = ["memoryai", SCRIPTED[1]]
    lines[1].update(section=SCRIPTED[2], level=SCRIPTED[1], sentence=SCRIPTED[7] + SCRIPTED[8],
                    failures=[{"title": "```\n" + SCRIPTED[0], "received": SCRIPTED[1], "expected": "x", "path": "$"}])
    lines[2]["readings"] = [{"suite": "memoryai", "point": SCRIPTED[0], "seen": [SCRIPTED[1]], "checks": [SCRIPTED[2]]}]
    return Report.from_lines([json.dumps(x) for x in lines])


def _markdown_html(text: str) -> str:
    """summary.md as HTML, raw HTML allowed (a renderer stricter than GitHub's sanitiser would pass it on)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough").render(text)


def test_summary_md_renders_no_element_from_data() -> None:
    html = _markdown_html(render_markdown(_hostile_report()))
    tags = {m.group(1).lower() for m in re.finditer(r"<([A-Za-z][A-Za-z0-9]*)", html)}
    assert tags <= {"h1", "h2", "p", "code", "table", "thead", "tbody", "tr", "th", "td", "strong", "pre", "ul", "li",
                    "em", "details", "summary"}, tags
    assert "onerror" not in html.replace("onerror=", "").lower() or "<img" not in html.lower()
    assert "<script" not in html.lower() and "<img" not in html.lower() and "<svg" not in html.lower()
    assert 'href="javascript' not in html


def test_the_markdown_check_sees_raw_html_when_there_is_some() -> None:
    """Positive control: the same renderer does turn raw HTML into elements, so the test above means something."""
    html = _markdown_html("| a |\n|---|\n| <img src=x onerror=alert(1)> |\n")
    assert "<img" in html


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
GUARD = ('<script>window.addEventListener("load", () => setTimeout(() => {document.body.setAttribute("data-title", '
         'document.title);}, 50));</script>')


def _dom(tmp_path: Path, page: Path) -> str:
    assert CHROMIUM is not None
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            f"--user-data-dir={tmp_path / 'chromium-profile'}", "--virtual-time-budget=2000", "--dump-dom", page.as_uri()]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@needs_chromium
def test_a_script_payload_does_run_in_chromium(tmp_path: Path) -> None:
    """Positive control: a payload that is not escaped does change the DOM in this browser."""
    page = tmp_path / "raw.html"
    page.write_text(f"<!DOCTYPE html><title>t</title><body>{SCRIPTED[1]}{SCRIPTED[0]}</body>", "utf-8")
    assert "PWNED" in _dom(tmp_path, page)


def _elements(dom: str) -> list[tuple[str, dict[str, str | None]]]:
    """(tag, attributes) of every element in a dumped DOM: what the page is made of, not its text."""
    from html.parser import HTMLParser

    found: list[tuple[str, dict[str, str | None]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, dict(attrs)))

    Collect().feed(dom)
    return found


def _no_script_ran(dom: str, title: str) -> None:
    elements = _elements(dom)
    assert not any(name.startswith("on") for _, attrs in elements for name in attrs), elements
    assert [tag for tag, _ in elements if tag in ("script", "img", "iframe", "object", "embed")] in ([], ["script"])
    import html

    titles = [html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", dom, re.S)]
    assert titles == [title], titles  # the payloads set document.title: it kept its own


@needs_chromium
def test_summary_md_and_badges_run_no_script_in_chromium(tmp_path: Path) -> None:
    report = _hostile_report()
    page = tmp_path / "summary.html"
    page.write_text(f"<!DOCTYPE html><title>summary</title>{GUARD}<body>{_markdown_html(render_markdown(report))}</body>",
                    "utf-8")
    dom = _dom(tmp_path, page)
    _no_script_ran(dom, "summary")
    assert 'data-title="summary"' in dom  # the guard ran after load: the page was live, its title its own
    assert "onerror" in dom  # positive control: the payloads are there, as text
    import html

    for name, svg in {**badges(report), "payload.svg": badge_svg(SCRIPTED[2] + SCRIPTED[0], "conformant")}.items():
        path = tmp_path / name
        path.write_text(svg, "utf-8")
        dom = _dom(tmp_path, path)
        title = re.search(r"<title>(.*?)</title>", svg, re.S)
        assert title is not None
        _no_script_ran(dom, html.unescape(title.group(1)))


# ---- the terminal --------------------------------------------------------------------------------

ESCAPING_TARGET = f'''
PAYLOAD = {PAYLOAD!r}


class Target:
    """Every operation answers with ids that carry terminal escapes, or fails with them in its words."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        def op(body=None, **params):
            if name == "export":
                return {{"format": PAYLOAD, "id": PAYLOAD, "memories": [{{"id": PAYLOAD, "content": PAYLOAD}}]}}
            raise RuntimeError(PAYLOAD + " from " + name)
        return op
'''


def _in_a_pty(argv: list[str], cwd: Path) -> tuple[int, bytes]:
    """(exit code, every byte the process wrote to its terminal)."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, cwd=cwd, close_fds=True,
                            env={**env, "TERM": "xterm-256color", "COLUMNS": "120"})
    os.close(follower)
    seen = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], 600)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed its end
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return proc.wait(timeout=600), bytes(seen)


def test_run_in_a_terminal_shows_a_targets_escapes_never_obeys_them(tmp_path: Path) -> None:
    (tmp_path / "escaping_target.py").write_text(ESCAPING_TARGET, "utf-8")
    code, seen = _in_a_pty([sys.executable, "-m", "memconform", "run", "--suite", "memoryai", "--target",
                            "python:escaping_target:Target", "--report-dir", str(tmp_path / "report")], tmp_path)
    text = seen.decode("utf-8", "replace")
    assert code == 1, text[-3000:]
    assert not any(raw in text for raw in RAW), [raw for raw in RAW if raw in text]
    # positive control: the escapes were in what the target said, and reached the terminal written out
    report = (tmp_path / "report" / "report.jsonl").read_text("utf-8")
    assert "\\u001b]52;c;cHduZWQ=\\u0007" in report
    assert "\\u001b]52;c;cHduZWQ=\\u0007" in text


def test_report_diff_and_validate_print_no_escape_from_a_file(tmp_path: Path, good_report: Path) -> None:
    lines = _report_lines(note=PAYLOAD)
    lines[1]["failures"][0]["title"] = PAYLOAD
    lines[1]["check_id"] = "memoryai.y"
    hostile = _write_report(tmp_path / f"r{ESCAPES[0]}.jsonl", lines)
    cut = _write_report(tmp_path / f"cut{ESCAPES[0]}.jsonl", lines[:2])  # truncated: `report` names the file
    document = tmp_path / "doc.json"
    document.write_text(json.dumps({"format": PAYLOAD, "version": 1, PAYLOAD: PAYLOAD}, ensure_ascii=False),
                        "utf-8")
    for argv in (["diff", str(good_report), str(hostile)], ["diff", "--json", str(good_report), str(hostile)],
                 ["report", str(cut), "--md", str(tmp_path / "s.md")],
                 ["validate", "--format", "memoryai", str(document)], ["replay", str(hostile), "--target", "reference:memoryai"]):
        proc = cli(*argv, cwd=tmp_path)
        shown = proc.stdout + proc.stderr
        assert "internal error" not in shown, (argv, shown[-2000:])
        assert not any(raw in shown for raw in RAW), (argv, [raw for raw in RAW if raw in shown])
        assert "\\u001b" in shown, (argv, shown[-2000:])  # positive control: the file's words were shown


def test_the_error_line_is_one_line_whatever_the_file_name(tmp_path: Path) -> None:
    line = one_error_line(cli("replay", str(tmp_path / "no\nsuch\x1b[2J.json"), "--target", "reference:memoryai",
                              cwd=tmp_path))
    assert "\\n" in line and "\\u001b[2J" in line


def test_an_omp_fuzz_curl_line_names_the_keys_variable_not_filtered() -> None:
    """schemathesis writes the masked header as [Filtered] (a 401 when run as saved): the saved and printed line
    names $MEMCONFORM_API_KEY for the run's key, keeps a probe's wrong key, and drops a header never sent."""
    from memconform.suites.omp.fuzzing.fuzzer import Fuzzer

    fuzz = SimpleNamespace(auth={"Authorization": "Bearer sk-the-runs-key"})
    curl = "curl -X DELETE -H 'Authorization: [Filtered]' http://127.0.0.1:9/v1/memories/m"
    assert Fuzzer.key_named(fuzz, curl, "Bearer sk-the-runs-key") == (  # type: ignore[arg-type]
        'curl -X DELETE -H "Authorization: Bearer $MEMCONFORM_API_KEY" http://127.0.0.1:9/v1/memories/m')
    assert "'Authorization: Bearer wrong'" in Fuzzer.key_named(fuzz, curl, "Bearer wrong")  # type: ignore[arg-type]
    assert "Authorization" not in Fuzzer.key_named(fuzz, curl, None)  # type: ignore[arg-type]
    assert Fuzzer.key_named(fuzz, "curl http://x", "Bearer sk-the-runs-key") == "curl http://x"  # type: ignore[arg-type]


@pytest.mark.mutants
def test_an_omp_fuzz_failure_is_saved_as_json_and_replays(tmp_path: Path) -> None:
    """The failing request of a fuzz check replays from its JSON file: reproduced on the mutant (exit 1), not
    on the reference (exit 0), judged by the same schemathesis check; the key comes from the environment."""
    key = {"MEMCONFORM_API_KEY": "sk-handed-fuzz-0123456789"}
    mutant = "python:memconform.suites.omp.mutants:not_found_as_200"
    run = cli("run", "--suite", "omp", "--target", mutant, "--check", "omp.fuzz_status_codes", "--report-dir",
              str(tmp_path / "report"), cwd=tmp_path, env=key)
    assert run.returncode == 1, run.stdout[-3000:]
    (saved, *_) = sorted((tmp_path / "report" / "examples").glob("omp-fuzz_status_codes-*.json"))
    assert "Replay with: memconform replay " in run.stdout and "--api-key \"$MEMCONFORM_API_KEY\"" in run.stdout
    doc = json.loads(saved.read_text("utf-8"))
    assert doc["format"] == "memconform-sequence" and doc["steps"][-1]["op"] == "omp.fuzz"
    assert key["MEMCONFORM_API_KEY"] not in saved.read_text("utf-8")
    again = cli("replay", str(saved), "--target", mutant, cwd=tmp_path, env=key)
    assert again.returncode == 1 and "the divergence reproduced" in again.stdout, again.stdout[-2000:] + again.stderr
    clean = cli("replay", str(saved), "--target", "reference:omp", cwd=tmp_path, env=key)
    assert clean.returncode == 0 and "no divergence" in clean.stdout, clean.stdout[-2000:] + clean.stderr


def test_a_saved_fuzz_file_chooses_among_the_allowed_checks_only() -> None:
    from memconform.suites.omp.fuzzing.replayed import _checks

    assert [f.__name__ for f in _checks(["status_code_conformance"])] == ["status_code_conformance"]
    for names in (["os:system"], ["ignored_auth"], [], "status_code_conformance"):
        with pytest.raises(ValueError):
            _checks(names)
