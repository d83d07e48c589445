"""`memconform validate` names a format by each suite's Detector (suites/<name>/detect.py, loaded without
the suite) and loads only the suite named (issue 33, start-up). The Detector answers what the SuiteSpec's
own `detect` answers on every input, and naming with the Detectors gives the same suite, the same way of
naming and the same findings as naming with every suite loaded."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from memconform.core.detectors import Detector, detectors
from memconform.core.profile import Profile
from memconform.core.suite import all_suites, get_suite
from memconform.kit.fixtures_loader import fixture_root
from memconform.kit.windows import plan
from memconform.run import validate
from memconform.run.validate import HEAD_BYTES, validate_file

SUITE_NAMES = ("amps", "emp", "memorizz", "memoryai", "omp")
ENTRY = '{"v":"1.0","id":"a","ts":1,"src":"com.a.b","content":""}'


def fixture_documents() -> list[tuple[str, Any]]:
    """(case id, document) of every fixture of every suite, valid and invalid."""
    found = []
    for suite in SUITE_NAMES:
        for path in sorted((fixture_root() / suite).glob("*valid/*.json")):
            case = json.loads(path.read_text("utf-8"))
            if "document" in case:
                found.append((f"{suite}/{path.parent.name}/{path.stem}", case["document"]))
    return found


FIXTURES = fixture_documents()


def texts_of(document: Any) -> list[bytes]:
    """The ways a document reaches `detect` as text: as written (compact, indented, one line, with its
    non-ASCII escaped or not) and as a head cut at a line's end, as stream_suite hands it."""
    if isinstance(document, str):
        raw = [document.encode("utf-8", "surrogatepass")]
    else:
        raw = [json.dumps(document).encode(), json.dumps(document, indent=1).encode(),
               json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")]
    heads = [r[:HEAD_BYTES] for r in raw]
    return raw + [h[: h.rfind(b"\n") + 1] for h in heads if b"\n" in h]


# inputs where a quick answer could differ from the reader's: escaped keys, 20 lines and the 21st,
# lines orjson cannot read, bytes that are not UTF-8, duplicate keys, lists of triples, a format member
# deep inside another document
EDGES: list[Any] = [
    ENTRY.encode(), (ENTRY + "\n").encode(), ENTRY, b"\n\n  \n" + ENTRY.encode(),
    b'{"\\u0076":"1.0","id":"a","ts":1,"src":"com.a.b","content":""}',
    b'{"v":"1.0","id":"a","ts":1,"v":"1.0"}', b'{"v":"1.0","id":"a","ts":1e999}',
    b'{"v":"1.0","id":"a","ts":123456789012345678901234567890}', b'{"v":"1.0","id":"a","ts":NaN}',
    b"\xff\xfe" + ENTRY.encode(), ENTRY.encode() + b"\xff",
    b"{}\n" * 19 + ENTRY.encode(), b"{}\n" * 20 + ENTRY.encode(), b"[1]\n" * 25 + ENTRY.encode(),
    b'"v" "id" "ts"', b'{"a": "\\"v\\" \\"id\\" \\"ts\\""}', b"{\x1c}\n" + ENTRY.encode(),
    ENTRY.encode()[:-3], (ENTRY[:-3] + "\n" + ENTRY).encode(), b'{"v":"1.0","id":"a","ts":-', b'{"v":"1.0","id":"a","ts":1e',
    b'{"v":"1.0","id":"a","ts":NaN', b'{"v":"1.0","id":"a","ts":1,"x":"\\u00', b'{"v":"1.0","id":"a","ts":[[[[',
    (b'{"v":"1.0","id":"a","ts":1,"content":"' + b"\\u00e9" * 20000 + b'"}')[:HEAD_BYTES],
    [[1, 2, {"v": 1, "id": 2, "ts": 3}]], [[1, 2, {}]], [1, 2], [], {}, None, 3, "text", b"",
    {"v": "1.0", "id": "a", "ts": 1}, {"format": "memorizz.memory"}, {"format": "memoryai-bundle"},
    b'{"format": "memorizz.memory"}', b'{"a": {"format" :\n "memorizz.memory"}}', b'{"format": "memorizz.memoryx"}',
    {"export_version": "0.1.0", "subject": {}, "atoms": [], "artifacts": []},
    {"export_version": "0.1.0", "subject": [], "atoms": [], "artifacts": []},
    {"omp_version": "0.1", "memories": []}, {"omp_version": "0.1", "memories": {}},
]


def answer(detect: Any, value: Any) -> Any:
    """What `detect` says, or the kind of exception it raises (validate's `detects` takes some as no)."""
    try:
        return bool(detect(value))
    except Exception as exc:  # noqa: BLE001  the same exception type on both sides is the same answer
        return type(exc).__name__


@pytest.fixture(scope="module")
def light() -> dict[str, Detector]:
    found = detectors()
    assert found is not None, "every built-in suite has a detect module"
    return {d.name: d for d in found}


def test_every_suite_has_a_detector_in_suite_order(light: dict[str, Detector]) -> None:
    assert list(light) == [s.name for s in all_suites()] == sorted(SUITE_NAMES)
    for name, detector in light.items():
        assert detector.streamed == (get_suite(name).stream is not None), name


def test_the_detectors_constants_are_the_formats() -> None:
    from memconform.suites.memorizz import detect as memorizz_detect
    from memconform.suites.memorizz.format import constants
    from memconform.suites.memoryai import detect as memoryai_detect
    from memconform.suites.memoryai.format import bundle

    assert memorizz_detect.FORMAT == constants.FORMAT and memoryai_detect.FORMAT == bundle.FORMAT


@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_a_detector_answers_as_its_suite_on_every_fixture_and_edge(suite: str, light: dict[str, Detector]) -> None:
    full, quick = get_suite(suite).detect, light[suite].detect
    inputs = [*EDGES, *(doc for _, doc in FIXTURES), *(t for _, doc in FIXTURES for t in texts_of(doc))]
    differ = [repr(v)[:120] for v in inputs if answer(full, v) != answer(quick, v)]
    assert differ == []
    said = {answer(quick, v) for v in inputs}
    assert True in said and False in said  # a positive and a negative control among the inputs


def written(tmp_path: Path, case: str, document: Any, name: str = "document.json") -> Path:
    path = tmp_path / case.replace("/", "_")
    path.mkdir()
    text = document if isinstance(document, str) else json.dumps(document)
    (path / name).write_bytes(text.encode("utf-8", "surrogatepass"))
    return path / name


def judged(path: Path, monkeypatch: pytest.MonkeyPatch, light: bool, window: int | None = None) -> Any:
    """(suite, how it was named, each result's check and outcome, each failure) of validate_file, naming
    with the Detectors or with every suite loaded; a file no format names gives its error."""
    with monkeypatch.context() as patched:
        if not light:
            patched.setattr(validate, "detectors", lambda: None)
            patched.setattr(plan, "detectors", lambda: None)
        try:
            suite, how, results = validate_file(path, None, Profile(), None, 10 * 2**20, window)
        except Exception as exc:  # noqa: BLE001  the same refusal either way is the same answer
            return type(exc).__name__, str(exc)
    return suite.name, how, [(r.check_id, r.outcome.value, [f.to_json() for f in r.failures]) for r in results]


@pytest.mark.parametrize(("case", "document"), FIXTURES, ids=[c for c, _ in FIXTURES])
def test_naming_by_detectors_gives_the_same_findings(case: str, document: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = written(tmp_path, case, document)
    quick = judged(path, monkeypatch, light=True)
    assert quick == judged(path, monkeypatch, light=False)
    assert quick[0] == case.split("/")[0]  # a positive control: the fixture's own suite is named


@pytest.mark.parametrize(("text", "name", "named"), [
    (b'{"taxonomy": {}, "stores": {}}', "x.json", "memorizz"),  # a near-miss of an envelope
    (b'{"memories": [], "server": {}}', "x.json", "omp"),
    (b'{"a": 1}', "export.amps.json", "amps"),  # the file name
    (b'{"format": "memoryai-bundle", "version": 1, "chunks": [', "x.json", "memoryai"),  # cut off: its first members
    (b'{"a": 1}', "x.json", None),  # nothing names it
    (b"not json at all", "x.json", None),
    (ENTRY.encode() + b"\n" + ENTRY.encode() + b"\n", "memory.jsonl", "emp"),
])
def test_naming_that_detect_does_not_decide_is_the_same(text: bytes, name: str, named: str | None, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / name
    path.write_bytes(text)
    quick = judged(path, monkeypatch, light=True)
    assert quick == judged(path, monkeypatch, light=False)
    assert quick[0] == (named or "HarnessError"), quick


@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_the_document_check_modules_hold_every_document_check_in_run_order(suite: str) -> None:
    """validate imports only SuiteSpec.document_checks: in a fresh interpreter they register the document
    checks a whole load has, in the same order, and a whole load afterwards keeps the run's order."""
    code = textwrap.dedent(f"""
        import json
        from memconform.core.suite import get_suite
        spec = get_suite({suite!r})
        alone = [c.id for c in spec.load_document_checks()]
        after = [c.id for c in spec.registered().values()]
        print(json.dumps({{"alone": alone, "after": after}}))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    spec = get_suite(suite)
    whole = list(spec.registered())
    assert seen["alone"] == [c.id for c in spec.registered().values() if c.kind == "document"]
    assert seen["alone"] and seen["after"] == whole  # a positive control, and the order of a whole load


def test_a_detectors_window_sections_are_its_plans(light: dict[str, Detector]) -> None:
    for name, detector in light.items():
        plan_class = plan.plan_of(get_suite(name))
        assert detector.sections == (plan_class.sections if plan_class is not None else ()), name
    assert light["amps"].sections and light["memoryai"].sections  # a positive control: two formats have plans


@pytest.mark.parametrize("suite", ["amps", "memoryai"])
def test_a_file_read_in_windows_is_named_and_judged_the_same_by_detectors(suite: str, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over a (shrunk) window, the sections' owner comes from the Detectors and only its suite loads: the same
    suite, naming and findings as with every suite's plan loaded."""
    case = "linked-complete" if suite == "amps" else "full_bundle_all_sections"
    document = json.loads((fixture_root() / suite / "valid" / f"{case}.json").read_text("utf-8"))["document"]
    path = written(tmp_path, suite, document)
    seen: list[bool] = []
    read = plan.read_with_plan

    def noted(*args: Any, **kwargs: Any) -> Any:
        found = read(*args, **kwargs)
        seen.append(found is not None)
        return found

    monkeypatch.setattr(plan, "read_with_plan", noted)
    quick = judged(path, monkeypatch, light=True, window=256)
    assert quick == judged(path, monkeypatch, light=False, window=256)
    assert seen == [True, True]  # a positive control: both read the file in windows
    assert quick[0] == suite and quick[1] == "detected"
