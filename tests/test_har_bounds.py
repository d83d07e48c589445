"""exchanges.har is bounded (the last MAX_ENTRIES exchanges, MAX_BODY bytes of each body) and says so in its
own `comment` fields (HAR 1.2 allows them on the log, on postData and on content), so a reader of the file
alone knows what was cut."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from memconform.core.redact import Redactor
from memconform.targets import exchanges
from memconform.targets.exchanges import MAX_BODY, MAX_ENTRIES, ExchangeLog, finish, merge_hars, write_har


def _log(count: int, request_size: int, response_size: int) -> ExchangeLog:
    log = ExchangeLog()
    for i in range(count):
        request = httpx.Request("POST", f"http://127.0.0.1:9/v1/things/{i}", content=b"q" * request_size,
                                headers={"content-type": "application/json"})
        finish(log.begin(request), 200, {"content-type": "application/json"}, b"r" * response_size, 0.001)
    return log


def _har(tmp_path: Path, log: ExchangeLog) -> dict:
    path = tmp_path / "exchanges.har"
    write_har(path, list(log.entries), log.count - len(log.entries), Redactor([]), "test")
    return json.loads(path.read_text("utf-8"))["log"]


def test_the_bounds_are_the_documented_ones() -> None:
    assert (MAX_ENTRIES, MAX_BODY) == (2000, 8 * 1024)


def test_a_run_past_the_bounds_says_what_was_cut(tmp_path: Path) -> None:
    har = _har(tmp_path, _log(MAX_ENTRIES + 3, MAX_BODY + 100, MAX_BODY * 2))
    assert len(har["entries"]) == MAX_ENTRIES
    assert har["entries"][0]["request"]["url"].endswith("/v1/things/3")  # the last ones kept, the first dropped
    assert "the last 2000 exchanges" in har["comment"] and "8192 bytes (8 KiB)" in har["comment"]
    assert "2000 exchanges kept, the first 3 not kept." in har["comment"]
    entry = har["entries"][-1]
    assert entry["request"]["postData"]["comment"] == (
        f"body cut: the first {MAX_BODY} of {MAX_BODY + 100} bytes recorded (at most {MAX_BODY} per body)")
    assert entry["response"]["content"]["comment"] == (
        f"body cut: the first {MAX_BODY} of {MAX_BODY * 2} bytes recorded (at most {MAX_BODY} per body)")
    assert entry["response"]["content"]["size"] == MAX_BODY * 2  # the size is the body's, not what was kept


def test_a_run_within_the_bounds_says_nothing_was_cut(tmp_path: Path) -> None:
    """The positive control: whole bodies carry no cut comment, and the log says none was dropped."""
    har = _har(tmp_path, _log(3, 10, MAX_BODY))
    assert len(har["entries"]) == 3 and har["comment"].endswith("This run: 3 exchanges kept, none dropped.")
    for entry in har["entries"]:
        assert "comment" not in entry["request"]["postData"] and "comment" not in entry["response"]["content"]
        assert entry["response"]["content"]["text"] == "r" * MAX_BODY


def test_every_comment_is_where_har_1_2_allows_one(tmp_path: Path) -> None:
    har = _har(tmp_path, _log(2, MAX_BODY + 1, MAX_BODY + 1))
    assert isinstance(har["comment"], str) and exchanges.START_UP not in har["comment"]
    for entry in har["entries"]:
        assert set(entry) <= {"pageref", "startedDateTime", "time", "request", "response", "cache", "timings",
                              "serverIPAddress", "connection", "comment"}
        assert set(entry["request"]["postData"]) <= {"mimeType", "params", "text", "comment"}
        assert set(entry["response"]["content"]) <= {"size", "compression", "mimeType", "text", "encoding", "comment"}


def test_the_parts_of_an_xdist_run_make_one_har_within_the_bounds(tmp_path: Path) -> None:
    parts = []
    for worker, count in (("gw0", MAX_ENTRIES + 1), ("gw1", 5)):
        (tmp_path / worker).mkdir()
        parts.append(tmp_path / worker / "exchanges.har")
        log = _log(count, 1, 1)
        write_har(parts[-1], list(log.entries), log.count - len(log.entries), Redactor([]), "test")
    assert merge_hars(tmp_path / "exchanges.har", [*parts, tmp_path / "gw2" / "exchanges.har"])
    har = json.loads((tmp_path / "exchanges.har").read_text("utf-8"))["log"]
    assert len(har["entries"]) == MAX_ENTRIES and har["_dropped"] == 1 + 5
    assert har["comment"].endswith(f"This run: {MAX_ENTRIES} exchanges kept, the first 6 not kept.")
    times = [e["startedDateTime"] for e in har["entries"]]
    assert times == sorted(times)
    assert not merge_hars(tmp_path / "none.har", [tmp_path / "gw9" / "exchanges.har"])
