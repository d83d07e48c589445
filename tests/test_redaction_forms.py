"""The key in every form a target may give it back in: url-encoded (either hex case, `+` for a space),
JSON-escaped (`\\/`, \\u00XX), or cut so that a buffer starts or ends inside it. A property test plants
random keys in each form into every report file (report.jsonl, junit.xml, summary.md, report.html),
a saved sequence and the terminal, and finds no run of 16 of the key's characters in any of them,
read as they are or url-, JSON- or HTML-decoded."""

from __future__ import annotations

import io
import json
import string
import types
import urllib.parse
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.core import sequence_files
from memconform.core.model import Failure, Outcome, Result
from memconform.core.redact import Printer, Redactor
from memconform.core.report import Report, ReportWriter
from memconform.core.runner import redact_failure
from memconform.core.sequence import Recorder
from memconform.render import write_rendered
from zoo_support import key_leaks

SETTINGS = settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
KEY_CHARS = string.ascii_letters + string.digits + "-_.~+/=: "
KEYS = st.text(KEY_CHARS, min_size=16, max_size=48).filter(lambda k: k.strip() == k and len(set(k)) > 6)


def _every_char(key: str, upper: bool) -> str:
    return "".join(f"\\u{ord(c):04X}" if upper else f"\\u{ord(c):04x}" for c in key)


ENCODERS = {
    "literal": lambda k: k,
    "url": lambda k: urllib.parse.quote(k, safe=""),
    "url-lower": lambda k: urllib.parse.quote(k, safe="").replace("%2F", "%2f").replace("%2B", "%2b")
    .replace("%3D", "%3d").replace("%3A", "%3a"),
    "url-plus": lambda k: urllib.parse.quote_plus(k, safe=""),
    "json-slash": lambda k: json.dumps(k)[1:-1].replace("/", "\\/"),
    "u-escaped": lambda k: _every_char(k, upper=False),
    "u-escaped-upper": lambda k: _every_char(k, upper=True),
    "u-escaped-twice": lambda k: _every_char(k, upper=False).replace("\\", "\\\\"),  # repr of an escaped text
}


@st.composite
def planted(draw):
    """(key, texts a target could hand back): the key whole and cut at a buffer's edges, in one encoding."""
    key = draw(KEYS)
    encode = ENCODERS[draw(st.sampled_from(sorted(ENCODERS)))]
    cut = draw(st.integers(0, len(key) - 16))
    noise = "n" * draw(st.integers(0, 300))
    texts = [
        f"{noise}{encode(key)}{noise}",
        encode(key[cut:]) + noise,  # a tail buffer that starts inside the key
        noise + encode(key[:len(key) - cut]),  # a head buffer that ends inside it
        f"echo: {encode(key)[: len(encode(key)) // 2 + 20]}",
    ]
    return key, texts


def plant_everything(tmp: Path, key: str, texts: list[str]) -> dict[str, str]:
    redactor = Redactor([key])
    text = " | ".join(texts)
    writer = ReportWriter(tmp / "report.jsonl", redactor)
    writer.header(target=f"http://h/?k={texts[0]}", suites=["demo"], profile="ci", seed=1,
                  options={"demo.x": texts[1]}, command=f"memconform run {texts[2]}")
    failure = Failure(title=text, received={texts[0]: texts, "raw": text}, expected=texts[3], path=f"$.{texts[1]}",
                      detail=text)
    result = Result(check_id="demo.items_have_ids", suite="demo", spec="Demo", section="§1", keyword="MUST",
                    level="1", sentence="s", outcome=Outcome.FAILED, reason=redactor.text(text),
                    transcript=[redactor.text(t) for t in texts], reproduce="memconform run")
    result.failures = [redact_failure(failure, redactor)]
    writer.result(result)
    writer.footer({"passed": 0, "failed": 1, "errored": 0, "skipped": 0}, [], 1,
                  [{"suite": "demo", "note": text}], [])
    writer.close()
    write_rendered(tmp, Report.from_path(tmp / "report.jsonl"))
    saved = save_sequence(tmp, redactor, texts)
    terminal = io.StringIO()
    say = Printer(redactor, terminal)
    for t in texts:
        say(t)
    files = {p.name: p.read_text("utf-8") for p in tmp.rglob("*") if p.is_file() and p.suffix != ".svg"}
    return {**files, "sequence": saved.read_text("utf-8"), "terminal": terminal.getvalue()}


def save_sequence(tmp: Path, redactor: Redactor, texts: list[str]) -> Path:
    ctx = types.SimpleNamespace(
        report_dir=tmp, redactor=redactor, check_id="demo.sequence", run_id="r1", reproduce_base="",
        suite=types.SimpleNamespace(name="demo"), profile=types.SimpleNamespace(name="ci", seed=1, options={}),
        target=types.SimpleNamespace(description="python:demo"),
    )
    recorder = Recorder(ctx)
    for t in texts:
        recorder.steps.append({"by": "target", "op": "echo", "body": {"q": t}, "reply": {"status": "ok", "body": t}})
    saved = sequence_files.save(ctx, recorder)
    assert saved is not None
    return saved[0]


@SETTINGS
@given(case=planted())
def test_no_form_of_the_key_reaches_any_report_file_or_the_terminal(tmp_path_factory, case):
    key, texts = case
    found = plant_everything(tmp_path_factory.mktemp("forms"), key, texts)
    assert key_leaks(found, key) == [], (key, texts)


def test_the_property_would_see_a_leak():
    """A negative control: without redaction the same plant is found in every encoding."""
    key = "abc+/=DEF:ghi jkl-0123456789"
    for name, encode in ENCODERS.items():
        assert key_leaks({"x": encode(key)}, key) != [], name
        assert key_leaks({"x": encode(key[5:])}, key) != [], name
