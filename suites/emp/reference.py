"""Reference Edge Memory Protocol app: a small store library over one memory.jsonl file.

Operations (body dicts):  append {"path", "entry"} -> {"ok", "id"} · delete {"path", "id", "src"?} ·
update {"path", "id", "entry": {fields}} · resolve {"path"} -> [entries] · query {"path", "start"?, "end"?, "tags"?, "type"?, "text"?, "near"?} -> [entries]
Writes take memory.jsonl.lock with os.open(O_CREAT|O_EXCL), back off exponentially while it
exists, take over a lock older than STALE_S, fsync before releasing. Reads stream line by line.

The same operations as a command (the `cmd:` protocol, one process per operation):
    python -m memconform.suites.emp.reference OP INPUT.json OUTPUT.json      exit 0 done, 3 rejected, 4 no such op
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from typing import Any

from memconform.kit.hostile import parse_or_reject
from memconform.suites.emp import format as emp
from memconform.targets.base import Rejected


class ReferenceEmpApp:
    SRC = "org.memconform.reference"
    STALE_S = 10.0
    MAX_WAIT_S = 3.0  # then the append is refused ("lock busy", exit 3), the lock left to its owner
    TOMBSTONE_STYLE = "deleted-flag"

    def __init__(self) -> None:
        self._held = threading.local()  # per thread (one object may serve every thread): path -> its lock's token

    def _tokens_held(self) -> dict[str, str]:
        if not hasattr(self._held, "tokens"):
            self._held.tokens = {}
        tokens: dict[str, str] = self._held.tokens
        return tokens

    # ---- locking -------------------------------------------------------------------------------
    def lock_path(self, path: str) -> str:
        return path + emp.LOCK_SUFFIX

    def acquire(self, path: str) -> None:
        lock, delay, deadline = self.lock_path(path), 0.002, time.monotonic() + self.MAX_WAIT_S
        while True:
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                os.write(fd, self._lock_token(path).encode())
                os.close(fd)
                return
            except FileExistsError:
                try:
                    if time.time() - os.stat(lock).st_mtime > self.STALE_S:
                        os.unlink(lock)  # a stale lock left by a crashed writer
                        continue
                except FileNotFoundError:
                    continue
            if time.monotonic() > deadline:
                raise TimeoutError(f"{lock} held for more than {self.MAX_WAIT_S}s")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def _lock_token(self, path: str) -> str:
        """What this write puts in its lock: the PID, and a token of its own (threads share a PID)."""
        token = f"{os.getpid()}\n{uuid.uuid4()}\n"
        self._tokens_held()[path] = token
        return token

    def release(self, path: str) -> None:
        """Remove the lock if it is still this write's: another app that took it over as stale (this
        write outlived the stale limit) holds it now, and removing it would let a third app in."""
        token = self._tokens_held().pop(path, None)
        try:
            with open(self.lock_path(path)) as fh:
                if fh.read() != token:
                    return
            os.unlink(self.lock_path(path))
        except FileNotFoundError:
            pass

    def write_lines(self, path: str, lines: list[dict[str, Any]]) -> None:
        data = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in lines).encode()
        with open(path, "ab+") as fh:
            if fh.seek(0, os.SEEK_END) > 0:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":  # a writer died mid-line: start on a fresh line, not glued to it
                    data = b"\n" + data
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

    def locked_append(self, path: str, lines: list[dict[str, Any]]) -> None:
        try:
            self.acquire(path)
        except TimeoutError as exc:  # give up cleanly: nothing written, the caller is told
            raise Rejected({"error": str(exc)}, "lock busy") from None
        try:
            self.write_lines(path, lines)
        finally:
            self.release(path)

    # ---- reading -------------------------------------------------------------------------------
    def lines(self, path: str) -> list[tuple[int, str, Any]]:
        if not os.path.exists(path):
            return []
        return list(emp.iter_lines(path))

    def view(self, path: str) -> list[dict[str, Any]]:
        return emp.resolve(self.lines(path))

    # ---- operations ----------------------------------------------------------------------------
    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        body = parse_or_reject(body)  # raw bytes (the hostile-JSON battery): strict JSON or refused
        if not isinstance(body, dict) or not isinstance(body.get("entry"), dict):
            raise Rejected({"errors": ["the entry is not a JSON object"]}, "entry is not an object")
        entry = dict(body["entry"])
        entry.setdefault("v", emp.VERSION)
        entry.setdefault("src", self.SRC)
        entry.setdefault("id", str(uuid.uuid4()))  # a new entry handed no id: the writer picks it (errata E14)
        entry.setdefault("ts", int(time.time() * 1000))
        errors = emp.hard_errors(entry)
        if errors:
            raise Rejected({"errors": errors}, "entry does not validate")
        self.locked_append(body["path"], [entry])
        return {"ok": True, "id": entry["id"]}

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        path = body["path"]
        current = {e["id"]: e for e in self.view(path)}
        ts = int(time.time() * 1000)
        if body["id"] in current:
            ts = max(ts, current[body["id"]]["ts"] + 1)
        self.locked_append(path, [emp.tombstone(body["id"], ts, body.get("src", self.SRC), self.TOMBSTONE_STYLE)])
        return {"ok": True}

    def update(self, body: dict[str, Any]) -> dict[str, Any]:
        """A new line with the same id and a newer ts (the spec's "Update": never a new id, never in place)."""
        path = body["path"]
        current = {e["id"]: e for e in self.view(path)}.get(body["id"])
        if current is None:
            raise Rejected({"error": f"no entry {body['id']!r}"}, "no such entry")
        entry = {**current, **body.get("entry", {}), "id": body["id"]}
        entry["ts"] = max(int(time.time() * 1000), int(current["ts"]) + 1)
        errors = emp.hard_errors(entry)
        if errors:
            raise Rejected({"errors": errors}, "entry does not validate")
        self.locked_append(path, [entry])
        return {"ok": True, "id": body["id"]}

    def resolve(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return self.view(body["path"])

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The resolved view filtered; a parameter of the wrong type is refused. `near`: the entries whose
        vector has the same dimension and a cosine similarity of at least NEAR_COSINE."""
        problems = query_problems(body)
        if problems:
            raise Rejected({"errors": problems}, "query parameters do not validate")
        out = []
        for e in self.view(body["path"]):
            if body.get("start") is not None and e["ts"] < body["start"]:
                continue
            if body.get("end") is not None and e["ts"] > body["end"]:
                continue
            if body.get("tags") and not set(body["tags"]) <= set(e.get("tags") or []):
                continue
            if body.get("type") is not None and e.get("type") != body["type"]:
                continue
            if body.get("text") is not None and body["text"].lower() not in e["content"].lower():
                continue
            if body.get("near") is not None and cosine(e.get("emb"), body["near"]) < NEAR_COSINE:
                continue
            out.append(e)
        return out


NEAR_COSINE = 0.9
QUERY_TYPES: dict[str, Any] = {"start": (int, float), "end": (int, float), "tags": list, "type": str, "text": str, "near": list}


def query_problems(body: dict[str, Any]) -> list[str]:
    """Query parameters of the wrong JSON type (null is read as absent)."""
    out = []
    for name, kinds in QUERY_TYPES.items():
        value = body.get(name)
        if value is not None and (not isinstance(value, kinds) or isinstance(value, bool)):
            out.append(f"{name}: {type(value).__name__} is not allowed")
    for name in ("tags", "near"):
        kinds = str if name == "tags" else (int, float)
        if isinstance(body.get(name), list) and not all(isinstance(v, kinds) and not isinstance(v, bool) for v in body[name]):
            out.append(f"{name}: every item must be a {'string' if name == 'tags' else 'number'}")
    return out


def cosine(emb: Any, near: list[Any]) -> float:
    """Cosine similarity of two vectors of the same dimension; -1 when they cannot be compared."""
    numeric = isinstance(emb, list) and all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in emb)
    if not numeric or len(emb) != len(near) or not near:
        return -1.0
    dot = sum(float(a) * float(b) for a, b in zip(emb, near, strict=True))
    norms = (sum(float(a) ** 2 for a in emb) * sum(float(b) ** 2 for b in near)) ** 0.5
    return dot / norms if norms else -1.0


OPERATIONS = ("append", "delete", "update", "resolve", "query")


def main(argv: list[str] | None = None, app: type = ReferenceEmpApp) -> int:
    """One operation per process, so several apps (processes) can share one file through the lock."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print("usage: python -m memconform.suites.emp.reference OP INPUT.json OUTPUT.json", file=sys.stderr)
        return 2
    op, input_path, output_path = args
    if op not in OPERATIONS:
        return 4
    with open(input_path, "rb") as fh:
        raw = fh.read()
    try:  # strict JSON (no lone surrogates, BOM or other encodings): anything else is refused, never a crash
        body = parse_or_reject(raw)
        reply, code = getattr(app(), op)(body), 0
    except Rejected as exc:
        reply, code = exc.body, 3
    with open(output_path, "w", encoding="utf-8") as fh:
        json.dump(reply, fh, ensure_ascii=False)
    return code


if __name__ == "__main__":
    sys.exit(main())
