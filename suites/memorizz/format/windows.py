"""A MemoRizz archive file read in bounded windows: its stores (arrays of records, one level down in
`stores`) a slice of records at a time, with the findings of the whole-file path
(tests/test_windowed_validate.py holds them equal).

Each window is judged as it is read: the per-record rules (format/rules.py `_scan_store`, its ids kept
per store across windows), the link targets, its canonical text (kept, a store's windows joined, for
the digest) and, where a run of 16 digits shows one may be there, the integers past JavaScript's safe
range. At the end the envelope is walked by `scan` with those findings put in where the walk meets
each store, and the canonical text of the whole archive is hashed in the key order asked without
being built: the envelope is written with a marker for each store and the store's text fed to the
hash where its marker is. What the windows cannot say the same way (the manifest after the stores,
a number with no canonical form, a key the two key orders sort differently, a text the windows do
not read) sends the file to the whole-file path: read_in_windows returns None.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

from memconform.core.json_reader import has_digit_run
from memconform.kit.windows import NotWindowable, WithheldRecords
from memconform.kit.windows.reader import WINDOW_BYTES, Layout, read_windowed
from memconform.suites.memorizz.format.canonical import canonical_bytes_and_facts, key_orders_agree
from memconform.suites.memorizz.format.canonical_fast import LONG_DIGITS, TextFacts
from memconform.suites.memorizz.format.constants import NATURAL_IDS_IMPLIED
from memconform.suites.memorizz.format.records import SHOWN_UNSAFE, refs_in, unsafe_integers
from memconform.suites.memorizz.format.rules import JudgedStores, Problem, _scan_store, scan

GROUP = "stores"
# an archive over this many bytes is read in windows of this size (tests shrink it). A quarter of the reader's
# WINDOW_BYTES: a window's records as objects take several times its bytes, on top of the canonical text kept
# for the digest; measured (validate, 100k records, 47 MB) peak 93 -> 86 MiB, and at 10k 0.078 -> 0.072 s CPU
WINDOW = WINDOW_BYTES // 4


@dataclass
class ArchiveFindings:
    """What the windows found, handed to the archive checks in place of walking the records."""

    scan: dict[str, list[Problem]]
    digest: str  # sha256 of the canonical bytes, in the key order asked (no key the other order sorts otherwise)
    long_digits: bool
    unsafe: list[tuple[str, int]]  # the first SHOWN_UNSAFE (path, integer) past the safe range, by path


@dataclass
class _Windows:
    """What the windows found so far, store by store, until `finish` judges the envelope and the digest."""

    key_order: str
    no_embeddings: bool = True
    began: bool = False
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    seen: dict[str, set[str]] = field(default_factory=dict)
    record_ids: set[str] = field(default_factory=set)
    targets: set[str] = field(default_factory=set)
    pieces: dict[str, bytearray] = field(default_factory=dict)
    long_digits: bool = False
    unsafe: list[tuple[str, int]] = field(default_factory=list)

    def begin(self, envelope: dict[str, Any]) -> None:
        manifest = envelope.get("manifest")
        includes = manifest.get("includes") if isinstance(manifest, dict) else None
        # errata M8, as scan reads it: only an archive that says it includes embeddings may carry them
        self.no_embeddings = not (isinstance(includes, dict) and includes.get("embeddings") is True)
        self.began = "manifest" in envelope

    def window(self, section: str, first: int, items: list[Any], fast: bool) -> None:
        store = section[len(GROUP) + 1:]
        problems = self.problems.setdefault(store, [])

        def add(rule: str, title: str, received: Any, expected: Any, path: str, readings: tuple[str, ...] = ()) -> None:
            problems.append(Problem(rule, title, received, expected, path, readings))

        linking: list[dict[str, Any]] = []
        _scan_store(store, items, NATURAL_IDS_IMPLIED.get(store), add, self.record_ids, self.no_embeddings, linking,
                    self.seen.setdefault(store, set()), first)
        for node in linking:
            self.targets.update(refs_in(node))
        text, facts = self._canonical({"": items}, fast)
        written = self.pieces.setdefault(store, bytearray())
        if written:
            written += b","
        written += memoryview(text)[5:-2]  # {"":[ ... ]}
        if self.long_digits_in(text, facts):
            for i, record in enumerate(items, first):
                self.unsafe.extend(unsafe_integers(record, f"$.{GROUP}.{store}[{i}]"))
            self.unsafe = sorted(self.unsafe)[:SHOWN_UNSAFE]

    def long_digits_in(self, text: bytes, facts: TextFacts | None = None) -> bool:
        """A run of LONG_DIGITS digits in the text: the look at orjson's text already says so when it was taken."""
        found = facts.long_digits if facts is not None else has_digit_run(text, LONG_DIGITS)
        self.long_digits |= found
        return found

    def _canonical(self, value: dict[str, Any], fast: bool) -> tuple[bytes, TextFacts | None]:
        try:
            text, facts = canonical_bytes_and_facts(value, self.key_order, None, fast)
        except (ValueError, RecursionError):  # numbers_finite words it from the whole archive
            raise NotWindowable("a value with no canonical form") from None
        if (facts.order_sensitive if facts is not None else not key_orders_agree(text)) and _both_planes(text):
            raise NotWindowable("keys the two key orders may sort differently: the whole archive says which")
        return text, facts

    def finish(self, layout: Layout) -> tuple[dict[str, Any], ArchiveFindings]:
        if not self.began or "manifest" in layout.late:
            raise NotWindowable("the manifest after the stores: the record rules read it first")
        envelope = layout.envelope
        stores = envelope.get(GROUP)
        if not isinstance(stores, dict):
            raise NotWindowable("no stores object")
        windowed = {name[len(GROUP) + 1:]: count for name, count in layout.counts.items() if count}
        value = {**envelope, GROUP: {k: WithheldRecords(k, windowed[k]) if k in windowed else v
                                     for k, v in stores.items()}}
        # the ids a link may name: one set, built only when there are links (a file of many small stores
        # must not make each lookup ask every store's set)
        ids = self.record_ids.union(*self.seen.values()) if self.targets else set()
        judged = JudgedStores({k: self.problems.get(k, []) for k in windowed}, ids, self.targets)
        problems = scan(value, judged=judged)
        digest = self._digest(envelope, windowed)
        unsafe = sorted([*self.unsafe, *unsafe_integers(envelope)])[:SHOWN_UNSAFE]
        return value, ArchiveFindings(problems, digest, self.long_digits, unsafe)

    def _digest(self, envelope: dict[str, Any], windowed: dict[str, int]) -> str:
        """sha256 of the archive's canonical bytes: the envelope written with a marker in place of each
        store read in windows, and that store's text hashed where its marker is (never one buffer)."""
        nonce = os.urandom(16).hex()  # a file cannot hold a marker it cannot know
        names = list(windowed)
        stores = dict(envelope[GROUP])
        for i, name in enumerate(names):
            stores[name] = f"{nonce}-{i}"
        text, facts = self._canonical({**envelope, GROUP: stores}, False)
        self.long_digits_in(text, facts)
        hasher = hashlib.sha256()
        # split at each marker's opening (a pattern made of the nonce would be compiled anew in every process)
        first, *marked = text.split(b'"' + nonce.encode() + b"-")
        hasher.update(first)
        for part in marked:
            index, _, rest = part.partition(b'"')  # the marker's index, then the text after it
            hasher.update(b"[")
            hasher.update(self.pieces.pop(names[int(index)], b""))
            hasher.update(b"]")
            hasher.update(rest)
        return hasher.hexdigest()


