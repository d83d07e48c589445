"""The block scan of a memory.jsonl file finds exactly what the line-by-line scan finds.

`emp.scan_file` judges a block of lines whole and reads it again line by line only when some line
is not clean; these tests hold it to the line scan (`emp.scan(emp.iter_lines(path))`) on files with
every kind of line a rule looks at, placed at block edges, and on lines the fast reader sees
differently (integers past 64 bits, NaN, deep nesting, blank lines, CR LF, bad UTF-8).
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

import pytest
from memconform.suites.emp import format as emp
from memconform.suites.emp.format import lines as emp_lines  # the module whose globals the scanner reads


def _good(rng: random.Random, i: int) -> dict:
    line = {"v": "1.0", "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "ts": 1701234567890 + i,
            "src": rng.choice(["com.example.chat", "org.example.notes"]), "content": f"note {i} — café"}
    if rng.random() < 0.5:
        line["tags"] = ["ui", f"t{i % 7}"]
    if rng.random() < 0.3:
        line["meta"] = {"n": i}
    if rng.random() < 0.3:
        line["emb"] = [rng.random(), 1, -2.5]
    if rng.random() < 0.3:
        line["type"] = "fact"
    return line


def _dump(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _bad_variants(rng: random.Random, i: int) -> list[bytes]:
    """One line per way a line can differ from a clean one (each breaks a rule, takes a reading, or
    only reads differently in the fast reader while staying clean)."""
    good = _good(rng, i)

    def with_(**changes: object) -> bytes:
        return _dump({**good, **changes})

    missing = dict(good)
    del missing["src"]
    uuid1 = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
    return [
        with_(v="1.1"), with_(v="2"), with_(v=["1.0"]), with_(v=1.0),
        with_(id=uuid1), with_(id=good["id"].upper()), with_(id=good["id"][:-1] + "g"), with_(id=good["id"] + "\n"),
        with_(id="é" * 36), with_(id=good["id"][:8] + good["id"][9] + "-" + good["id"][10:]), with_(id=good["id"][:19] + "c" + good["id"][20:]), with_(id=7),
        with_(ts=-1), with_(ts=1.5), with_(ts=2.0), with_(ts=True), with_(ts=2**64 + 1), with_(ts=-(2**63) - 1),
        with_(ts="1"), with_(src="nodots"), with_(src=5), with_(content=5), with_(content="encrypted:aes:QUJD"),
        with_(content="encrypted:oops"), with_(content="plain, then encrypted:x"), with_(type=3),
        with_(tags=["UI"]), with_(tags=["ΑΣ"]), with_(tags="ui"), with_(tags=[1]), with_(meta=[]), with_(meta=None),
        with_(emb=[True]), with_(emb=["1"]), with_(emb={}), with_(emb=[2**70]), with_(extra={"n": 10**25}),
        _dump(missing), _dump([good]), b"[]", b"null", b"{", b"not json", b"", b"   ", b"\r",
        with_(meta={"deep": json.loads("[" * 600 + "]" * 600)}), with_(meta={"ok": json.loads("[" * 400 + "]" * 400)}),
        b"\xef\xbb\xbf" + _dump(good), _dump(good)[:-1] + b"\xff}", _dump(good).replace(b"}", b',"x":NaN}'),
        _dump(good).replace(b'"fact"', b'"\\ud800"'), _dump(good) + b"\r", _dump(good) + b" ", b" " + _dump(good),
        _dump(good).replace(b"}", b',"v":"9.9"}'),
    ]


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> tuple[emp.Findings, emp.Findings]:
    monkeypatch.setattr(emp_lines, "BLOCK_BYTES", block)
    return emp.scan(emp.LineStream(path)), emp.scan(emp.iter_lines(path))


@pytest.mark.parametrize("block", [64, 700, 5000, emp.BLOCK_BYTES, 1 << 20])
def test_block_scan_equals_line_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    rng = random.Random(block)
    lines = [_dump(_good(rng, i)) for i in range(300)]
    variants = _bad_variants(rng, 1000)
    for bad in variants:
        lines.insert(rng.randrange(len(lines) + 1), bad)
    path = tmp_path / "memory.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    by_block, by_line = _both(path, monkeypatch, block)
    assert by_block == by_line
    assert sum(by_line.counts.values()) >= len(variants) // 2  # the variants are seen as problems


def test_clean_blocks_pass_without_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean file: every block is judged whole (the line scan is never entered) and all lines counted."""
    rng = random.Random(3)
    path = tmp_path / "memory.jsonl"
    path.write_bytes(b"\r\n".join(_dump(_good(rng, i)) for i in range(2000)))  # CR LF, no final line feed
    calls: list[int] = []
    monkeypatch.setattr(emp_lines, "_scan_lines", lambda found, lines: calls.append(1))
    by_block = emp.scan_file(path)
    assert by_block.lines == 2000 and not by_block.counts and not calls


@pytest.mark.parametrize("line", [
    b'{"v":"1.0","id":"%s","ts":1,"src":"a.b","content":"x"}',
    b'{"v":"1.0","id":"%s","ts":-9223372036854775809,"src":"a.b","content":"x"}',
    b'{"v":"1.0","id":"%s","ts":18446744073709551616,"src":"a.b","content":"x"}',
])
def test_each_line_alone_and_at_every_block_edge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: bytes) -> None:
    ids = [str(uuid.UUID(int=n, version=4)).encode() for n in range(40)]
    text = b"\n".join(line % i for i in ids)
    path = tmp_path / "memory.jsonl"
    path.write_bytes(text)
    for block in range(1, len(line) + 40, 7):
        by_block, by_line = _both(path, monkeypatch, block)
        assert by_block == by_line and by_line.lines == 40


def test_ids_that_line_up_only_when_joined_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block's ids are checked joined: neighbours whose lengths or dashes make up for each other
    (35 and 37 characters, a dash moved into the next id) are still each judged as one id."""
    rng = random.Random(5)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(8)]
    pairs = [(ids[0][:-1], ids[0][-1] + ids[1]), (ids[2] + "-", ids[3][1:]),
             (ids[4][:8] + "a" + ids[4][9:], ids[5][:8] + "--" + ids[5][10:]), (ids[6][:35], "\n" + ids[7])]
    lines = []
    for i, pair in enumerate(pairs):
        lines += [_dump(dict(_good(rng, i), id=one)) for one in pair] + [_dump(_good(rng, i + 100))]
    path = tmp_path / "memory.jsonl"
    path.write_bytes(b"\n".join(lines))
    by_block, by_line = _both(path, monkeypatch, 1 << 20)
    assert by_block == by_line and by_line.counts == {"id_uuid4": 8}


def test_a_line_over_the_readers_memory_bound_is_read_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson reads a 1.6 MB line of 400,000 one-letter strings; the LINE reader refuses it (the objects
    would take more memory than its bound allows for the text): the block scan must say so too."""
    rng = random.Random(9)
    many = _dump(dict(_good(rng, 1), meta={"x": ["a"] * 400_000}))
    path = tmp_path / "memory.jsonl"
    path.write_bytes(b"\n".join([_dump(_good(rng, 0)), many, _dump(_good(rng, 2))]))
    by_block, by_line = _both(path, monkeypatch, 1 << 16)
    assert by_block == by_line and by_line.counts == {"lines_are_json_objects": 1}
