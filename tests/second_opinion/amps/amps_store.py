"""The store: one JSON file per subject under the state folder, guarded by a folder-wide flock.

Layout of $SECOND_OPINION_STATE:
    .lock                      flock'ed: shared for reads, exclusive for read-modify-write
    subjects/<sha256>.json     one record per subject; the file name is a digest of the subject_id
                               bytes, so any opaque id maps to a safe name and distinct ids never
                               collide; the id itself is kept verbatim inside the record.

A record is {"subject_id", "extras", "subject", "atoms", "artifacts"}: "extras" holds the top-level
members of the last imported export other than export_version/exported_at/subject/atoms/artifacts
(source_provider, x- extensions, anything else), so an export re-emits them. Writes go to a temporary
file in the same folder, fsync'ed, then os.replace'd into place.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterator


def state_dir() -> Path:
    configured = os.environ.get("SECOND_OPINION_STATE")
    path = Path(configured) if configured else Path(tempfile.gettempdir()) / f"amps-second-opinion-{os.getuid()}"
    (path / "subjects").mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def locked(exclusive: bool) -> Iterator[Path]:
    root = state_dir()
    fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield root
    finally:
        os.close(fd)  # closing releases the lock


def storage_key(subject_id: str, bugs: frozenset[str]) -> str:
    if "subject_id_normalized" in bugs:
        # bug: the id is "cleaned up" like an e-mail address / file name and the result used as the id
        return re.sub(r"[^a-z0-9_.@-]", "_", subject_id.strip().lower())
    return subject_id


def _path(root: Path, key: str) -> Path:
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return root / "subjects" / f"{digest}.json"


def load(root: Path, key: str) -> dict[str, Any] | None:
    try:
        with open(_path(root, key), encoding="utf-8") as fh:
            record = json.load(fh)
    except FileNotFoundError:
        return None
    if record.get("subject_id") != key:  # a digest collision would be a bug, never silently merged
        raise RuntimeError("store corrupted: record does not belong to this subject")
    return record


def save(root: Path, key: str, record: dict[str, Any]) -> None:
    target = _path(root, key)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh, ensure_ascii=True, separators=(",", ":"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dfd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def remove(root: Path, key: str) -> bool:
    try:
        os.unlink(_path(root, key))
        return True
    except FileNotFoundError:
        return False


def all_records(root: Path) -> Iterator[dict[str, Any]]:
    for file in sorted((root / "subjects").glob("*.json")):
        if file.name.startswith(".tmp-"):
            continue
        with open(file, encoding="utf-8") as fh:
            yield json.load(fh)
