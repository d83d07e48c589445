"""Known-broken EMP writers, one rule each: the lock (taken, waited for, removed, stale), rewrites that drop
or damage other apps' lines, an append after a torn line, the ts and v written, the encoding, and the
validation of what is written. MUTANTS and the expected kills are in table.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.targets.base import Rejected


class NoLock(ReferenceEmpApp):
    """Ignores memory.jsonl.lock and rewrites the whole file (read, pause, write back)."""

    def locked_append(self, path: str, lines: list[dict[str, Any]]) -> None:
        old = open(path, "rb").read() if os.path.exists(path) else b""
        time.sleep(0.002)
        new = "".join(json.dumps(e) + "\n" for e in lines).encode()
        with open(path, "wb") as fh:
            fh.write(old + new)


class LockLeftBehind(ReferenceEmpApp):
    """Takes the lock but never removes it (nor waits for it)."""

    def acquire(self, path: str) -> None:
        open(self.lock_path(path), "w").close()

    def release(self, path: str) -> None:
        pass


class StaleLockForever(ReferenceEmpApp):
    """Never takes over a lock, however old."""

    STALE_S = float("inf")


class StaleTakeoverAnsweredRefused(ReferenceEmpApp):
    """Takes over a stale lock and writes the entry, then answers the append as refused: the caller retries
    and the entry lands twice."""

    def append(self, body: Any) -> dict[str, Any]:
        lock = self.lock_path(body["path"]) if isinstance(body, dict) and isinstance(body.get("path"), str) else None
        stale = lock is not None and os.path.exists(lock) and time.time() - os.stat(lock).st_mtime > self.STALE_S
        answer = super().append(body)
        if stale:
            raise Rejected({"error": "the lock was held by another writer"}, "lock held")
        return answer


class BreaksLockOnTimeout(ReferenceEmpApp):
    """Waits 0.2 s for the lock, then deletes another app's fresh lock and writes anyway."""

    MAX_WAIT_S = 0.2

    def acquire(self, path: str) -> None:
        try:
            super().acquire(path)
        except TimeoutError:
            # another of its own writers may have broken the same lock first: not a crash
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.lock_path(path))
            super().acquire(path)

    def release(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):  # its own lock may have been broken the same way
            super().release(path)


class NeverCreatesLock(ReferenceEmpApp):
    """Waits while another app's lock exists, but never creates one of its own."""

    def acquire(self, path: str) -> None:
        delay, deadline = 0.002, time.monotonic() + self.MAX_WAIT_S
        while os.path.exists(self.lock_path(path)):
            if time.monotonic() > deadline:
                raise TimeoutError("lock held too long")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def release(self, path: str) -> None:
        pass


class RewriteDropsForeign(ReferenceEmpApp):
    """Deletes by rewriting the file with only the lines it understands."""

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        path = body["path"]
        keep = [e for e in self.view(path) if e["id"] != body["id"]]
        self.acquire(path)
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("".join(json.dumps(e) + "\n" for e in keep))
        finally:
            self.release(path)
        return {"ok": True}


class GluesToTornLine(ReferenceEmpApp):
    """Appends right after a torn last line, so the new entry is glued onto it and lost."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(e) + "\n" for e in lines))
            fh.flush()
            os.fsync(fh.fileno())


class SecondsTimestamps(ReferenceEmpApp):
    """Stamps ts as Unix seconds (a float), whatever it is given."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        super().write_lines(path, [dict(e, ts=time.time()) for e in lines])


