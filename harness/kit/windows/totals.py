"""The strict reader's whole-file bounds over a file read in windows (reader.py): the counts of every byte
read, summed window by window, and the whole-file reader's first estimates applied to the sums."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.json_reader import (
    _ASTRAL_LEADS,
    _NOT_MARKS,
    CONTAINER_BYTES,
    TextCounts,
    estimated_memory,
    memory_bound,
)


@dataclass
class FileTotals:
    """Counts over every byte read, for the whole-file bounds of the strict reader."""

    objects: int = 0
    arrays: int = 0
    quotes: int = 0
    commas: int = 0
    wide: int = 0
    ascii: bool = True

    def add(self, text: bytes) -> None:
        marks = text.translate(None, _NOT_MARKS)
        self.objects += marks.count(b"{")
        self.arrays += marks.count(b"[")
        self.quotes += marks.count(b'"')
        self.commas += marks.count(b",")
        if self.ascii and not text.isascii():
            self.ascii = False
        if not self.ascii:
            self.wide += len(marks) - len(marks.translate(None, _ASTRAL_LEADS))

    def add_counted(self, counted: TextCounts, wrapper_arrays: int) -> None:
        """The counts the strict reader took of a window it read (read_json_counting), the `[` it was
        wrapped in taken off: what `add` would count of the window's bytes, without scanning them again."""
        self.objects += counted.marks.objects
        self.arrays += counted.marks.arrays - wrapper_arrays
        self.quotes += counted.marks.quotes
        self.commas += counted.marks.commas
        self.ascii = self.ascii and counted.ascii
        self.wide += counted.wide

    def within_file_bounds(self, size: int) -> bool:
        """Would the whole-file reader take these counts without a second look? (Its first, rough
        estimates; a file over them is read whole, where the exact count decides.)"""
        if (self.objects + self.arrays) * CONTAINER_BYTES > size:
            return False
        rough = estimated_memory(self.objects, self.arrays, (self.quotes + 1) // 2, self.commas, self.wide, size,
                                 self.ascii)
        return rough <= memory_bound(size)
