"""Windowed validation (harness/kit/windows/) reports what the whole-file path reports: on every fixture
of each format with a window plan, and on generated exports that cross many window boundaries (the
window shrunk to a few KiB so the test stays fast)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.suite import all_suites, get_suite
from memconform.kit.fixtures_loader import fixture_root
from memconform.kit.windows import WindowedDocument, WithheldRecords
from memconform.kit.windows.plan import plan_of, read_with_plan
from memconform.run.validate import validate_file

SMALL = 2048  # bytes per window: every fixture crosses a boundary or two, generated ones hundreds
WHOLE = 1 << 28  # --max-bytes, and a window no file here reaches
WINDOWED_FORMATS = ["amps", "memoryai", "omp"]


def findings(results: list[Any]) -> list[tuple[Any, ...]]:
    return [(r.check_id, r.outcome.value, r.reason, r.not_applicable, r.inconclusive,
             [(f.title, repr(f.received), repr(f.expected), f.path, f.detail, f.readings) for f in r.failures])
            for r in results]


def both_ways(path: Path, profile: Profile | None = None, wanted: str | None = None,
              window: int = SMALL) -> tuple[list[Any], list[Any]]:
    profile = profile or Profile()
    whole = validate_file(path, wanted, profile, None, WHOLE, window=WHOLE)
    windowed = validate_file(path, wanted, profile, None, WHOLE, window=window)
    assert whole[0].name == windowed[0].name and whole[1] == windowed[1]
    return findings(whole[2]), findings(windowed[2])


def fixture_documents(spec: str) -> list[tuple[str, Any]]:
    out = []
    for verdict in ("valid", "invalid"):
        for case in sorted((fixture_root() / spec / verdict).glob("*.json")):
            data = json.loads(case.read_text("utf-8"))
            if isinstance(data, dict) and "document" in data:
                out.append((f"{verdict}/{case.stem}", data["document"]))
    return out


def write(tmp_path: Path, name: str, doc: Any, indent: int | None) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=indent, ensure_ascii=indent is None), "utf-8")
    return path


@pytest.mark.parametrize("spec", WINDOWED_FORMATS)
def test_every_fixture_reads_the_same_in_windows(spec: str, tmp_path: Path) -> None:
    cases = fixture_documents(spec)
    assert cases, f"no fixtures for {spec}"
    read_in_windows = 0
    for name, doc in cases:
        for indent in (None, 2):
            path = write(tmp_path, f"{name.replace('/', '-')}-{indent}.json", doc, indent)
            read_in_windows += read_with_plan(path, path.stat().st_size, [get_suite(spec)], 64) is not None
            for wanted in (spec, None):
                whole, windowed = both_ways(path, wanted=wanted, window=64)
                assert windowed == whole, name
    assert read_in_windows >= len(cases)  # most are: those with a root-level error are read whole


def amps_export(count: int, seed: int, flaws: bool) -> dict[str, Any]:
    """An AMPS export of `count` atoms and count//3 artifacts; with `flaws`, problems of every rule and
    schema errors scattered across the windows, strings holding `},` and `]`, non-ASCII text."""
    rng = random.Random(seed)
    artifacts = [{"artifact_id": f"art-{i}", "kind": "chat", "captured_at": "2026-01-02T03:04:05Z",
                  "title": "notes }, {\"x\": [1]} ] é", "atom_ids": [f"atom-{rng.randrange(count)}"]}
                 for i in range(count // 3)]
    atoms = []
    for i in range(count):
        atom: dict[str, Any] = {
            "atom_id": f"atom-{i}", "kind": "fact", "text": f"fact {i} }},{{ \"[\" ü 😀", "created_at": "2026-01-01T00:00:00Z",
            "sensitivity": "public", "valid_from": "2026-01-01T00:00:00Z",
            "provenance": {"derivation": "inferred", "extractor": "gpt", "artifact_ids": [f"art-{rng.randrange(count // 3)}"]}}
        if flaws and rng.random() < 0.05:
            flaw = rng.randrange(8)
            if flaw == 0:
                atom["provenance"]["artifact_ids"] = ["art-missing"]
            elif flaw == 1:
                atom["text"] = "x" * 501
            elif flaw == 2:
                del atom["sensitivity"]
            elif flaw == 3:
                atom["valid_to"] = "2025-01-01T00:00:00Z"
            elif flaw == 4:
                atom["valid_to"] = atom["valid_from"]
            elif flaw == 5:
                atom["kind"] = "rumour"
            elif flaw == 6:
                atom["provenance"] = {"derivation": "observed", "artifact_ids": []}
            else:
                atom["created_at"] = "2026-02-30T00:00:00Z"
        atoms.append(atom)
    if flaws:
        artifacts[len(artifacts) // 2]["atom_ids"].append("atom-gone")
        artifacts[-1]["captured_at"] = "yesterday"
    return {"export_version": "0.1.0", "exported_at": "2026-07-13T14:22:00Z",
            "subject": {"subject_id": "s1"}, "atoms": atoms, "artifacts": artifacts}


@pytest.mark.parametrize("flaws", [False, True])
@pytest.mark.parametrize("indent", [None, 1])
def test_generated_amps_export_reads_the_same_across_windows(flaws: bool, indent: int | None, tmp_path: Path) -> None:
    doc = amps_export(600, seed=33, flaws=flaws)
    path = write(tmp_path, "export.json", doc, indent)
    assert path.stat().st_size > 50 * SMALL  # many windows
    read = read_with_plan(path, path.stat().st_size, [get_suite("amps")], SMALL)
    assert read is not None, "the generated export was read whole: the windows were not exercised"
    whole, windowed = both_ways(path)
    assert windowed == whole
    if flaws:
        assert any(r[1] == "failed" for r in whole)
    for profile in (Profile(options={"amps.validity_order": "strictly-after", "amps.atom_labels": "required"}),):
        whole, windowed = both_ways(path, profile)
        assert windowed == whole


def test_the_envelope_after_the_sections_and_sections_in_either_order(tmp_path: Path) -> None:
    doc = amps_export(200, seed=7, flaws=True)
    reordered = {"artifacts": doc["artifacts"], "atoms": doc["atoms"], "subject": doc["subject"],
                 "exported_at": "not a date", "export_version": "0.1.0"}
    path = write(tmp_path, "reordered.json", reordered, None)
    assert read_with_plan(path, path.stat().st_size, [get_suite("amps")], SMALL) is not None
    whole, windowed = both_ways(path)
    assert windowed == whole


@pytest.mark.parametrize("text", [
    b'{"export_version":"0.1.0","atoms":[{"a":1},{"a":NaN}],"artifacts":[],"subject":{}}',  # marked NaN
    b'{"atoms":[{"a":1},{"a":2}],"atoms":[],"artifacts":[],"subject":{},"export_version":"0.1.0"}',  # twice
    b'{"atoms":[{"a":1},{"a":2}', b'{"atoms":[{"a":"\xff"}],"artifacts":[]}', b'\xef\xbb\xbf{"atoms":[]}',
    b'{"atoms":[{"a":1}],"artifacts":[]} trailing', b'{"atoms":[{"a":' + b"[" * 600 + b"]" * 600 + b"}]}",
    b'{"atoms":[{"a":12345678901234567890123}],"artifacts":[],"subject":{},"export_version":"0.1.0"}',
    # each window under the strict reader's bounds, the whole file over them: containers, then short strings
    b'{"export_version":"0.1.0","atoms":[' + b"{}," * 150_000 + b'{}],"artifacts":[],"subject":{}}',
    b'{"export_version":"0.1.0","atoms":[' + b'{"a":"","b":""},' * 120_000 + b'{}],"artifacts":[],"subject":{}}',
])
def test_texts_the_windows_do_not_take_are_read_whole_with_the_same_findings(text: bytes, tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    path.write_bytes(text + b" " * 64)
    try:
        whole = validate_file(path, "amps", Profile(), None, WHOLE, window=WHOLE)
    except Exception as exc:  # the whole-file path's own refusal: the windowed one refuses the same way
        with pytest.raises(type(exc)):
            validate_file(path, "amps", Profile(), None, WHOLE, window=16 if len(text) < 4096 else 65536)
        return
    windowed = validate_file(path, "amps", Profile(), None, WHOLE, window=16 if len(text) < 4096 else 65536)
    assert findings(windowed[2]) == findings(whole[2])


def test_a_check_walking_withheld_records_errors_instead_of_passing() -> None:
    doc = WindowedDocument({"format": "x"}, {"atoms": 3}, {})
    assert isinstance(doc["atoms"], list) and isinstance(doc["atoms"], WithheldRecords)
    with pytest.raises(RuntimeError, match="read in windows"):
        list(doc["atoms"])
    with pytest.raises(RuntimeError):
        doc["atoms"][0]
    assert len(doc["atoms"]) == 3  # the count is known


def test_every_windowed_format_is_listed_here() -> None:
    """AMPS, MemoryAI and OMP by a window plan (validate reads the file); MemoRizz reads its own file, as
    the checks first ask for it (suites/memorizz/format/windows.py, tested below)."""
    assert sorted(s.name for s in all_suites() if plan_of(s) is not None) == sorted(WINDOWED_FORMATS)


def memoryai_bundle(count: int, seed: int, flaws: bool) -> dict[str, Any]:
    """A sealed MemoryAI bundle of `count` chunks (and edges, entities); with `flaws`, chunks breaking each
    record rule scattered across the windows, a credential in one chunk's metadata, NFC-sensitive text."""
    import unicodedata

    from memconform.suites.memoryai import format as mai

    rng = random.Random(seed)
    chunks = []
    for i in range(count):
        content = f"chunk {i} }},{{ \"]\" café ✓ 😀"
        chunk: dict[str, Any] = {
            "id": i + 1, "content": content, "content_hash": mai.content_hash(content), "memory_type": "fact",
            "embedding": mai.encode_embedding([rng.random() for _ in range(4)]), "tags": ["a"], "zone": "standard",
            "importance": 0.5, "is_pinned": False, "created_at": "2026-01-01T00:00:00Z", "metadata": {"i": i}}
        if flaws and rng.random() < 0.08:
            flaw = rng.randrange(9)
            if flaw == 0:
                chunk["content_hash"] = "0" * 64
            elif flaw == 1:
                chunk["embedding"] = "not base64!"
            elif flaw == 2:
                chunk["embedding"] = mai.encode_embedding([0.5] * 3)
            elif flaw == 3:
                chunk["zone"] = "attic"
            elif flaw == 4:
                chunk["importance"] = 1.5
            elif flaw == 5:
                chunk["memory_type"] = "gossip" if rng.random() < 0.5 else "x_vendor"
            elif flaw == 6:
                chunk["metadata"] = {"openai_api_key": "sk-" + "a" * 40}
            elif flaw == 7:
                decomposed = "cafe\u0301 chunk"
                chunk["content"], chunk["content_hash"] = decomposed, mai.content_hash(unicodedata.normalize("NFC", decomposed))
            else:
                del chunk["memory_type"]
        chunks.append(chunk)
    edges = [{"chunk_a": i + 1, "chunk_b": i + 2, "edge_type": "related", "weight": 0.5} for i in range(count // 4)]
    entities = [{"name": f"entity {i}", "frequency": i} for i in range(count // 8)]
    if flaws:
        edges[len(edges) // 2].pop("edge_type")
        entities[-1]["frequency"] = "often"
    doc = {"format": "memoryai-bundle", "version": 1, "generator": "test", "exported_at": "2026-01-03T00:00:00Z",
           "manifest": {"scope": "full", "embedding_model": "m", "embedding_dim": 4, "tenant_id": None},
           "chunks": chunks, "memory_edges": edges, "entities": entities, "l2_sessions": [], "mood_states": [], "agents": []}
    return mai.seal(doc)


@pytest.mark.parametrize("flaws", [False, True])
@pytest.mark.parametrize("indent", [None, 1])
def test_generated_memoryai_bundle_reads_the_same_across_windows(flaws: bool, indent: int | None, tmp_path: Path) -> None:
    doc = memoryai_bundle(400, seed=33, flaws=flaws)
    path = write(tmp_path, "bundle.json", doc, indent)
    assert path.stat().st_size > 50 * SMALL
    assert read_with_plan(path, path.stat().st_size, [get_suite("memoryai")], SMALL) is not None, \
        "the generated bundle was read whole: the windows were not exercised"
    for profile in (Profile(), Profile.named("strict"), Profile(options={"memoryai.content_hash": "unchecked"})):
        whole, windowed = both_ways(path, profile)
        assert windowed == whole
    if flaws:
        assert sum(r[1] == "failed" for r in whole) >= 5


def test_a_memoryai_bundle_read_whole_where_the_windows_cannot_say(tmp_path: Path) -> None:
    """A checksum that matches no literal reading, or the manifest after the chunks: the same findings, read whole."""
    doc = memoryai_bundle(200, seed=5, flaws=True)
    doc["manifest"]["checksum"] = "f" * 64
    path = write(tmp_path, "mismatch.json", doc, None)
    assert read_with_plan(path, path.stat().st_size, [get_suite("memoryai")], SMALL) is None
    whole, windowed = both_ways(path)
    assert windowed == whole
    late = memoryai_bundle(200, seed=5, flaws=True)
    late["manifest"] = late.pop("manifest")
    path = write(tmp_path, "late.json", late, None)
    assert read_with_plan(path, path.stat().st_size, [get_suite("memoryai")], SMALL) is None
    whole, windowed = both_ways(path)
    assert windowed == whole


@pytest.mark.parametrize("checksum", ["kept", "dropped"])
def test_a_memoryai_bundle_with_a_nan_record_reads_the_same_in_windows(checksum: str, tmp_path: Path) -> None:
    """The checksum's canonical text is taken a window at a time in finish (no text of every record held): a record
    it cannot write (NaN) sends the file whole as before, with or without a checksum to judge."""
    doc = memoryai_bundle(200, seed=6, flaws=False)
    if checksum == "dropped":
        del doc["manifest"]["checksum"]
    path = write(tmp_path, "nan.json", doc, None)
    text = path.read_bytes()
    assert b'"weight": 0.5' in text
    path.write_bytes(text.replace(b'"weight": 0.5', b'"weight": NaN', 1))
    whole, windowed = both_ways(path)
    assert windowed == whole


def test_a_memoryai_bundle_showing_a_checksum_reading_reads_the_same_in_windows(tmp_path: Path) -> None:
    """Non-ASCII text and floats in the records (what makes a bundle show its checksum reading, taken from the
    canonical text in pieces), sealed under the literal reading: the same findings and readings in windows."""
    from memconform.suites.memoryai import format as mai

    doc = memoryai_bundle(300, seed=7, flaws=False)
    doc["chunks"][150]["content"] = "caf\u00e9 \U0001F600 at 0.25"
    doc["chunks"][150]["content_hash"] = mai.content_hash(doc["chunks"][150]["content"])
    path = write(tmp_path, "shown.json", mai.seal(doc), None)
    assert read_with_plan(path, path.stat().st_size, [get_suite("memoryai")], SMALL) is not None
    whole, windowed = both_ways(path)
    assert windowed == whole


@pytest.mark.parametrize("spec", WINDOWED_FORMATS)
def test_a_check_the_plan_does_not_know_sends_the_file_to_the_whole_path(spec: str) -> None:
    """A check added to a suite later may walk the records: the plan refuses it, so the file is read whole."""
    import dataclasses

    from memconform.core.check_context import NoTarget
    from memconform.core.registry import REGISTRY
    from memconform.core.runner import Context
    from memconform.kit.windows import NotWindowable
    from memconform.kit.windows.plan import PlanContext

    suite = get_suite(spec)
    checks = [c for c in REGISTRY.for_suite(spec) if c.kind == "document"]
    plan_class = plan_of(suite)
    assert plan_class is not None
    ctx = Context(suite=suite, target=NoTarget(), profile=Profile())
    plan_class(PlanContext(ctx, checks))  # every registered document check is known
    newcomer = dataclasses.replace(checks[0], id=f"{spec}.walks_every_record")
    with pytest.raises(NotWindowable, match="does not know"):
        plan_class(PlanContext(ctx, [*checks, newcomer]))


# ---- MemoRizz: the archive reads its own file (a streamed document), its stores in windows -----------

def memorizz_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch, profile: Profile | None = None,
                       window: int = SMALL) -> tuple[list[Any], list[Any]]:
    from memconform.suites.memorizz.format import windows

    profile = profile or Profile()
    monkeypatch.setattr(windows, "WINDOW", WHOLE)
    whole = validate_file(path, None, profile, None, WHOLE)
    monkeypatch.setattr(windows, "WINDOW", window)
    windowed = validate_file(path, None, profile, None, WHOLE)
    assert whole[0].name == windowed[0].name == "memorizz"
    return findings(whole[2]), findings(windowed[2])


def read_as_memorizz_windows(path: Path, window: int = SMALL, key_order: str = "codepoint") -> bool:
    from memconform.suites.memorizz.format import windows

    return windows.read_in_windows(path, key_order, window) is not None


def test_every_memorizz_fixture_reads_the_same_in_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = fixture_documents("memorizz")
    assert cases
    read_in_windows = 0
    for name, doc in cases:
        for indent in (None, 2):
            path = write(tmp_path, f"{name.replace('/', '-')}-{indent}.json", doc, indent)
            read_in_windows += read_as_memorizz_windows(path, 64)
            whole, windowed = memorizz_both_ways(path, monkeypatch, window=64)
            assert windowed == whole, name
    assert read_in_windows >= len(cases)  # most are: those without records or a manifest first are read whole


def memorizz_archive(count: int, seed: int, flaws: bool) -> dict[str, Any]:
    """A sealed archive of `count` records over every store, in the stores' taxonomy order (not sorted),
    text holding `},{` and `]`, non-ASCII; with `flaws`, records breaking each record rule scattered
    across the windows, links that resolve in a later store and links that resolve nowhere, floats the
    spec writes otherwise (1.0, 1e-7), integers past 2**53, an embedding while includes says none."""
    from memconform.suites.memorizz import format as mz

    rng = random.Random(seed)
    archive = mz.empty_archive(created_at="2026-05-01T12:00:00+00:00", memorizz_version="0.17.16",
                               source_provider="FileSystemProvider")
    archive["manifest"]["includes"] = {"delegates": True, "history": True, "context": True, "embeddings": False}
    stores = list(mz.STORES)
    ids = [f"rec-{i:05d}-é" for i in range(count)]
    for i in range(count):
        store = stores[i % len(stores)]
        data: dict[str, Any] = {"id": ids[i], "content": f"note {i} }},{{ \"]\" ü 😀", "weight": 0.25}
        natural = mz.NATURAL_IDS_IMPLIED.get(store)
        if natural:
            data[natural] = ids[i]
        record: Any = {"id": ids[i], "data": data}
        if flaws and rng.random() < 0.08:
            flaw = rng.randrange(12)
            if flaw == 0:
                record["id"] = ids[i - 13 * 30] if i >= 13 * 30 else ids[i]  # the same store, windows back
            elif flaw == 1:
                data["_id"] = "someone-else"
            elif flaw == 2 and natural:
                data[natural] = "another"  # a named natural id, or one only reading M4:implied names
            elif flaw == 3:
                data["embedding"] = [0.1, 0.2]
            elif flaw == 4:
                data["vector"] = [0.5]  # an embedding only under M8:with-vector
            elif flaw == 5:
                data["source_ids"] = [ids[min(count - 1, i + 40)], f"gone-{i}"]  # one later, one nowhere
            elif flaw == 6:
                data["weight"] = 1.0 if rng.random() < 0.5 else 1e-7
            elif flaw == 7:
                data["big"] = 2**60 + i
            elif flaw == 8:
                record = {"id": ids[i], "data": data, "extra": True}
            elif flaw == 9:
                record["id"] = "x" * 513
            elif flaw == 10:
                record = ["not", "a", "record"]
            else:
                data["record_id"] = f"named-{i}"
                data["content"] = {"previous_event_id": f"named-{i - 1}"}
        archive["stores"][store].append(record)
    # a store's last record without its natural id, and a link into that store: it resolves
    last, linking = archive["stores"]["personas"][-1], archive["stores"]["summaries"][0]
    if isinstance(last, dict) and isinstance(linking, dict):
        last["data"].pop("persona_id", None)
        linking["data"]["source_ids"] = [archive["stores"]["personas"][0]["id"]]
    sealed = mz.seal(archive)
    if flaws:
        sealed["manifest"]["counts"]["toolbox"] += 1
        sealed["stores"]["vendor_store"] = []
        sealed["stores"]["agents"] = None
    return sealed


@pytest.mark.parametrize("flaws", [False, True])
@pytest.mark.parametrize("indent", [None, 1])
def test_generated_memorizz_archive_reads_the_same_across_windows(flaws: bool, indent: int | None, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    doc = memorizz_archive(700, seed=33, flaws=flaws)
    path = write(tmp_path, "archive.memorizz.json", doc, indent)
    assert path.stat().st_size > 50 * SMALL
    assert read_as_memorizz_windows(path), "the generated archive was read whole: the windows were not exercised"
    profiles = (Profile(), Profile.named("strict"),
                Profile(options={"memorizz.natural_ids": "implied", "memorizz.embedding_fields": "with-vector"}),
                Profile(options={"memorizz.key_order": "utf16"}))
    for profile in profiles:
        whole, windowed = memorizz_both_ways(path, monkeypatch, profile)
        assert windowed == whole
    if flaws:  # a negative control: the flaws are seen (by both)
        failed = {r[0] for r in whole if r[1] == "failed"}
        assert {"memorizz.record_id_unique", "memorizz.data_id_matches", "memorizz.record_shape",
                "memorizz.record_id_form", "memorizz.external_references_reported", "memorizz.integers_safe",
                "memorizz.embeddings_follow_includes", "memorizz.manifest_counts",
                "memorizz.stores_complete"} <= failed, failed
    else:  # and a positive one: a sealed archive passes whole and in windows alike
        assert all(r[1] in ("passed", "skipped") for r in whole), [r for r in whole if r[1] not in ("passed", "skipped")]


def test_a_memorizz_archive_read_whole_where_the_windows_cannot_say(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest after the stores, keys the two key orders sort differently, a NaN, a digest that
    does not match: read whole where the windows cannot say, and the same findings either way; an
    emoji alone (past U+FFFF, nothing from U+E000 to U+FFFF beside it) is one text in either order."""
    late = memorizz_archive(300, seed=5, flaws=True)
    late["manifest"] = late.pop("manifest")
    sensitive = memorizz_archive(300, seed=6, flaws=False)
    sensitive["stores"]["personas"][0]["data"].update({"\ue000": 1, "\U0001f600": 2})
    wrong = memorizz_archive(300, seed=7, flaws=False)
    wrong["integrity"]["digest"] = "0" * 64
    for name, doc, windowable in (("late", late, False), ("sensitive", sensitive, False), ("wrong", wrong, True)):
        path = write(tmp_path, f"{name}.memorizz.json", doc, None)
        assert read_as_memorizz_windows(path) is windowable, name
        for profile in (Profile(), Profile(options={"memorizz.key_order": "utf16"})):
            whole, windowed = memorizz_both_ways(path, monkeypatch, profile)
            assert windowed == whole, name
    text = write(tmp_path, "nan.memorizz.json", memorizz_archive(300, seed=8, flaws=False), None).read_bytes()
    nan = tmp_path / "nan.memorizz.json"
    nan.write_bytes(text.replace(b'"weight": 0.25', b'"weight": NaN', 1))
    assert not read_as_memorizz_windows(nan)
    whole, windowed = memorizz_both_ways(nan, monkeypatch)
    assert windowed == whole
    assert [r[:2] for r in whole] == [("memorizz.well_formed", "failed")]  # NaN is no JSON (RFC 8259)


def test_a_memorizz_archive_over_the_record_limit_is_refused_the_same_way(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "many.memorizz.json", memorizz_archive(400, seed=9, flaws=False), None)
    profile = Profile(options={"memorizz.max_records": "10"})
    whole, windowed = memorizz_both_ways(path, monkeypatch, profile)
    assert windowed == whole
    assert any(r[0] == "memorizz.within_limits" and r[1] == "failed" for r in whole)


# window texts over the reader's short-text bound (json_reader.MIN_CONTAINERS), so the strict reader counts
# them: ASCII, characters under and past U+FFFF, escaped quotes, marks inside strings, digits, nesting
COUNTED_TEXTS = {
    "ascii": {"a": "plain text, with [marks] {inside} \"quoted\"", "n": [1, 2.5, -3e7], "o": {"k": None}},
    "bmp": {"a": "caf\u00e9 \u2014 \u4e2d\u6587", "b": ["\u00fc", {"\u00e9": 1}]},
    "astral": {"a": "\U0001f600 and \U0001d11e", "b": ["\U00010348", "x"], "c": "\u00e9"},
}


@pytest.mark.parametrize("kind", sorted(COUNTED_TEXTS))
def test_a_window_the_strict_reader_counted_adds_what_a_scan_of_its_bytes_would(kind: str) -> None:
    """The reader adds up a window's counts from the strict reader's own pass (read_json_counting) instead of
    scanning its bytes again: the same sums as the scan, for every kind of text."""
    from memconform.core.json_reader import MIN_CONTAINERS, read_json_counting
    from memconform.kit.windows.reader import WINDOW_POLICY
    from memconform.kit.windows.totals import FileTotals

    element = json.dumps(COUNTED_TEXTS[kind], ensure_ascii=False).encode("utf-8")
    text = b",".join([element] * (MIN_CONTAINERS // len(element) + 2))
    scanned, counted = FileTotals(), FileTotals()
    scanned.add(b'{"head": 1}')
    counted.add(b'{"head": 1}')
    scanned.add(text)
    elements, _, counts = read_json_counting(b"[" + text + b"]", WINDOW_POLICY)
    assert counts is not None and len(elements) > 1  # a positive control: the counted path ran
    counted.add_counted(counts, 1)
    assert counted == scanned
    assert (counted.ascii, counted.wide > 0) == (kind == "ascii", kind == "astral")


def test_windows_the_strict_reader_counted_give_the_same_findings(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows past the short-text bound (counted by the strict reader, not scanned again) read as the
    whole file does."""
    from memconform.core.json_reader import MIN_CONTAINERS
    from memconform.kit.windows.totals import FileTotals

    doc = amps_export(3000, seed=34, flaws=True)
    path = write(tmp_path, "export.json", doc, None)
    assert path.stat().st_size > 6 * MIN_CONTAINERS  # several windows, each counted
    added = []
    counted = FileTotals.add_counted
    monkeypatch.setattr(FileTotals, "add_counted", lambda self, *a: (added.append(a), counted(self, *a))[1])
    whole, windowed = both_ways(path, window=2 * MIN_CONTAINERS)
    assert len(added) >= 3  # a positive control: the windows were counted by the strict reader
    assert windowed == whole and any(r[1] == "failed" for r in whole)


# ---- OMP: an export's memories in windows ---------------------------------------------------------

def omp_export(count: int, seed: int, flaws: bool) -> dict[str, Any]:
    """An OMP export of `count` memories; with `flaws`, a failure of every memory rule scattered across the
    windows (ids repeated far apart and within one window, a memory that is no object, embeddings holding a
    string or a bool), strings holding `},` and `]`, non-ASCII text, optional fields absent and null."""
    rng = random.Random(seed)
    memories: list[Any] = []
    for i in range(count):
        mem: dict[str, Any] = {
            "id": f"mem_{i:016d}", "content": f"note {i} }}, {{\"x\": [1]}} ] é → {rng.random()}",
            "type": rng.choice(["semantic", "episodic", "procedural"]),
            "source": {"tool": "test", "timestamp": "2026-01-02T03:04:05Z"},
            "tags": ["a", "b"] if i % 2 else [], "created_at": "2026-01-02T03:04:05Z",
            "updated_at": "2026-01-02T03:04:05Z", "expires_at": None if i % 3 else "2027-01-01T00:00:00Z",
            "metadata": {"n": i},
        }
        if i % 4 == 1:
            mem["embedding"] = [rng.uniform(-1, 1) for _ in range(3)]
        if i % 5 == 2:
            mem["namespace"] = "project:x"
        if flaws and rng.random() < 0.12:
            kind = rng.randrange(9)
            if kind == 0:
                mem["id"] = f"mem_{rng.randrange(max(i, 1)):016d}"  # a repeat of an earlier id
            elif kind == 1:
                mem["id"] = "not-an-id"
            elif kind == 2:
                mem["content"] = "x" * 10_001
            elif kind == 3:
                mem["tags"] = [f"t{k}" for k in range(21)]
            elif kind == 4:
                mem["created_at"] = "2026-01-02T03:04:05+02:00"
            elif kind == 5:
                mem["source"] = {"tool": 7}
            elif kind == 6:
                mem["embedding"] = [0.5, "0.5", True]
            elif kind == 7:
                mem = ["a memory", "that is no object"]  # type: ignore[assignment]
            else:
                mem["type"] = "dream"
        memories.append(mem)
    if flaws:
        memories.append(dict(memories[0]))  # the first id again, at the very end
    return {"omp_version": "0.1", "exported_at": "2026-01-03T00:00:00Z", "server": "test", "memories": memories}


@pytest.mark.parametrize("flaws", [False, True])
@pytest.mark.parametrize("indent", [None, 2])
def test_generated_omp_export_reads_the_same_across_windows(flaws: bool, indent: int | None, tmp_path: Path) -> None:
    doc = omp_export(400, seed=32, flaws=flaws)
    path = write(tmp_path, "export.json", doc, indent)
    assert read_with_plan(path, path.stat().st_size, [get_suite("omp")], SMALL) is not None, \
        "the export was not read in windows: the comparison would be the whole path against itself"
    for wanted in ("omp", None):
        whole, windowed = both_ways(path, wanted=wanted)
        assert windowed == whole
    failed = {check for check, outcome, *_ in whole if outcome == "failed"}
    if flaws:  # the data tells each memory rule's findings apart, the repeats of ids among them
        assert failed >= {f"omp.{name}" for name in ("export_document_memory_ids", "export_document_content_and_type",
                          "export_document_tags_namespace_metadata", "export_document_timestamps_utc",
                          "export_document_source_object", "export_document_embedding")}
        repeats = [f for r in whole for f in r[5] if f[0] == "two memories of the export have one id"]
        assert len(repeats) >= 2 and any("first at $.memories[0]" in f[2] for f in repeats)
    else:
        assert not failed


def test_an_omp_export_with_a_broken_envelope_reads_the_same_in_windows(tmp_path: Path) -> None:
    """The envelope check runs on what is left: its findings, and the memory rules', as the whole path's."""
    doc = omp_export(200, seed=3, flaws=True)
    doc.pop("omp_version")
    doc["exported_at"] = "yesterday"
    doc["server"] = 1
    late = {"memories": doc.pop("memories"), "omp_version": "0.2"}  # a member after the memories
    path = write(tmp_path, "export.json", {**doc, **late}, None)
    assert read_with_plan(path, path.stat().st_size, [get_suite("omp")], SMALL) is not None
    whole, windowed = both_ways(path, wanted="omp")
    assert windowed == whole
    assert any(check == "omp.export_document_envelope" and outcome == "failed" for check, outcome, *_ in whole)