class Latin1Writer(ReferenceEmpApp):
    """Writes lines in Latin-1 (the platform's default encoding on some systems), not UTF-8."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        data = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in lines).encode("latin-1", "replace")
        with open(path, "ab") as fh:
            fh.write(data)


class WritesVersion2(ReferenceEmpApp):
    """Stamps every line it writes with v "2.0"."""

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        super().write_lines(path, [dict(e, v="2.0") for e in lines])


class NoValidation(ReferenceEmpApp):
    """Writes whatever entry it is given, without checking the schema."""

    def append(self, body: Any) -> dict[str, Any]:
        body = parse_or_reject(body)
        if not isinstance(body, dict) or not isinstance(body.get("entry"), dict):
            raise Rejected({"errors": ["the entry is not a JSON object"]}, "entry is not an object")
        self.locked_append(body["path"], [body["entry"]])
        return {"ok": True, "id": body["entry"].get("id")}


class LenientJson(ReferenceEmpApp):
    """Reads a request with a lenient JSON parser (NaN, Infinity, lone surrogates) and writes what it got."""

    def append(self, body: Any) -> dict[str, Any]:
        if isinstance(body, (bytes, bytearray)):
            body = json.loads(body.decode("utf-8", "surrogatepass"))
        if not isinstance(body, dict) or not isinstance(body.get("entry"), dict):
            raise Rejected({"errors": ["the entry is not a JSON object"]}, "entry is not an object")
        entry = body["entry"]
        line = json.dumps(entry, ensure_ascii=True) + "\n"  # NaN and lone surrogates written as they came
        try:
            self.acquire(body["path"])
        except TimeoutError as exc:  # the lock stays busy: refused, as the reference refuses (its one bug is the parser)
            raise Rejected({"error": str(exc)}, "lock busy") from None
        try:
            with open(body["path"], "a", encoding="utf-8") as fh:
                fh.write(line)
        finally:
            self.release(body["path"])
        return {"ok": True, "id": entry.get("id")}


class DropsNullMetaValues(ReferenceEmpApp):
    """Writes `meta` without its null-valued keys, as a serialiser set to skip nulls does."""

    def locked_append(self, path: str, lines: list[dict[str, Any]]) -> None:
        cleaned = [{**e, "meta": {k: v for k, v in e["meta"].items() if v is not None}}
                   if isinstance(e.get("meta"), dict) else e for e in lines]
        super().locked_append(path, cleaned)


class RewriteDropsIncompleteLines(ReferenceEmpApp):
    """Deletes by rewriting the file byte for byte, but leaves out, besides the deleted id, every JSON
    object that lacks a required field (a compaction that tidies up as it goes)."""

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        path = body["path"]
        self.acquire(path)
        try:
            with open(path, "rb") as fh:
                raw = fh.read().split(b"\n")
            kept = [line for line in raw if not self._drops(line, body["id"])]
            with open(path, "wb") as fh:
                fh.write(b"\n".join(kept))
        finally:
            self.release(path)
        return {"ok": True}

    @staticmethod
    def _drops(line: bytes, gone: str) -> bool:
        try:
            e = json.loads(line)
        except ValueError:
            return False  # not JSON: kept as it is
        required = ("v", "id", "ts", "src", "content")
        return isinstance(e, dict) and (e.get("id") == gone or any(name not in e for name in required))


class TakesContentlessLocks(ReferenceEmpApp):
    """Takes a lock that holds nothing, or only a process id, for a stale one and deletes it, however fresh
    (the lock's content, not its age, decides): another app's lock with a token is still waited for."""

    def acquire(self, path: str) -> None:
        lock = self.lock_path(path)
        try:
            with open(lock) as fh:
                held = fh.read().strip()
            if not held or held.isdigit():
                os.unlink(lock)
        except FileNotFoundError:
            pass
        super().acquire(path)


class GivesUpAndBreaksLock(ReferenceEmpApp):
    """Waits 1.5 s for another app's lock (longer than emp.writer_waits_for_lock holds it), then gives up,
    refusing the append, and removes the lock it does not own on the way out."""

    MAX_WAIT_S = 1.5

    def acquire(self, path: str) -> None:
        try:
            super().acquire(path)
        except TimeoutError:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.lock_path(path))
            raise


class InitializeBreaksAnyLock(ReferenceEmpApp):
    """Initialises a missing memory.jsonl by clearing the folder's lock first, whoever holds it, however fresh
    (a lock with no file beside it is taken for debris); with the file there it waits as it should."""

    def locked_append(self, path: str, lines: list[dict[str, Any]]) -> None:
        if not os.path.exists(path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.lock_path(path))
        super().locked_append(path, lines)


class OwnIdsWithoutVariant(ReferenceEmpApp):
    """Picks ids for new entries with a hand-rolled generator: version 4, but the variant digit left random
    hex (RFC 4122 wants 8, 9, a or b); here always 7."""

    def append(self, body: Any) -> dict[str, Any]:
        body = parse_or_reject(body)
        if isinstance(body, dict) and isinstance(body.get("entry"), dict) and "id" not in body["entry"]:
            made = str(uuid.uuid4())
            body = {**body, "entry": {**body["entry"], "id": made[:19] + "7" + made[20:]}}
        return super().append(body)


class OwnTsInSeconds(ReferenceEmpApp):
    """Stamps a new entry handed no ts with Unix seconds (a ts it is given it keeps)."""

    def append(self, body: Any) -> dict[str, Any]:
        body = parse_or_reject(body)
        if isinstance(body, dict) and isinstance(body.get("entry"), dict) and "ts" not in body["entry"]:
            body = {**body, "entry": {**body["entry"], "ts": int(time.time())}}
        return super().append(body)


class ReleasesAnyLock(ReferenceEmpApp):
    """Removes memory.jsonl.lock when done, whoever's it is by then. Its writes are slow (it holds its lock until
    another app has taken it over, at most 2 s: a slow disk, forced so the takeover shows on every run)."""

    WAIT_S = 2.0  # a bound on the wait, never a window the verdict depends on

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        deadline = time.monotonic() + self.WAIT_S
        while time.monotonic() < deadline:
            try:
                with open(self.lock_path(path)) as fh:
                    if fh.read() != self._tokens_held().get(path):
                        break
            except FileNotFoundError:
                break
            time.sleep(0.005)
        super().write_lines(path, lines)

    def release(self, path: str) -> None:
        self._tokens_held().pop(path, None)
        os.unlink(self.lock_path(path))
