"""amps2: a blind second implementation of the AI Memory Portability Standard v0.1 (a command target).

Usage: python app.py OP INPUT OUTPUT
  OP      import_export | export | delete_artifact | delete_subject
  INPUT   a file: the raw export document (import_export) or a JSON request object (the others)
  OUTPUT  where the reply JSON is written

Exit codes: 0 done, 3 refused (OUTPUT holds {"error", "errors"}), 4 no such operation,
2 bad usage (wrong arguments, unknown bug name in SECOND_OPINION_BUGS). Anything else is a crash.

State: one JSON file per subject under $SECOND_OPINION_STATE (default: <tmp>/amps2-state), every
change under an exclusive flock and written by atomic replace; reads take a shared lock.
Planted bugs (bugs.json) are switched on by SECOND_OPINION_BUGS=name1,name2. Python stdlib only.
"""

from __future__ import annotations

import calendar
import fcntl
import hashlib
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_USAGE, EXIT_REFUSED, EXIT_NO_OP = 0, 2, 3, 4
EXPORT_VERSION = "0.1.0"
PROVIDER = "amps2"
TEXT_MAX = 500
CORE_KEYS = ("export_version", "exported_at", "source_provider", "subject", "atoms", "artifacts")
ATOM_KINDS = ("fact", "preference", "relationship", "belief", "goal", "skill")
SENSITIVITIES = ("public", "private", "medical", "financial", "legal")
REGULATED = ("medical", "financial", "legal")
ARTIFACT_KINDS = ("chat", "document", "journal", "voice", "message", "email", "calendar")
DERIVATIONS = ("stated", "inferred", "observed")
# the minimum number of sources an atom of each derivation needs (Provenance rules)
MIN_SOURCES = {"stated": 0, "inferred": 1, "observed": 1}

BUG_NAMES = frozenset({
    "inferred_unsourced_accepted",
    "partial_import_on_reject",
    "extractor_not_required",
    "text_length_in_bytes",
    "sensitivity_downgraded",
    "private_flag_dropped",
    "delete_no_cascade",
    "subject_id_normalized",
})
BUGS: frozenset[str] = frozenset()


class Refused(Exception):
    """The request or document is refused (exit 3); nothing was changed."""

    def __init__(self, error: str, errors: list[str] | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.errors = errors or [error]


# --------------------------------------------------------------------------- strict JSON


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate member name {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]!r} is out of the range this importer represents")
    return value


def parse_json_bytes(raw: bytes) -> Any:
    """RFC 8259 JSON, strictly: UTF-8 without a BOM, no NaN/Infinity, no duplicate member names,
    no lone surrogates."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raise Refused("not a JSON document this importer accepts", ["the document starts with a byte order mark"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused("not a JSON document this importer accepts", [f"not UTF-8: {exc}"]) from None
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant,
                           parse_float=_finite_float)
    except RecursionError:
        raise Refused("not a JSON document this importer accepts", ["nested too deeply"]) from None
    except ValueError as exc:
        raise Refused("not a JSON document this importer accepts", [str(exc)]) from None
    bad = _lone_surrogate(value)
    if bad is not None:
        raise Refused("not a JSON document this importer accepts", [f"{bad or '/'}: a string holds a lone surrogate (not Unicode text)"])
    return value


def _lone_surrogate(value: Any) -> str | None:
    """The JSON pointer of the first string (or member name) holding a lone surrogate, else None."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if not _is_unicode(item):
                return path
        elif isinstance(item, dict):
            for key, sub in item.items():
                if not _is_unicode(key):
                    return path
                stack.append((f"{path}/{_escape(key)}", sub))
        elif isinstance(item, list):
            stack.extend((f"{path}/{i}", sub) for i, sub in enumerate(item))
    return None


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


# --------------------------------------------------------------------------- formats

_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*")


def is_date_time(text: str) -> bool:
    """RFC 3339 section 5.6 date-time (what JSON Schema 2020-12 "format": "date-time" names)."""
    m = _DATE_TIME.fullmatch(text)
    if not m:
        return False
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    if m.group(9):
        off_h, off_m = int(m.group(10)), int(m.group(11))
        if off_h > 23 or off_m > 59:
            return False
        offset = (off_h * 60 + off_m) * (1 if m.group(9) == "+" else -1)
    else:
        offset = 0
    if second == 60:  # a leap second is 23:59:60 in UTC
        utc_minutes = (hour * 60 + minute - offset) % (24 * 60)
        if utc_minutes != 23 * 60 + 59:
            return False
    return True


