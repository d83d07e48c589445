"""Self-test of the amps2 command: the clean behaviour end to end, then one observable difference per bug.

Every call is a real process (python app.py OP INPUT OUTPUT), state in tmp_path."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

APP = Path(__file__).with_name("app.py")
BUGS = [b["name"] for b in json.loads(APP.with_name("bugs.json").read_text(encoding="utf-8"))]


def example(subject_id: str = "user_9f4e...") -> dict[str, Any]:
    """The spec's worked example, plus a regulated atom, a private artifact and provider extensions."""
    return {
        "export_version": "0.1.0",
        "exported_at": "2026-07-13T14:22:00Z",
        "source_provider": "konshus",
        "x-konshus": {"vault": "v1"},
        "subject": {"subject_id": subject_id, "display_name": "J. Miller", "locale": "en-US"},
        "atoms": [
            {
                "atom_id": "atom_001", "kind": "preference",
                "text": "Prefers direct, unhedged feedback in writing; softens things in person.",
                "confidence": 0.87, "sensitivity": "public", "valid_from": "2025-11-04T00:00:00Z",
                "created_at": "2026-01-12T18:44:00Z",
                "provenance": {"derivation": "inferred", "artifact_ids": ["art_101", "art_144"],
                               "extractor": "claude-opus-4", "human_reviewed": True},
            },
            {
                "atom_id": "atom_002", "kind": "relationship",
                "text": "Co-founder of a health-tech startup; primary collaborator is R. Kim.",
                "confidence": 0.98, "sensitivity": "public", "created_at": "2025-09-01T12:00:00Z",
                "provenance": {"derivation": "stated"},
            },
            {
                "atom_id": "atom_003", "kind": "fact", "text": "Takes a daily thyroid medication.",
                "sensitivity": "medical", "created_at": "2026-02-01T08:00:00+01:00", "valid_to": None,
                "x-konshus": {"score": 3},
                "provenance": {"derivation": "observed", "artifact_ids": ["art_200"]},
            },
        ],
        "artifacts": [
            {"artifact_id": "art_101", "kind": "chat", "title": "Q4 board prep",
             "body": "…the whole conversation transcript, unchanged…", "captured_at": "2025-11-04T20:11:00Z",
             "source": "chatgpt-export", "atom_ids": ["atom_001"], "private": False},
            {"artifact_id": "art_200", "kind": "journal", "body": "Took the pill.", "private": True,
             "captured_at": "2026-02-01T07:59:00Z", "atom_ids": ["atom_003"],
             "media_url": "https://example.org/j/200"},
        ],
    }


