"""`memconform validate` of a big JSON export in bounded windows (docs: ARCHITECTURE.md, issue 33).

reader.py reads a JSON object file member by member and a format's record sections a window of
elements at a time, within the strict reader's bounds; document.py is what the checks are then handed;
plan.py runs a format's WindowPlan over the windows and the checks over the result. A format offers
windowed validation by a `WINDOW_PLAN` (a WindowPlan class) in `windows.py` beside the module of its
`detect` (a package), which imports the format, never the other way round. A streamed format, which
reads its own file when its checks first ask (MemoRizz), calls reader.read_windowed itself.
"""

from __future__ import annotations

from .document import WindowedDocument, WithheldRecords, computed
from .reader import WINDOW_BYTES, NotWindowable

__all__ = ["WINDOW_BYTES", "NotWindowable", "WindowedDocument", "WithheldRecords", "computed"]
