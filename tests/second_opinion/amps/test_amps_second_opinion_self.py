"""Self-test of the independent AMPS implementation: correct with no bugs, and each bug visible."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
APP = HERE / "app.py"
# Loaded under a unique name: other second-opinion folders may have an app.py too.
_spec = importlib.util.spec_from_file_location("amps_second_opinion_app", APP)
app = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(app)

EXAMPLE = {
    "export_version": "0.1.0",
    "exported_at": "2026-07-13T14:22:00Z",
    "source_provider": "konshus",
    "x-konshus": {"vault": "v1"},
    "subject": {"subject_id": "User_9f4e", "display_name": "J. Miller", "locale": "en-US"},
    "atoms": [
        {"atom_id": "atom_001", "kind": "preference",
         "text": "Prefers direct, unhedged feedback in writing; softens things in person.",
         "confidence": 0.87, "sensitivity": "medical", "valid_from": "2025-11-04T00:00:00Z",
         "created_at": "2026-01-12T18:44:00Z", "x-konshus": {"score": 3},
         "provenance": {"derivation": "inferred", "artifact_ids": ["art_101", "art_144"],
                        "extractor": "claude-opus-4", "human_reviewed": True}},
        {"atom_id": "atom_002", "kind": "relationship",
         "text": "Co-founder of a health-tech startup; primary collaborator is R. Kim.",
         "confidence": 0.98, "sensitivity": "public", "created_at": "2025-09-01T12:00:00Z",
         "provenance": {"derivation": "stated"}},
        {"atom_id": "atom_003", "kind": "fact", "text": "Usually books meetings on Tuesday mornings.",
         "created_at": "2025-09-01T12:00:00Z", "valid_to": None,
         "provenance": {"derivation": "observed", "artifact_ids": ["art_101"]}},
    ],
    "artifacts": [
        {"artifact_id": "art_101", "kind": "chat", "title": "Q4 board prep", "body": "transcript",
         "captured_at": "2025-11-04T20:11:00Z", "source": "chatgpt-export",
         "atom_ids": ["atom_001", "atom_003"], "private": True,
         "media_url": "https://example.com/a?b=c#d", "x-konshus": {"pinned": True}},
    ],
}


@pytest.fixture()
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("SECOND_OPINION_STATE", str(tmp_path / "state"))
    monkeypatch.delenv("SECOND_OPINION_BUGS", raising=False)
    return tmp_path


def call(tmp: Path, op: str, body, raw: bytes | None = None):
    src, dst = tmp / "in.json", tmp / "out.json"
    src.write_bytes(raw if raw is not None else json.dumps(body).encode())
    code = app.main([op, str(src), str(dst)])
    return code, json.loads(dst.read_text())


def bugs(monkeypatch, name):
    monkeypatch.setenv("SECOND_OPINION_BUGS", name)


def with_(doc=EXAMPLE, **paths):
    """A copy of doc with 'atoms.0.confidence'-style paths replaced (value None for "delete")."""
    out = copy.deepcopy(doc)
    for dotted, value in paths.items():
        *parents, last = dotted.split("__")
        node = out
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        if value is ...:
            del node[int(last) if last.isdigit() else last]
        else:
            node[int(last) if last.isdigit() else last] = value
    return out


# --------------------------------------------------------------------------- correct behaviour

def test_end_to_end_as_separate_processes(tmp_path):
    env = dict(os.environ, SECOND_OPINION_STATE=str(tmp_path / "state"))
    env.pop("SECOND_OPINION_BUGS", None)
    (tmp_path / "doc.json").write_text(json.dumps(EXAMPLE))
    others = []
    for n in range(3):  # overlapping imports of other subjects while ours is imported
        doc = with_(subject__subject_id=f"other-{n}")
        (tmp_path / f"o{n}.json").write_text(json.dumps(doc))
        others.append(subprocess.Popen([sys.executable, str(APP), "import_export", str(tmp_path / f"o{n}.json"),
                                        str(tmp_path / f"o{n}.out")], env=env, cwd=tmp_path))
    run = lambda *a: subprocess.run([sys.executable, str(APP), *a], env=env, cwd=tmp_path).returncode  # noqa: E731
    assert run("import_export", str(tmp_path / "doc.json"), str(tmp_path / "r1.json")) == 0
    assert all(p.wait() == 0 for p in others)
    (tmp_path / "q.json").write_text(json.dumps({"subject_id": "User_9f4e"}))
    assert run("export", str(tmp_path / "q.json"), str(tmp_path / "r2.json")) == 0
    out = json.loads((tmp_path / "r2.json").read_text())
    for key in ("subject", "atoms", "artifacts", "source_provider", "x-konshus"):
        assert out[key] == EXAMPLE[key], key
    assert out["export_version"] == "0.1.0"
    assert run("bogus", str(tmp_path / "q.json"), str(tmp_path / "r3.json")) == 4
    (tmp_path / "bad.json").write_text('{"export_version": "0.1.0"')
    assert run("import_export", str(tmp_path / "bad.json"), str(tmp_path / "r4.json")) == 3
    assert "error" in json.loads((tmp_path / "r4.json").read_text())


def test_refusals(state):
    cases = [
        with_(export_version="0.2.0"),
        with_(atoms__0__confidence=1.5),
        with_(atoms__0__kind="opinion"),
        with_(atoms__0__text="x" * 501),
        with_(atoms__0__created_at="2026-02-30T00:00:00Z"),
        with_(artifacts__0__media_url="not a uri"),
        with_(artifacts__0__private="yes"),
        with_(atoms__0__provenance__extractor=...),
        with_(atoms__0__provenance__artifact_ids=...),
        with_(atoms__2__provenance__artifact_ids=[]),
        with_(atoms__1__atom_id="atom_001"),
        with_(atoms__1__text="[0.12, -0.5, 0.33]"),
    ]
    for doc in cases:
        code, reply = call(state, "import_export", doc)
        assert code == 3 and reply["error"], doc
    for raw in (b'\xef\xbb\xbf{}', b'{"a": NaN}', b'{"a": 1, "a": 2}', b'\xff'):
        assert call(state, "import_export", None, raw)[0] == 3
    # nothing of the refused documents was stored
    assert call(state, "export", {"subject_id": "User_9f4e"})[1]["atoms"] == []


def test_accepts_edges(state):
    ok = with_(atoms__0__text="é" * 500, atoms__0__confidence=1, atoms__1__confidence=0,
               atoms__0__valid_from="1998-12-31T15:59:60.123-08:00", atoms__0__valid_to=None,
               atoms__2__created_at="2024-02-29t10:00:00z")
    assert call(state, "import_export", ok)[0] == 0


def test_delete_cascade(state):
    assert call(state, "import_export", EXAMPLE)[0] == 0
    code, reply = call(state, "delete_artifact", {"subject_id": "User_9f4e", "artifact_id": "art_101"})
    assert code == 0 and reply["deleted"] and reply["atoms_deleted"] == ["atom_003"]
    out = call(state, "export", {"subject_id": "User_9f4e"})[1]
    assert [a["atom_id"] for a in out["atoms"]] == ["atom_001", "atom_002"]
    assert out["atoms"][0]["provenance"]["artifact_ids"] == ["art_144"]
    assert out["artifacts"] == []
    assert call(state, "delete_subject", {"subject_id": "User_9f4e"})[1]["deleted"] is True


# --------------------------------------------------------------------------- each bug is visible

def test_bug_confidence_accepts_bool(state, monkeypatch):
    bugs(monkeypatch, "confidence_accepts_bool")
    assert call(state, "import_export", with_(atoms__0__confidence=True))[0] == 0


def test_bug_text_length_in_bytes(state, monkeypatch):
    bugs(monkeypatch, "text_length_in_bytes")
    assert call(state, "import_export", with_(atoms__0__text="é" * 500))[0] == 3


def test_bug_lax_datetime(state, monkeypatch):
    bugs(monkeypatch, "lax_datetime")
    assert call(state, "import_export", with_(exported_at="2026-07-13T14:22:00"))[0] == 0


def test_bug_inferred_empty_artifact_ids(state, monkeypatch):
    bugs(monkeypatch, "inferred_empty_artifact_ids")
    assert call(state, "import_export", with_(atoms__0__provenance__artifact_ids=[]))[0] == 0


def test_bug_partial_import_on_reject(state, monkeypatch):
    bugs(monkeypatch, "partial_import_on_reject")
    code, _ = call(state, "import_export", with_(atoms__2__provenance__artifact_ids=...))
    assert code == 3
    assert len(call(state, "export", {"subject_id": "User_9f4e"})[1]["atoms"]) == 2


def test_bug_regulated_sensitivity_collapsed(state, monkeypatch):
    bugs(monkeypatch, "regulated_sensitivity_collapsed")
    call(state, "import_export", EXAMPLE)
    assert call(state, "export", {"subject_id": "User_9f4e"})[1]["atoms"][0]["sensitivity"] == "private"


def test_bug_private_flag_dropped(state, monkeypatch):
    bugs(monkeypatch, "private_flag_dropped")
    call(state, "import_export", EXAMPLE)
    assert "private" not in call(state, "export", {"subject_id": "User_9f4e"})[1]["artifacts"][0]


def test_bug_cascade_skips_observed(state, monkeypatch):
    bugs(monkeypatch, "cascade_skips_observed")
    call(state, "import_export", EXAMPLE)
    call(state, "delete_artifact", {"subject_id": "User_9f4e", "artifact_id": "art_101"})
    atoms = call(state, "export", {"subject_id": "User_9f4e"})[1]["atoms"]
    assert "atom_003" in [a["atom_id"] for a in atoms]


def test_bug_subject_id_normalized(state, monkeypatch):
    bugs(monkeypatch, "subject_id_normalized")
    call(state, "import_export", EXAMPLE)
    assert call(state, "export", {"subject_id": "User_9f4e"})[1]["subject"]["subject_id"] == "user_9f4e"


def test_bug_x_provider_dropped_nested(state, monkeypatch):
    bugs(monkeypatch, "x_provider_dropped_nested")
    call(state, "import_export", EXAMPLE)
    out = call(state, "export", {"subject_id": "User_9f4e"})[1]
    assert "x-konshus" in out and "x-konshus" not in out["atoms"][0]


def test_every_bug_has_a_test():
    names = {b["name"] for b in json.loads((HERE / "bugs.json").read_text())}
    tested = {n[len("test_bug_"):] for n in globals() if n.startswith("test_bug_")}
    assert names == tested