class App:
    def __init__(self, tmp: Path, bugs: str = "") -> None:
        self.tmp = tmp
        self.env = {**os.environ, "SECOND_OPINION_STATE": str(tmp / "state"), "SECOND_OPINION_BUGS": bugs}
        self.n = 0

    def call(self, op: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
        self.n += 1
        src, out = self.tmp / f"in{self.n}.json", self.tmp / f"out{self.n}.json"
        src.write_bytes(raw if raw is not None else json.dumps(body, ensure_ascii=False).encode("utf-8"))
        proc = subprocess.run([sys.executable, str(APP), op, str(src), str(out)], env=self.env,
                              capture_output=True, timeout=30)
        reply = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
        return proc.returncode, reply

    def export(self, subject_id: str = "user_9f4e...") -> tuple[int, Any]:
        return self.call("export", {"subject_id": subject_id})


@pytest.fixture
def app(tmp_path: Path) -> App:
    return App(tmp_path)


def bugged(tmp_path: Path, name: str) -> App:
    return App(tmp_path, name)


def empty(reply: tuple[int, Any], subject_id: str) -> bool:
    code, doc = reply
    return code == 0 and doc["subject"] == {"subject_id": subject_id} and doc["atoms"] == doc["artifacts"] == []


def atom_by_id(doc: dict[str, Any], atom_id: str) -> dict[str, Any] | None:
    return next((a for a in doc["atoms"] if a["atom_id"] == atom_id), None)


# ------------------------------------------------------------------ clean


def test_round_trip_keeps_every_field(app: App) -> None:
    doc = example()
    code, summary = app.call("import_export", doc)
    assert code == 0 and summary["imported"] and summary["atoms"]["added"] == 3
    code, out = app.export()
    assert code == 0
    assert out["export_version"] == "0.1.0" and out["source_provider"] == "amps2"
    assert out["subject"] == doc["subject"]
    assert out["atoms"] == doc["atoms"] and out["artifacts"] == doc["artifacts"]
    assert out["x-konshus"] == {"vault": "v1"}
    assert load_module().check_document(out).errors == []
    # the export is importable again (by this importer too)
    assert app.call("import_export", out)[0] == 0


def bad(mutate: Any) -> dict[str, Any]:
    doc = example("subj-bad")
    mutate(doc)
    return doc


def _del(d: dict[str, Any], key: str) -> None:
    del d[key]


REJECTED = {
    "inferred_no_sources": lambda d: _del(d["atoms"][0]["provenance"], "artifact_ids"),
    "inferred_empty_sources": lambda d: d["atoms"][0]["provenance"].update(artifact_ids=[]),
    "inferred_no_extractor": lambda d: _del(d["atoms"][0]["provenance"], "extractor"),
    "observed_no_sources": lambda d: _del(d["atoms"][2]["provenance"], "artifact_ids"),
    "text_501": lambda d: d["atoms"][1].update(text="a" * 501),
    "version": lambda d: d.update(export_version="0.1"),
    "exported_at": lambda d: d.update(exported_at="2026-07-13 14:22"),
    "feb_30": lambda d: d["atoms"][1].update(created_at="2026-02-30T00:00:00Z"),
    "no_zone": lambda d: d["atoms"][1].update(created_at="2026-02-03T00:00:00"),
    "confidence": lambda d: d["atoms"][1].update(confidence=1.5),
    "confidence_bool": lambda d: d["atoms"][1].update(confidence=True),
    "kind": lambda d: d["atoms"][1].update(kind="opinion"),
    "sensitivity": lambda d: d["atoms"][1].update(sensitivity="secret"),
    "derivation": lambda d: d["atoms"][1]["provenance"].update(derivation="guessed"),
    "artifact_kind": lambda d: d["artifacts"][0].update(kind="video"),
    "private_string": lambda d: d["artifacts"][0].update(private="true"),
    "media_url": lambda d: d["artifacts"][1].update(media_url="not a uri"),
    "no_subject_id": lambda d: _del(d["subject"], "subject_id"),
    "no_artifacts": lambda d: _del(d, "artifacts"),
    "atom_no_provenance": lambda d: _del(d["atoms"][1], "provenance"),
    "duplicate_atom_id": lambda d: d["atoms"][1].update(atom_id="atom_001"),
}


def load_module() -> Any:
    spec = importlib.util.spec_from_file_location("amps2_app", APP)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class InProcess(App):
    """The same calls through app.main() in this process (fast; for the many refusal cases)."""

    module = None

    def call(self, op: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
        if InProcess.module is None:
            InProcess.module = load_module()
        self.n += 1
        src, out = self.tmp / f"in{self.n}.json", self.tmp / f"out{self.n}.json"
        src.write_bytes(raw if raw is not None else json.dumps(body, ensure_ascii=False).encode("utf-8"))
        saved = {k: os.environ.get(k) for k in ("SECOND_OPINION_STATE", "SECOND_OPINION_BUGS")}
        os.environ.update({k: self.env[k] for k in saved})
        try:
            code = InProcess.module.main([op, str(src), str(out)])
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        return code, json.loads(out.read_text(encoding="utf-8")) if out.exists() else None


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_rejected_whole(tmp_path: Path, case: str) -> None:
    app = InProcess(tmp_path)
    code, reply = app.call("import_export", bad(REJECTED[case]))
    assert code == 3, reply
    assert reply["error"] and reply["errors"]
    assert not list((app.tmp / "state" / "subjects").glob("*.json"))  # nothing of it was imported


@pytest.mark.parametrize("raw", [
    b"{not json", b"\xef\xbb\xbf{}", b'{"a": NaN}', b'{"a": 1e400}', b"\xff\xfe", b"[]",
    json.dumps(example()).replace('"export_version": "0.1.0"', '"export_version": "0.1.0", "export_version": "0.1.0"').encode(),
])
def test_broken_bytes_refused(tmp_path: Path, raw: bytes) -> None:
    code, reply = InProcess(tmp_path).call("import_export", raw=raw)
    assert code == 3 and reply["errors"]


def test_edges_accepted(app: App) -> None:
    doc = example("subj-edge")
    doc["atoms"][1]["text"] = "é" * 500
    doc["atoms"][1]["confidence"] = 0
    doc["atoms"][0]["valid_to"] = "2030-01-01T00:00:00.5-05:00"
    doc["unknown_top"] = 1
    assert app.call("import_export", doc)[0] == 0
    assert atom_by_id(app.export("subj-edge")[1], "atom_002")["text"] == "é" * 500


def test_second_import_merges(app: App) -> None:
    app.call("import_export", example())
    second = example()
    second["atoms"] = [dict(second["atoms"][1], text="Changed text."),
                       dict(second["atoms"][1], atom_id="atom_004", text="A new one.")]
    second["artifacts"] = []
    code, summary = app.call("import_export", second)
    assert code == 0 and summary["mode"] == "merge"
    assert summary["atoms"] == {"received": 2, "added": 1, "replaced": 1}
    out = app.export()[1]
    assert [a["atom_id"] for a in out["atoms"]] == ["atom_001", "atom_002", "atom_003", "atom_004"]
    assert atom_by_id(out, "atom_002")["text"] == "Changed text."
    assert len(out["artifacts"]) == 2


def test_delete_artifact_cascades(app: App) -> None:
    doc = example()
    doc["atoms"][1]["provenance"]["artifact_ids"] = ["art_200"]  # stated: keeps living without it
    app.call("import_export", doc)
    code, result = app.call("delete_artifact", {"subject_id": "user_9f4e...", "artifact_id": "art_200"})
    assert code == 0 and result["artifact_found"]
    assert result["atoms_deleted"] == ["atom_003"] and result["atoms_updated"] == ["atom_002"]
    out = app.export()[1]
    assert atom_by_id(out, "atom_003") is None
    assert atom_by_id(out, "atom_002")["provenance"]["artifact_ids"] == []
    assert [a["artifact_id"] for a in out["artifacts"]] == ["art_101"]
    # atom_001 cites art_101 and art_144: deleting art_101 leaves it one source
    result = app.call("delete_artifact", {"subject_id": "user_9f4e...", "artifact_id": "art_101"})[1]
    assert result["atoms_updated"] == ["atom_001"] and result["atoms_deleted"] == []
    result = app.call("delete_artifact", {"subject_id": "user_9f4e...", "artifact_id": "art_144"})[1]
    assert result["artifact_found"] is False and result["atoms_deleted"] == ["atom_001"]


def test_delete_subject_and_requests(app: App) -> None:
    app.call("import_export", example())
    code, result = app.call("delete_subject", {"subject_id": "user_9f4e..."})
    assert code == 0 and result["deleted"] is True
    assert empty(app.export(), "user_9f4e...")
    assert app.call("delete_subject", {"subject_id": "user_9f4e..."})[1]["deleted"] is False
    assert app.call("export", {"subject": "x"})[0] == 3
    assert app.call("export", raw=b"nope")[0] == 3
    assert app.call("frobnicate", {})[0] == 4


def test_unknown_bug_refuses_to_start(tmp_path: Path) -> None:
    assert App(tmp_path, "no_such_bug").call("export", {"subject_id": "x"})[0] == 2


def test_concurrent_imports_all_land(app: App) -> None:
    docs = []
    for i in range(6):
        doc = example("subj-par")
        doc["atoms"] = [dict(doc["atoms"][1], atom_id=f"par_{i}")]
        docs.append(doc)
    callers = [_fresh(app, i) for i in range(6)]
    with ThreadPoolExecutor(6) as pool:
        codes = list(pool.map(lambda pair: pair[0].call("import_export", pair[1])[0], zip(callers, docs, strict=True)))
    assert codes == [0] * 6
    ids = sorted(a["atom_id"] for a in app.export("subj-par")[1]["atoms"])
    assert ids == [f"par_{i}" for i in range(6)]


def _fresh(app: App, i: int) -> App:
    """A caller of its own (its own folder for in/out files), on the same state."""
    other = App(app.tmp / f"caller{i}")
    other.tmp.mkdir()
    other.env = app.env
    return other


# ------------------------------------------------------------------ bugs: one observable difference each


def test_every_bug_has_a_test() -> None:
    tested = {name[len("test_bug_"):] for name in globals() if name.startswith("test_bug_")}
    assert tested == set(BUGS)


def test_bug_inferred_unsourced_accepted(tmp_path: Path) -> None:
    doc = bad(REJECTED["inferred_no_sources"])
    assert bugged(tmp_path, "inferred_unsourced_accepted").call("import_export", doc)[0] == 0


def test_bug_partial_import_on_reject(tmp_path: Path) -> None:
    app = bugged(tmp_path, "partial_import_on_reject")
    doc = example("subj-partial")
    doc["atoms"][2]["provenance"]["artifact_ids"] = []
    assert app.call("import_export", doc)[0] == 3
    code, out = app.export("subj-partial")
    assert code == 0 and [a["atom_id"] for a in out["atoms"]] == ["atom_001", "atom_002"]


def test_bug_extractor_not_required(tmp_path: Path) -> None:
    doc = bad(REJECTED["inferred_no_extractor"])
    assert bugged(tmp_path, "extractor_not_required").call("import_export", doc)[0] == 0


def test_bug_text_length_in_bytes(tmp_path: Path) -> None:
    doc = example()
    doc["atoms"][1]["text"] = "é" * 500
    assert bugged(tmp_path, "text_length_in_bytes").call("import_export", doc)[0] == 3


def test_bug_sensitivity_downgraded(tmp_path: Path) -> None:
    app = bugged(tmp_path, "sensitivity_downgraded")
    app.call("import_export", example())
    assert atom_by_id(app.export()[1], "atom_003")["sensitivity"] == "private"


def test_bug_private_flag_dropped(tmp_path: Path) -> None:
    app = bugged(tmp_path, "private_flag_dropped")
    app.call("import_export", example())
    assert "private" not in app.export()[1]["artifacts"][1]


def test_bug_delete_no_cascade(tmp_path: Path) -> None:
    app = bugged(tmp_path, "delete_no_cascade")
    app.call("import_export", example())
    result = app.call("delete_artifact", {"subject_id": "user_9f4e...", "artifact_id": "art_200"})[1]
    assert result["atoms_deleted"] == []
    assert atom_by_id(app.export()[1], "atom_003")["provenance"]["artifact_ids"] == ["art_200"]


def test_bug_subject_id_normalized(tmp_path: Path) -> None:
    app = bugged(tmp_path, "subject_id_normalized")
    doc = example("User-ABC")
    code, summary = app.call("import_export", copy.deepcopy(doc))
    assert code == 0 and summary["subject_id"] == "user-abc"
    assert empty(app.export("User-ABC"), "User-ABC")
