"""The key in every form a target may give it back in: url-encoded (either hex case, `+` for a space),
JSON-escaped (`\\/`, \\u00XX), base64 (standard and url-safe, padded or not, inside a larger base64
stream at any alignment), its characters in different forms mixed (an encoder that escapes only some
characters; %XX, \\uXXXX and HTML references side by side), or cut so that a buffer starts or ends
inside it. A property test plants random keys in each form into every report file (report.jsonl,
junit.xml, summary.md, report.html), a saved sequence (a raw body kept as base64 too) and the
terminal, and finds no run of 16 of the key's characters in any of them, read as they are or url-,
JSON-, HTML- or base64-decoded."""

from __future__ import annotations

import base64
import io
import json
import string
import types
import urllib.parse
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.core import sequence_files
from memconform.core.redact import Printer, Redactor
from memconform.core.report import Report, ReportWriter
from memconform.core.results import Failure, Outcome, Result
from memconform.core.runner import redact_failure
from memconform.core.sequence import Recorder
from memconform.run.rendered import write_rendered
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


def _base64(prefix: bytes, suffix: bytes, urlsafe: bool, padded: bool):
    """The key's UTF-8 inside a larger base64 stream: `prefix` before it sets its alignment."""
    def encode(k: str) -> str:
        data = prefix + k.encode("utf-8") + suffix
        text = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode("ascii")
        return text if padded else text.rstrip("=")
    return encode


CHAR_FORMS = {
    "literal": lambda c: c,
    "url": lambda c: "".join(f"%{b:02X}" for b in c.encode("utf-8")),
    "url-lower": lambda c: "".join(f"%{b:02x}" for b in c.encode("utf-8")),
    "u": lambda c: f"\\u{ord(c):04x}",
    "u-upper": lambda c: f"\\u{ord(c):04X}",
    "u-twice": lambda c: f"\\\\u{ord(c):04x}",
    "html-hex": lambda c: f"&#x{ord(c):x};",
    "html-decimal": lambda c: f"&#{ord(c)};",
}


def _mixed(forms: list[str]):
    """Each character of the key in the form drawn for its position (cycling through `forms`)."""
    def encode(k: str) -> str:
        return "".join(CHAR_FORMS[forms[i % len(forms)]](c) for i, c in enumerate(k))
    return encode


def _some_url_encoded(k: str) -> str:
    """An encoder that escapes only the characters it thinks unsafe (here: none of the unreserved ones)."""
    return urllib.parse.quote(k, safe="~-._:=")


@st.composite
def encoder(draw):
    kind = draw(st.sampled_from(["plain", "base64", "mixed", "partial-url"]))
    if kind == "plain":
        return ENCODERS[draw(st.sampled_from(sorted(ENCODERS)))]
    if kind == "base64":
        prefix = draw(st.binary(min_size=0, max_size=5))  # 0, 1 or 2 bytes modulo 3: every alignment
        return _base64(prefix, draw(st.binary(max_size=4)), draw(st.booleans()), draw(st.booleans()))
    if kind == "mixed":
        return _mixed(draw(st.lists(st.sampled_from(sorted(CHAR_FORMS)), min_size=2, max_size=6)))
    return _some_url_encoded


@st.composite
def planted(draw):
    """(key, texts a target could hand back): the key whole and cut at a buffer's edges, in one encoding."""
    key = draw(KEYS)
    encode = draw(encoder())
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
        # a raw request body that is not UTF-8 is kept as base64: the key's bytes inside it, and the text
        raw = b"\xff\xfe" + t.encode("utf-8") + b"\x80" + KEY_BYTES_MARK + redactor_secret(redactor) + b"\x00"
        recorder.steps.append({"by": "target", "op": "upload", "raw_base64": base64.b64encode(raw).decode("ascii")})
    saved = sequence_files.save(ctx, recorder)
    assert saved is not None
    for step in json.loads(saved[0].read_text("utf-8"))["steps"]:
        if "raw_base64" in step:  # still a body replay can send: masked in its bytes, not in its base64
            assert base64.b64decode(step["raw_base64"], validate=True).startswith(b"\xff\xfe")
        else:  # or, where its base64 itself reads as part of the key, withheld and said so
            assert step["op"] != "upload" or step["raw_withheld"]
    return saved[0]


KEY_BYTES_MARK = b"key:"


def redactor_secret(redactor: Redactor) -> bytes:
    return redactor.secrets[0].encode("utf-8")


@SETTINGS
@given(case=planted())
def test_no_form_of_the_key_reaches_any_report_file_or_the_terminal(tmp_path_factory, case):
    key, texts = case
    found = plant_everything(tmp_path_factory.mktemp("forms"), key, texts)
    assert key_leaks(found, key) == [], (key, texts)