def is_uri(text: str) -> bool:
    """RFC 3986 URI (absolute: a scheme is required), ASCII only."""
    return _URI.fullmatch(text) is not None


# --------------------------------------------------------------------------- validation


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "null":
        return value is None
    raise AssertionError(kind)


class Checker:
    """The v0.1 JSON Schema (every keyword it uses, formats asserted) plus the Provenance rules."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def err(self, path: str, message: str) -> None:
        self.errors.append(f"{path or '/'}: {message}")

    def typed(self, obj: dict[str, Any], key: str, kind: str, path: str) -> bool:
        """Whether obj[key] is present and of `kind` (an error when present and not)."""
        if key not in obj:
            return False
        if not _type_ok(obj[key], kind):
            self.err(f"{path}/{key}", f"must be a {kind}")
            return False
        return True

    def string(self, obj: dict[str, Any], key: str, path: str, fmt: str | None = None) -> None:
        if self.typed(obj, key, "string", path):
            self.format(obj[key], f"{path}/{key}", fmt)

    def format(self, value: str, path: str, fmt: str | None) -> None:
        if fmt == "date-time" and not is_date_time(value):
            self.err(path, f"not an RFC 3339 date-time: {value!r}")
        elif fmt == "uri" and not is_uri(value):
            self.err(path, f"not a URI: {value!r}")

    def enum(self, obj: dict[str, Any], key: str, allowed: tuple[str, ...], path: str) -> None:
        if key in obj and not (isinstance(obj[key], str) and obj[key] in allowed):
            self.err(f"{path}/{key}", f"must be one of {', '.join(allowed)}")

    def required(self, obj: dict[str, Any], keys: tuple[str, ...], path: str) -> None:
        for key in keys:
            if key not in obj:
                self.err(f"{path}/{key}", "required member missing")

    def string_array(self, obj: dict[str, Any], key: str, path: str) -> None:
        if self.typed(obj, key, "array", path):
            for i, item in enumerate(obj[key]):
                if not isinstance(item, str):
                    self.err(f"{path}/{key}/{i}", "must be a string")

    def document(self, doc: Any) -> None:
        if not isinstance(doc, dict):
            self.err("", "an export must be a JSON object")
            return
        self.required(doc, ("export_version", "exported_at", "subject", "atoms", "artifacts"), "")
        if "export_version" in doc and not (isinstance(doc["export_version"], str) and doc["export_version"] == EXPORT_VERSION):
            self.err("/export_version", f"must be the string {EXPORT_VERSION!r}")
        self.string(doc, "exported_at", "", "date-time")
        self.string(doc, "source_provider", "")
        if self.typed(doc, "subject", "object", ""):
            subject = doc["subject"]
            self.required(subject, ("subject_id",), "/subject")
            for key in ("subject_id", "display_name", "locale"):
                self.string(subject, key, "/subject")
        if self.typed(doc, "atoms", "array", ""):
            for i, atom in enumerate(doc["atoms"]):
                self.atom(atom, f"/atoms/{i}")
            self.unique(doc["atoms"], "atom_id", "/atoms")
        if self.typed(doc, "artifacts", "array", ""):
            for i, artifact in enumerate(doc["artifacts"]):
                self.artifact(artifact, f"/artifacts/{i}")
            self.unique(doc["artifacts"], "artifact_id", "/artifacts")

    def unique(self, items: list[Any], key: str, path: str) -> None:
        seen: dict[str, int] = {}
        for i, item in enumerate(items):
            if isinstance(item, dict) and isinstance(item.get(key), str):
                if item[key] in seen:
                    self.err(f"{path}/{i}/{key}", f"{item[key]!r} is also used by {path}/{seen[item[key]]}")
                else:
                    seen[item[key]] = i

    def atom(self, atom: Any, path: str) -> None:
        if not isinstance(atom, dict):
            self.err(path, "an atom must be an object")
            return
        self.required(atom, ("atom_id", "kind", "text", "created_at", "provenance"), path)
        self.string(atom, "atom_id", path)
        self.enum(atom, "kind", ATOM_KINDS, path)
        if self.typed(atom, "text", "string", path):
            text = atom["text"]
            size = len(text.encode("utf-8")) if "text_length_in_bytes" in BUGS else len(text)
            if size > TEXT_MAX:
                self.err(f"{path}/text", f"longer than {TEXT_MAX} characters ({size})")
        if self.typed(atom, "confidence", "number", path) and not 0 <= atom["confidence"] <= 1:
            self.err(f"{path}/confidence", "must be between 0 and 1")
        self.enum(atom, "sensitivity", SENSITIVITIES, path)
        self.string(atom, "valid_from", path, "date-time")
        if "valid_to" in atom and atom["valid_to"] is not None:
            self.string(atom, "valid_to", path, "date-time")
        self.string(atom, "created_at", path, "date-time")
        if self.typed(atom, "provenance", "object", path):
            self.provenance(atom["provenance"], f"{path}/provenance", atom.get("atom_id"))

    def provenance(self, prov: dict[str, Any], path: str, atom_id: Any) -> None:
        self.required(prov, ("derivation",), path)
        self.enum(prov, "derivation", DERIVATIONS, path)
        self.string_array(prov, "artifact_ids", path)
        self.string(prov, "extractor", path)
        self.typed(prov, "human_reviewed", "boolean", path)
        derivation = prov.get("derivation")
        sources = prov.get("artifact_ids")
        sourced = isinstance(sources, list) and len(sources) > 0
        if derivation == "inferred":
            if not sourced and "inferred_unsourced_accepted" not in BUGS:
                self.err(f"{path}/artifact_ids", "an inferred atom must name the artifacts it was inferred from "
                         "(the whole export is rejected)")
            if ("extractor" not in prov or prov["extractor"] == "") and "extractor_not_required" not in BUGS:
                self.err(f"{path}/extractor", "an inferred atom must name its extractor")
        elif derivation == "observed":
            if not sourced:
                self.err(f"{path}/artifact_ids", "an observed atom must name the artifacts it was observed in")
        elif derivation == "stated" and not sourced:
            self.warnings.append(f"{path}: stated atom {atom_id!r} names no artifact (one is recommended)")

    def artifact(self, artifact: Any, path: str) -> None:
        if not isinstance(artifact, dict):
            self.err(path, "an artifact must be an object")
            return
        self.required(artifact, ("artifact_id", "kind", "captured_at"), path)
        self.string(artifact, "artifact_id", path)
        self.enum(artifact, "kind", ARTIFACT_KINDS, path)
        for key in ("title", "body", "source"):
            self.string(artifact, key, path)
        self.string(artifact, "media_url", path, "uri")
        self.string(artifact, "captured_at", path, "date-time")
        self.string_array(artifact, "atom_ids", path)
        self.typed(artifact, "private", "boolean", path)


def check_document(doc: Any) -> Checker:
    checker = Checker()
    checker.document(doc)
    return checker


# --------------------------------------------------------------------------- store


def state_dir() -> Path:
    base = os.environ.get("SECOND_OPINION_STATE") or os.path.join(tempfile.gettempdir(), "amps2-state")
    path = Path(base)
    (path / "subjects").mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def locked(exclusive: bool) -> Iterator[Path]:
    root = state_dir()
    fd = os.open(root / "state.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield root
    finally:
        os.close(fd)  # releases the lock


def subject_file(root: Path, subject_id: str) -> Path:
    return root / "subjects" / (hashlib.sha256(subject_id.encode("utf-8")).hexdigest() + ".json")


def load(root: Path, subject_id: str) -> dict[str, Any] | None:
    try:
        data = subject_file(root, subject_id).read_bytes()
    except FileNotFoundError:
        return None
    return json.loads(data)


def save(root: Path, subject_id: str, record: dict[str, Any]) -> None:
    target = subject_file(root, subject_id)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def remove(root: Path, subject_id: str) -> bool:
    try:
        subject_file(root, subject_id).unlink()
    except FileNotFoundError:
        return False
    dir_fd = os.open(root / "subjects", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return True


def _upsert(items: list[dict[str, Any]], new: list[dict[str, Any]], key: str) -> tuple[list[str], list[str]]:
    """Merge `new` into `items` by `key` (a record with a known id replaces it in place; others are
    appended in document order); the ids added and the ids replaced."""
    where = {item[key]: i for i, item in enumerate(items)}
    added, replaced = [], []
    for item in new:
        if item[key] in where:
            items[where[item[key]]] = item
            replaced.append(item[key])
        else:
            where[item[key]] = len(items)
            items.append(item)
            added.append(item[key])
    return added, replaced


def merge_into(record: dict[str, Any] | None, doc: dict[str, Any], subject: dict[str, Any],
               atoms: list[dict[str, Any]], artifacts: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The subject's stored record after merging this import, and the import's summary counts."""
    if record is None:
        record = {"subject": {}, "extensions": {}, "atoms": [], "artifacts": [], "imports": 0}
    record["subject"] = {**record["subject"], **subject}
    record["extensions"] = {**record["extensions"], **{k: v for k, v in doc.items() if k not in CORE_KEYS}}
    atoms_added, atoms_replaced = _upsert(record["atoms"], atoms, "atom_id")
    arts_added, arts_replaced = _upsert(record["artifacts"], artifacts, "artifact_id")
    record["imports"] += 1
    counts = {
        "atoms": {"received": len(atoms), "added": len(atoms_added), "replaced": len(atoms_replaced)},
        "artifacts": {"received": len(artifacts), "added": len(arts_added), "replaced": len(arts_replaced)},
    }
    return record, counts


