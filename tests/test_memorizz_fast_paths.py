"""MemoRizz bulk paths say what the one-by-one readings say: embedding keys found among a store's
distinct keys, and the digest check's skipping of the second key order."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.suites.memorizz import format as mz

FUZZ = settings(max_examples=150, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
KEYS = ["text", "embedding", "embeddings", "vector", "query_embedding", "title_embeddings", "embedding_model",
        "vectors", "x_embedding", "id"]
VALUES = st.sampled_from([None, [], "", [0.5], "v", 0, {}])


def one_by_one(archive):
    """(path, reading) of every embedding the scan should report, each data key judged on its own."""
    found = []
    for store, records in archive["stores"].items():
        for i, record in enumerate(records):
            data = record.get("data") if isinstance(record, dict) else None
            if not isinstance(data, dict):
                continue
            for key in sorted(data):
                reading = mz.embedding_key(key)
                if reading is not None and data[key] not in (None, [], ""):
                    found.append((f"$.stores.{store}[{i}].data.{key}", (reading,) if reading else ()))
    return found


@st.composite
def archives(draw):
    archive = mz.empty_archive()
    for n, store in enumerate(draw(st.lists(st.sampled_from(mz.STORES), max_size=3, unique=True))):
        rows = draw(st.lists(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4), max_size=4))
        archive["stores"][store] = [{"id": f"r{n}-{i}", "data": {k: v for k, v in row.items() if k != "id"}}
                                    for i, row in enumerate(rows)]
        if draw(st.booleans()):
            archive["stores"][store].append("not a record")
    archive["manifest"]["includes"]["embeddings"] = draw(st.sampled_from([False, True, None]))
    return mz.seal(archive)


@FUZZ
@given(archives())
def test_embedding_problems_are_those_of_each_key_judged_alone(archive):
    problems = mz.scan(archive).get("embeddings_follow_includes", [])
    expected = [] if archive["manifest"]["includes"]["embeddings"] is True else one_by_one(archive)
    assert [(p.path, p.readings) for p in problems] == expected


def test_the_scan_finds_an_embedding_in_one_record_of_many():
    archive = mz.empty_archive()
    archive["stores"]["entity_memory"] = [{"id": f"m{i}", "data": {"text": "t"}} for i in range(50)]
    archive["stores"]["entity_memory"][37]["data"]["note_embedding"] = [0.25]
    archive["stores"]["entity_memory"][38]["data"]["vector"] = [0.5]
    problems = mz.scan(mz.seal(archive))["embeddings_follow_includes"]
    assert [(p.path, p.readings) for p in problems] == [
        ("$.stores.entity_memory[37].data.note_embedding", ()),
        ("$.stores.entity_memory[38].data.vector", ("M8:with-vector",))]


@FUZZ
@given(st.binary(max_size=80) | st.text(alphabet="0123456789e-+.,]}\"ab\ue000\U0001f600 ", max_size=60).map(str.encode))
def test_one_look_at_the_text_answers_as_the_separate_searches(text):
    from memconform.core.json_reader import has_digit_run
    from memconform.suites.memorizz.format.canonical_fast import text_facts

    facts = text_facts(text)
    assert facts.long_digits == has_digit_run(text, 16)
    assert facts.order_sensitive == any(lead in text for lead in range(0xEE, 0xF5))
    if not facts.number_rules:  # no exponent token: none of the shapes orjson writes one in
        assert not any(f"{d}e{s}{n}{end}".encode() in text
                       for d in "0123456789" for s in "+-" for n in ("1", "22", "308") for end in ",]}")


def test_an_unsafe_integer_is_still_found_through_validate(tmp_path, capsys):
    from memconform.cli.main import main

    archive = mz.empty_archive()
    archive["stores"]["entity_memory"] = [{"id": "e1", "data": {"count": 2**53 + 1, "w": 0.5}}]
    path = tmp_path / "big.memorizz.json"
    path.write_text(json.dumps(mz.seal(archive)), "utf-8")
    main(["validate", str(path), "--check", "memorizz.integers_safe"])  # a SHOULD: a warning, exit 0
    assert "received 9007199254740993" in capsys.readouterr().out
    archive["stores"]["entity_memory"][0]["data"]["count"] = 2**53 - 1
    path.write_text(json.dumps(mz.seal(archive)), "utf-8")
    assert main(["validate", str(path), "--check", "memorizz.integers_safe"]) == 0
    assert "0 warnings" in capsys.readouterr().out


@FUZZ
@given(st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.text(max_size=5)
                    | st.floats(allow_nan=False, allow_infinity=False),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
                    max_leaves=20))
def test_marked_orjson_writer_gives_the_exact_writers_bytes(value):
    from memconform.suites.memorizz.format.canonical import marked_bytes

    doc = {"v": value}
    before = json.dumps(doc, sort_keys=True)
    written = marked_bytes(doc)
    assert json.dumps(doc, sort_keys=True) == before  # every marker put back
    if written is not None:  # None: orjson cannot write it (an integer past 64 bits); the exact writers do
        assert written == mz.canonical_text_exact(doc).encode("utf-8")