def test_the_property_would_see_a_leak():
    """A negative control: without redaction the same plant is found in every encoding."""
    key = "abc+/=DEF:ghi jkl-0123456789"
    encoders = {**ENCODERS, "partial-url": _some_url_encoded,
                **{f"mixed-{a}-{b}": _mixed([a, b]) for a in CHAR_FORMS for b in CHAR_FORMS if a != b},
                **{f"base64-{p}-{u}-{d}": _base64(b"\x01" * p, b"", u, d)
                   for p in range(3) for u in (False, True) for d in (False, True)}}
    for name, encode in encoders.items():
        assert key_leaks({"x": encode(key)}, key) != [], name
        assert key_leaks({"x": encode(key[5:])}, key) != [], name
    raw = base64.b64encode(b"\xff" + key.encode() + b"\x80").decode("ascii")
    assert key_leaks({"x": json.dumps({"raw_base64": raw})}, key) != []


@SETTINGS
@given(key=KEYS, mixed=st.lists(st.sampled_from(sorted(CHAR_FORMS)), min_size=2, max_size=6), cut=st.integers(0, 4))  # keys have 16 characters at least
def test_a_fragment_with_its_characters_in_mixed_forms_is_masked_from_twelve_characters(key, mixed, cut):
    """A run of MIN_RUN key characters in mixed forms is masked; text of no key character is left alone."""
    from memconform.core.secret_forms import MIN_RUN

    redactor = Redactor([key])
    encode = _mixed(mixed)
    run = key[cut:cut + MIN_RUN]
    masked = redactor.text(f"<{encode(run)}>")
    assert run not in decodings_of(masked) and masked.count("***") + masked.count("###") >= 1, masked
    assert redactor.text("<" + encode("()[]{}|<>!?" * 2) + ">") == "<" + encode("()[]{}|<>!?" * 2) + ">"  # a control


def decodings_of(text: str) -> str:
    from zoo_support import decodings

    return "\n".join(decodings(text))


def test_a_raw_body_kept_as_base64_is_masked_in_its_bytes_and_still_decodes(tmp_path):
    key = "sk-raw+Key/with=Chars 0123456789"
    redactor = Redactor([key])
    raw = b"\xff\xfe" + key.encode() + b"\x80 tail " + key[4:20].encode() + b"\x00"
    saved = save_raw_steps(tmp_path, redactor, [raw])
    body = base64.b64decode(saved[0]["raw_base64"], validate=True)
    assert body.startswith(b"\xff\xfe") and body.endswith(b"\x80 tail ***\x00")
    assert key[:12].encode() not in body and key[4:16].encode() not in body
    assert key_leaks({"sequence": json.dumps(saved)}, key) == []


def test_a_raw_body_whose_base64_reads_as_the_key_is_withheld_not_broken(tmp_path):
    """A control for the case the masking of bytes cannot help: the base64 text is itself a run of the key."""
    key = "AAAAAAAAAAAAAAAAAAAAbcdefghij"
    saved = save_raw_steps(tmp_path, Redactor([key]), [b"\x00" * 30 + b"\xff"])
    assert "raw_base64" not in saved[0] and saved[0]["raw_withheld"].startswith("31 bytes")


def save_raw_steps(tmp: Path, redactor: Redactor, bodies: list[bytes]) -> list[dict]:
    ctx = types.SimpleNamespace(
        report_dir=tmp, redactor=redactor, check_id="demo.sequence", run_id="r1", reproduce_base="",
        suite=types.SimpleNamespace(name="demo"), profile=types.SimpleNamespace(name="ci", seed=1, options={}),
        target=types.SimpleNamespace(description="python:demo"),
    )
    recorder = Recorder(ctx)
    for raw in bodies:
        recorder.steps.append({"by": "target", "op": "upload", "raw_base64": base64.b64encode(raw).decode("ascii")})
    saved = sequence_files.save(ctx, recorder)
    assert saved is not None
    return json.loads(saved[0].read_text("utf-8"))["steps"]


def test_a_key_right_after_backslashes_is_masked_in_any_form():
    """Matches enter a run of backslashes only at its first one (so no text makes them slow); a key
    right after a backslash, or \\u-escaped behind several, is still found."""
    redactor = Redactor(["short%key"])
    assert redactor.text("x\\short%25key y \\\\u0073hort%key") == "x\\*** y ***"
    assert redactor.text("\\" * 5000) == "\\" * 5000  # a control: backslashes alone are left alone


def test_a_short_key_masks_itself_not_the_letters_of_its_base64():
    """A one- or few-character key (a toy key on a local server) is masked wherever it stands (inside words
    too: never a leak), and nothing else is: its base64 forms at an alignment are single letters, not secrets."""
    from memconform.core.redact import Redactor

    for key in ("k", "Q7", "zz9"):
        redactor = Redactor([key])
        line = f"memconform run: suites omp; target http://127.0.0.1:1; report /tmp/x; secret {key}"
        assert redactor.text(line) == "memconform run: suites omp; target http://127.0.0.1:1; report /tmp/x; secret ***"
    long_key = "s3cr3t-KEY-0123456789abcdef"
    encoded = base64.b64encode(long_key.encode()).decode()
    assert encoded not in Redactor([long_key]).text(f"Authorization: Basic {encoded}")  # the control: long keys' base64 still masked