# --------------------------------------------------------------------------- operations


def normalized_subject_id(subject_id: str) -> str:
    return subject_id.strip().lower() if "subject_id_normalized" in BUGS else subject_id


def op_import_export(raw: bytes) -> dict[str, Any]:
    doc = parse_json_bytes(raw)
    checker = check_document(doc)
    if checker.errors:
        if "partial_import_on_reject" in BUGS:
            _store_prefix(doc, checker.errors)
        raise Refused("invalid export: rejected whole, nothing imported", checker.errors)
    subject = dict(doc["subject"])
    subject["subject_id"] = subject_id = normalized_subject_id(subject["subject_id"])
    with locked(exclusive=True) as root:
        before = load(root, subject_id)
        record, counts = merge_into(before, doc, subject, doc["atoms"], doc["artifacts"])
        save(root, subject_id, record)
    return {
        "imported": True,
        "subject_id": subject_id,
        "mode": "merge" if before is not None else "new",
        **counts,
        "atom_ids": [a["atom_id"] for a in doc["atoms"]],
        "artifact_ids": [a["artifact_id"] for a in doc["artifacts"]],
        "stored": {"atoms": len(record["atoms"]), "artifacts": len(record["artifacts"])},
        "warnings": checker.warnings,
    }


def _store_prefix(doc: Any, errors: list[str]) -> None:
    """Bug partial_import_on_reject: the atoms before the first bad atom were already written."""
    if not isinstance(doc, dict) or not isinstance(doc.get("subject"), dict):
        return
    subject_id = doc["subject"].get("subject_id")
    atoms = doc.get("atoms")
    if not isinstance(subject_id, str) or not isinstance(atoms, list):
        return
    bad = [int(m.group(1)) for e in errors if (m := re.match(r"/atoms/(\d+)", e))]
    first_bad = min(bad) if bad else len(atoms)
    prefix = [a for a in atoms[:first_bad] if isinstance(a, dict) and isinstance(a.get("atom_id"), str)]
    subject_id = normalized_subject_id(subject_id)
    with locked(exclusive=True) as root:
        record, _ = merge_into(load(root, subject_id), {}, {**doc["subject"], "subject_id": subject_id}, prefix, [])
        save(root, subject_id, record)


