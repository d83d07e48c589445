"""Where the window reader cuts a section of objects whose elements hold nested objects (an AMPS atom's
`x-` extension object, a MemoryAI chunk's protection): at an element's end, so each window is read by
orjson, never refused first and read again by the strict reader's slow path; the elements are the same."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from memconform.core import json_reader
from memconform.kit.windows.reader import read_windowed

WINDOW = 150_000  # over the strict reader's short-text bound (MIN_CONTAINERS): a refused window goes slowly


def element(i: int, text: str = "the release owner is Mira") -> dict[str, Any]:
    return {"id": str(i), "text": f"record {i}: {text}",
            "x-provider": {"port": {"fields": {"protection": {"zone": "standard", "tier": "warm"},
                                                "tags": ["a"]}, "invented": ["x"]}},
            "after": {"n": i}, "last": True}


def slow_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The texts handed to the strict reader's slow path (the stdlib parser), by size."""
    seen: list[int] = []
    slow = json_reader._stdlib

    def counted(raw: bytes, policy: Any) -> Any:
        seen.append(len(raw))
        return slow(raw, policy)

    monkeypatch.setattr(json_reader, "_stdlib", counted)
    return seen


def read(path: Path, window: int) -> tuple[list[Any], list[bool]]:
    elements: list[Any] = []
    fast: list[bool] = []

    def on_window(section: str, first: int, items: list[Any], read_fast: bool) -> None:
        assert first == len(elements)
        elements.extend(items)
        fast.append(read_fast)

    fd = os.open(path, os.O_RDONLY)
    try:
        read_windowed(fd, os.path.getsize(path), lambda key: key == "atoms", on_window, window)
    finally:
        os.close(fd)
    return elements, fast


@pytest.mark.parametrize("indent", [None, 2])
def test_a_section_of_nested_objects_is_cut_between_elements_and_read_fast(
        tmp_path: Path, indent: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    atoms = [element(i) for i in range(6000)]
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"version": 1, "atoms": atoms}, indent=indent), "utf-8")
    slow = slow_reads(monkeypatch)
    elements, fast = read(path, WINDOW)
    assert elements == atoms
    assert len(fast) > 5 and all(fast)  # many windows: the cuts were really tried
    # a cut inside an element would be refused by orjson and then by the slow path before an earlier one
    assert not slow, f"{len(slow)} slow reads for {len(fast)} windows"


def test_a_brace_and_comma_inside_a_string_is_no_cut(tmp_path: Path) -> None:
    """`}, {` inside a text looks like an element's end: the cut tried there is refused, an earlier one
    read, and the elements are still the same."""
    atoms = [element(i, "a brace and comma in text }, { stay text") for i in range(6000)]
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"atoms": atoms}), "utf-8")
    elements, fast = read(path, WINDOW)
    assert elements == atoms and len(fast) > 5


def test_a_flat_section_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: elements without nested objects, cut and read as before, never slowly."""
    atoms = [{"id": str(i), "text": "x" * (i % 50)} for i in range(30000)]
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"atoms": atoms}), "utf-8")
    slow = slow_reads(monkeypatch)
    elements, fast = read(path, WINDOW)
    assert elements == atoms and len(fast) > 5 and all(fast) and not slow


def test_a_section_closing_inside_a_window_costs_one_slow_read(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sections and a member after them: where a section closes inside a slice, the cut past its `]` is
    refused (by the slow path too: text after the array) and the section read up to its close; one slow
    read per section at most, never one per window, and the elements the same."""
    atoms = [element(i) for i in range(6000)]
    artifacts = [{"id": f"r{i}", "atoms": [str(i)]} for i in range(6000)]
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"atoms": atoms, "artifacts": artifacts, "after": {"n": 1}}), "utf-8")
    slow = slow_reads(monkeypatch)
    got: dict[str, list[Any]] = {"atoms": [], "artifacts": []}
    windows = 0

    def on_window(section: str, first: int, items: list[Any], read_fast: bool) -> None:
        nonlocal windows
        assert first == len(got[section]) and read_fast
        got[section].extend(items)
        windows += 1

    fd = os.open(path, os.O_RDONLY)
    try:
        layout = read_windowed(fd, os.path.getsize(path), got.__contains__, on_window, WINDOW)
    finally:
        os.close(fd)
    assert got == {"atoms": atoms, "artifacts": artifacts} and layout.envelope["after"] == {"n": 1}
    assert windows > 10 and 1 <= len(slow) <= 2, f"{len(slow)} slow reads for {windows} windows"
