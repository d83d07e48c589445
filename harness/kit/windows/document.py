"""The document the checks of a windowed reading are handed: the envelope, with each section read in
windows standing as an array the checks may not walk, and the findings the format's plan worked out
window by window (`computed`), which the format's own functions hand back in place of walking."""

from __future__ import annotations

from typing import Any, NoReturn


class WithheldRecords(list):  # type: ignore[type-arg]
    """A section read in windows: an array by its type and its length (so a format's `detect`, shape
    tests and counts see the array), but walking it is a harness bug, raised, never an empty pass: its
    records were judged window by window and are no longer held."""

    def __init__(self, section: str, count: int) -> None:
        super().__init__()
        self.section, self.records = section, count

    def _refuse(self) -> NoReturn:
        raise RuntimeError(f"the {self.section} section ({self.records} records) was read in windows: a check "
                           "must ask the format's windowed findings, not walk the records")

    def __iter__(self) -> NoReturn:
        self._refuse()

    def __len__(self) -> int:
        return self.records  # how many there are is known (and a check of declared counts asks only that)

    def __getitem__(self, index: Any) -> NoReturn:
        self._refuse()

    def __contains__(self, value: object) -> NoReturn:
        self._refuse()

    def __reversed__(self) -> NoReturn:
        self._refuse()


class WindowedDocument(dict):  # type: ignore[type-arg]
    """The envelope of a file read in windows, with what its format's plan computed."""

    def __init__(self, envelope: dict[str, Any], counts: dict[str, int], computed: dict[str, Any]) -> None:
        super().__init__(envelope)
        for section, count in counts.items():
            self[section] = WithheldRecords(section, count)
        self.counts = counts
        self.computed = computed


def computed(doc: Any, name: str) -> Any:
    """What a windowed reading computed under `name` for this document, or None (a document read whole)."""
    return doc.computed.get(name) if isinstance(doc, WindowedDocument) else None
