"""An output's record list made while it is written, so the CLI's translation never holds every native record.

A writer builds its records with a generator and hands it to `records(section, items)`. Outside `streaming()`
(the library's `translate()`, the round trips, `port`) that is the list, made at once: nothing changes. Inside it
(portability/written.py) it is a `Streamed` list that jsontext.py writes item by item as the generator makes
them: each native record is written and let go. What a writer puts after such a list (a list of what the records
cited, say) is given with `later(section, make)`, which is made when the text reaches it, after the
records before it. Envelope members before a record list may not depend on its records: a writer computes them
first (from the canonical records' ids, say). A record list that must be complete before something that precedes
it can be written (a manifest's checksum over every record) is filled with `spill(section)`: inside `streaming()`
each record goes to an anonymous temporary file as it is made, and is read back once when the text reaches it.
The text is byte for byte the list's (tests/test_portability_written.py).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import IO, Any

_STREAMING: ContextVar[bool] = ContextVar("memconform_port_streaming", default=False)
_SPILL_FOLDER: ContextVar[str | None] = ContextVar("memconform_port_spill_folder", default=None)


@contextlib.contextmanager
def streaming(allowed: bool = True, spill_folder: str | os.PathLike[str] | None = None) -> Iterator[None]:
    """Inside it, `records` and `later` hand back Streamed lists, made as they are written, and `spill` a Spill
    whose file is made in `spill_folder` (the output's own folder: the same disk, and an error that names it;
    None: the temporary folder)."""
    token = _STREAMING.set(allowed)
    folder = _SPILL_FOLDER.set(None if spill_folder is None else os.fspath(spill_folder))
    try:
        yield
    finally:
        _SPILL_FOLDER.reset(folder)
        _STREAMING.reset(token)


def spill_file() -> IO[bytes]:
    """An anonymous temporary file for a writer's spilled records, in the folder `streaming()` names (never seen:
    unlinked at once, gone when closed)."""
    return tempfile.TemporaryFile(prefix=".memconform-spill-", dir=_SPILL_FOLDER.get())


class Streamed:
    """A JSON array of an output whose items are made as they are read, once: jsontext writes it as the list it
    would be. `section` names the member (in the error a second pass raises)."""

    __slots__ = ("_items", "section")

    def __init__(self, section: str, items: Iterable[Any]) -> None:
        self.section = section
        self._items: Iterable[Any] | None = items

    def __iter__(self) -> Iterator[Any]:
        if self._items is None:  # a second pass would meet nothing: a harness bug, raised, never an empty array
            raise RuntimeError(f"the streamed section {self.section!r} was already written")
        items, self._items = self._items, None
        return iter(items)


def records(section: str, items: Iterable[Any]) -> list[Any] | Streamed:
    """A record list of an output: the list (outside `streaming()`), or a Streamed one."""
    return Streamed(section, items) if _STREAMING.get() else list(items)


def later(section: str, make: Callable[[], Iterable[Any]]) -> list[Any] | Streamed:
    """A list that follows a record list in the output and depends on it: made now (outside `streaming()`,
    where the records are already made), or when the text reaches it."""
    if not _STREAMING.get():
        return list(make())

    def when_reached() -> Iterator[Any]:
        yield from make()
    return Streamed(section, when_reached())


class Spill:
    """A record list filled before its output is written, held on disk, not in memory: each item is pickled to an
    anonymous temporary file (gone when closed) as it is appended, and `streamed()` reads them back once, in order,
    as the very objects they were (pickle keeps every Python value exactly: the text is the list's)."""

    def __init__(self, section: str) -> None:
        self.section = section
        self._file: IO[bytes] | None = spill_file()
        self._count = 0

    def append(self, item: Any) -> None:
        if self._file is None:  # appended after it was read back: the item would be lost, a harness bug
            raise RuntimeError(f"the spilled section {self.section!r} was already read back")
        pickle.dump(item, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def streamed(self) -> Streamed:
        """The items as a Streamed list, read back as the text reaches them; the file is closed once read."""
        return Streamed(self.section, self._read_back())

    def _read_back(self) -> Iterator[Any]:
        if self._file is None:
            raise RuntimeError(f"the spilled section {self.section!r} was already read back")
        spilled, self._file = self._file, None
        try:
            spilled.seek(0)
            for _ in range(self._count):
                yield pickle.load(spilled)  # our own file, written just now: never a handed one
        finally:
            spilled.close()


def spill(section: str) -> list[Any] | Spill:
    """A record list a writer fills before it can write what precedes it: a list (outside `streaming()`), or a
    Spill; `written(held)` is what goes in the output."""
    return Spill(section) if _STREAMING.get() else []


def written(held: list[Any] | Spill) -> list[Any] | Streamed:
    """What goes in the output for a list filled through `spill`: the list, or the spilled items streamed."""
    return held.streamed() if isinstance(held, Spill) else held


def sections(output: Any) -> Iterator[tuple[Any, Any, Streamed]]:
    """(container, key, Streamed) of every streamed list in an output's first two levels (where writers put them)."""
    if not isinstance(output, dict):
        return
    for key, member in output.items():
        if isinstance(member, Streamed):
            yield output, key, member
        elif isinstance(member, dict):
            for inner, value in member.items():
                if isinstance(value, Streamed):
                    yield member, inner, value


def whole(output: Any) -> Any:
    """The output with every streamed list made (a text format's streamed lines: their text): what the writer
    gives outside `streaming()`, for a caller that must walk or change it (a planted fault)."""
    if isinstance(output, Streamed):
        return "".join(output)
    for container, key, section in list(sections(output)):
        container[key] = list(section)
    return output