def _subject_of(request: Any, *extra: str) -> tuple[str, ...]:
    if not isinstance(request, dict):
        raise Refused("bad request", ["the request must be a JSON object"])
    values = []
    for key in ("subject_id", *extra):
        if not isinstance(request.get(key), str):
            raise Refused("bad request", [f"/{key}: a string is required"])
        values.append(request[key])
    return tuple(values)


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def op_export(request: Any) -> dict[str, Any]:
    (subject_id,) = _subject_of(request)
    with locked(exclusive=False) as root:
        record = load(root, subject_id)
    if record is None:  # nothing is held for this subject: its export holds nothing
        record = {"subject": {"subject_id": subject_id}, "extensions": {}, "atoms": [], "artifacts": []}
    atoms = record["atoms"]
    artifacts = record["artifacts"]
    if "sensitivity_downgraded" in BUGS:
        atoms = [{**a, "sensitivity": "private"} if a.get("sensitivity") in REGULATED else a for a in atoms]
    if "private_flag_dropped" in BUGS:
        artifacts = [{k: v for k, v in a.items() if k != "private"} for a in artifacts]
    doc = {
        "export_version": EXPORT_VERSION,
        "exported_at": now_rfc3339(),
        "source_provider": PROVIDER,
        "subject": record["subject"],
        "atoms": atoms,
        "artifacts": artifacts,
    }
    doc.update({k: v for k, v in record["extensions"].items() if k not in CORE_KEYS})
    return doc


