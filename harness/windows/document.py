"""The document the checks of a windowed reading are handed: the envelope, with each section read in
windows standing as an array the checks may not walk, and the findings the format's plan worked out
window by window (`computed`), which the format's own functions hand back in place of walking."""

from __future__ import annotations

from typing import Any, NoReturn


class WithheldRecords(list):  # type: ignore[type-arg]
    """A section read in windows: an array by its type (so a format's `detect` and shape tests see an
    array), but walking it is a harness bug, raised, never an empty pass: its records were judged
    window by window and are no longer held."""

    def __init__(self, section: str, count: int) -> None:
        super().__init__()
        self.section, self.count = section, count

    def _refuse(self, *args: Any) -> NoReturn:
        raise RuntimeError(f"the {self.section} section ({self.count} records) was read in windows: a check "
                           "must ask the format's windowed findings, not walk the records")

    __iter__ = __getitem__ = __len__ = __contains__ = __reversed__ = _refuse  # type: ignore[assignment]


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
