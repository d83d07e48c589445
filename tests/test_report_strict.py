"""Nothing a target sends crashes the report: any value becomes strict JSON (no NaN/Infinity, no lone
surrogates, bounded nesting, huge integers said, not printed), read back by a strict reader."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.core.profile import Profile
from memconform.core.redact import Redactor, plain
from memconform.core.report import Report, ReportWriter
from memconform.core.results import Failure, Outcome, Result
from memconform.core.runner import Context, run_one
from memconform.render.junit import render_junit
from memconform.render.markdown import render_markdown

SETTINGS = settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))

# any code point, lone surrogates included (hypothesis leaves them out unless asked)
ANY_TEXT = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])), max_size=50)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True, allow_infinity=True),
    st.integers(), st.integers(min_value=10**1000, max_value=10**1000 + 5).map(lambda n: n ** 5), ANY_TEXT,
    st.binary(max_size=40),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner), st.frozensets(st.integers(), max_size=3),
        st.dictionaries(st.one_of(ANY_TEXT, st.integers(), st.none(), st.booleans(), st.floats()), inner, max_size=4),
    ),
    max_leaves=30,
)


def deep(n: int) -> list:
    value: list = []
    for _ in range(n):
        value = [value]
    return value


def strict_loads(text: str):
    def refuse(name):
        raise ValueError(name)

    text.encode("utf-8")  # no lone surrogate survived as a code point
    return json.loads(text, parse_constant=refuse)


def _check_values(value):
    if isinstance(value, float):
        assert math.isfinite(value)
    elif isinstance(value, dict):
        for v in value.values():
            _check_values(v)
    elif isinstance(value, list):
        for v in value:
            _check_values(v)


def write(tmp, received, expected, text) -> Report:
    writer = ReportWriter(tmp / "report.jsonl", Redactor(["sekrit"]))
    writer.header(target=text, suites=["demo"], profile="ci", seed=1, options={}, command=text)
    result = Result(check_id="demo.hostile", suite="demo", spec="s", section="§1", keyword="MUST", level="1",
                    sentence=text, outcome=Outcome.FAILED, reason=text, transcript=[text, text],
                    failures=[Failure(text, received, expected, text, text, (text,))])
    writer.result(result)
    writer.footer({"passed": 0, "failed": 1, "errored": 0, "skipped": 0}, [], 1,
                  [{"suite": "demo", "note": text}], [{"suite": "demo", "point": "P", "seen": [text], "checks": []}])
    writer.close()
    for line in (tmp / "report.jsonl").read_text("utf-8").split("\n")[:-1]:
        _check_values(strict_loads(line))
    report = Report.from_path(tmp / "report.jsonl")
    render_junit(report).encode("utf-8")
    render_markdown(report).encode("utf-8")
    return report


@SETTINGS
@given(received=VALUES, expected=VALUES, text=ANY_TEXT)
def test_any_value_makes_a_strict_report(tmp_path_factory, received, expected, text):
    write(tmp_path_factory.mktemp("r"), received, expected, text)


def test_the_known_hostile_values(tmp_path):
    loop: list = []
    loop.append(loop)
    hostile = {"nan": float("nan"), "inf": float("-inf"), "surrogate": "\ud800x\udfff", "big": 7 ** 20000,
               "deep": deep(10_000), "loop": loop, "bytes": b"\xff\xfe\x00", "key\ud800": 1, 3: {None: True}}
    report = write(tmp_path, hostile, deep(5000), "a\udc80b\x00\x1b[31m")
    assert report.results[0]["reason"].startswith("a\\udc80b")  # the surrogate said as text
    data = plain(hostile)
    assert (data["nan"], data["inf"], data["surrogate"]) == ("NaN", "-Infinity", "\\ud800x\\udfff")
    assert data["big"].startswith("<integer of ") and data["key\\ud800"] == 1 and data["3"] == {"null": True}
    assert "nested deeper than" in json.dumps(data["deep"]) and data["loop"] == ["<list that contains itself>"]


def test_a_check_meeting_hostile_data_still_gives_one_outcome(tmp_path):
    import demo_suite

    def hostile_check(ctx):
        yield Failure("hostile", deep(100_000), float("nan"))

    def recursion_check(ctx):
        def down(n):
            return down(n + 1)
        down(0)
        yield

    ctx = Context(suite=demo_suite.SUITE, target=None, profile=Profile.named("ci"))
    failed = run_one(demo_suite.make_check(hostile_check, "MUST", "1"), ctx)
    errored = run_one(demo_suite.make_check(recursion_check, "MUST", "1"), ctx)
    assert failed.outcome is Outcome.FAILED and errored.outcome is Outcome.ERRORED
    assert "RecursionError" in errored.reason
    writer = ReportWriter(tmp_path / "report.jsonl", Redactor())
    writer.header(target="t", suites=["demo"], profile="ci", seed=1, options={}, command="c")
    writer.result(failed)
    writer.result(errored)
    writer.close()
    assert len(Report.from_path(tmp_path / "report.jsonl", allow_truncated=True).results) == 2


@settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(payload=VALUES)
def test_a_whole_run_against_a_target_answering_anything(tmp_path_factory, payload):
    import demo_suite
    from memconform.run.session import Session

    demo_suite.install()
    try:
        demo_suite.Hostile.payload = payload
        tmp = tmp_path_factory.mktemp("run")
        outcome = Session(["demo"], "python:demo_suite:Hostile", Profile.named("ci"), tmp).run()
        assert outcome.exit_code in (0, 1)
        for line in (tmp / "report.jsonl").read_text("utf-8").split("\n")[:-1]:
            strict_loads(line)
        assert Report.from_path(tmp / "report.jsonl").footer["exit_code"] == outcome.exit_code
    finally:
        demo_suite.Hostile.payload = None
        demo_suite.uninstall()