def cascade(record: dict[str, Any], artifact_id: str) -> dict[str, Any]:
    """Delete the artifact and re-evaluate every atom whose provenance cites it (Delete cascades)."""
    found = any(a["artifact_id"] == artifact_id for a in record["artifacts"])
    record["artifacts"] = [a for a in record["artifacts"] if a["artifact_id"] != artifact_id]
    if "delete_no_cascade" in BUGS:
        return {"artifact_found": found, "atoms_deleted": [], "atoms_updated": []}
    kept, deleted, updated = [], [], []
    for atom in record["atoms"]:
        prov = atom["provenance"]
        sources = prov.get("artifact_ids")
        if not isinstance(sources, list) or artifact_id not in sources:
            kept.append(atom)
            continue
        remaining = [s for s in sources if s != artifact_id]
        if len(set(remaining)) < MIN_SOURCES[prov["derivation"]]:
            deleted.append(atom["atom_id"])
            continue
        kept.append({**atom, "provenance": {**prov, "artifact_ids": remaining}})
        updated.append(atom["atom_id"])
    record["atoms"] = kept
    if deleted:  # no artifact keeps pointing at a deleted atom
        gone = set(deleted)
        record["artifacts"] = [
            {**a, "atom_ids": [i for i in a["atom_ids"] if i not in gone]}
            if isinstance(a.get("atom_ids"), list) and gone.intersection(a["atom_ids"]) else a
            for a in record["artifacts"]
        ]
    return {"artifact_found": found, "atoms_deleted": deleted, "atoms_updated": updated}


def op_delete_artifact(request: Any) -> dict[str, Any]:
    subject_id, artifact_id = _subject_of(request, "artifact_id")
    with locked(exclusive=True) as root:
        record = load(root, subject_id)
        if record is None:
            return {"subject_id": subject_id, "artifact_id": artifact_id, "subject_found": False,
                    "artifact_found": False, "atoms_deleted": [], "atoms_updated": []}
        result = cascade(record, artifact_id)
        save(root, subject_id, record)
    return {"subject_id": subject_id, "artifact_id": artifact_id, "subject_found": True, **result,
            "stored": {"atoms": len(record["atoms"]), "artifacts": len(record["artifacts"])}}


def op_delete_subject(request: Any) -> dict[str, Any]:
    (subject_id,) = _subject_of(request)
    with locked(exclusive=True) as root:
        record = load(root, subject_id)
        removed = remove(root, subject_id)
    result: dict[str, Any] = {"subject_id": subject_id, "deleted": removed}
    if record is not None:
        result.update(atoms_deleted=len(record["atoms"]), artifacts_deleted=len(record["artifacts"]))
    return result


def read_request(path: str) -> Any:
    return parse_json_bytes(Path(path).read_bytes())


OPS = {
    "import_export": lambda path: op_import_export(Path(path).read_bytes()),
    "export": lambda path: op_export(read_request(path)),
    "delete_artifact": lambda path: op_delete_artifact(read_request(path)),
    "delete_subject": lambda path: op_delete_subject(read_request(path)),
}


def write_reply(path: str, body: Any) -> None:
    Path(path).write_text(json.dumps(body, ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")


def bugs_from_env() -> frozenset[str]:
    names = {n.strip() for n in os.environ.get("SECOND_OPINION_BUGS", "").split(",") if n.strip()}
    unknown = names - BUG_NAMES
    if unknown:
        raise SystemExit(f"amps2: unknown bug name(s): {', '.join(sorted(unknown))}")
    return frozenset(names)


def main(argv: list[str]) -> int:
    global BUGS
    try:
        BUGS = bugs_from_env()
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    if len(argv) != 3:
        print("usage: app.py OP INPUT OUTPUT", file=sys.stderr)
        return EXIT_USAGE
    op, input_path, output_path = argv
    handler = OPS.get(op)
    if handler is None:
        write_reply(output_path, {"error": f"no such operation: {op}", "errors": [f"operations: {', '.join(OPS)}"]})
        return EXIT_NO_OP
    try:
        reply = handler(input_path)
    except Refused as exc:
        write_reply(output_path, {"error": exc.error, "errors": exc.errors})
        return EXIT_REFUSED
    write_reply(output_path, reply)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