_ASTRAL_LEADS = tuple(bytes([lead]) for lead in range(0xF0, 0xF5))  # UTF-8 of U+10000 and above
_HIGH_BMP_LEADS = (b"\xee", b"\xef")  # UTF-8 of U+E000 to U+FFFF


def _both_planes(text: bytes) -> bool:
    """Might two keys of one object sort differently by code points and by UTF-16 units? Only when one
    holds a character from U+E000 to U+FFFF and the other one past U+FFFF: a text without both (an
    emoji alone, say) is one text in either order. Objects do not span windows: a window's text (and
    the envelope's) is enough to say."""
    return any(lead in text for lead in _ASTRAL_LEADS) and any(lead in text for lead in _HIGH_BMP_LEADS)


def read_in_windows(path: str | os.PathLike[str], key_order: str, window: int | None = None,
                    ) -> tuple[dict[str, Any], int, ArchiveFindings] | None:
    """(the archive with its windowed stores withheld, the file's size, what the windows found), or
    None: read the file whole."""
    reading = _Windows(key_order)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        layout = read_windowed(fd, size, lambda name: name.startswith(f"{GROUP}."), reading.window,
                               WINDOW if window is None else window, reading.begin, lambda key: key == GROUP)
        value, found = reading.finish(layout)
    except NotWindowable:
        return None
    finally:
        os.close(fd)
    return value, size, found
