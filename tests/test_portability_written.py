"""`translate` through the CLI writes its output to a temporary file beside the destination and judges that file
as `memconform validate` does (portability/written.py: in windows for AMPS, MemoryAI and MemoRizz, by lines for
EMP), never the whole output in memory. Its bytes, ledger, findings and refusals are those of the whole-memory
path (translate.translate) on every fixture of every format into every other, on generated documents read in
many windows, and on outputs planted with faults; a refused or failed output leaves nothing behind."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main
from memconform.kit.windows import plan as window_plan
from memconform.portability.formats import formats, portable
from memconform.portability.matrix import sample_files
from memconform.portability.streamed import whole
from memconform.portability.translate import load, read_checked, translate
from memconform.portability.written import write_judged

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_translate import generate  # noqa: E402
from portability_kit import assert_same, fix_the_clock, judged_text  # noqa: E402

FORMATS = formats()
FIXTURES = [(fmt, path) for fmt in FORMATS for path in sample_files(fmt)]
SMALL = 512  # bytes per window of the output's judgement: every output here is read in several windows
RECORDS = 600  # a generated document: hundreds of windows at SMALL


@pytest.fixture(autouse=True)
def fixed_now(monkeypatch):
    fix_the_clock(monkeypatch)


@pytest.fixture
def windows_seen(monkeypatch):
    """The suites whose window plan read an output (a test that meant windows and got the whole file says so),
    with MemoRizz's own archive window shrunk as the others are by `window`."""
    from memconform.suites.memorizz.format import windows as memorizz_windows

    seen: list[str] = []
    real_plan, real_archive = window_plan.read_with_plan, memorizz_windows.read_in_windows

    def spying_plan(*args: Any, **kwargs: Any) -> Any:
        read = real_plan(*args, **kwargs)
        if read is not None:
            seen.append(read[0].name)
        return read

    def spying_archive(*args: Any, **kwargs: Any) -> Any:
        read = real_archive(*args, **kwargs)
        if read is not None:
            seen.append("memorizz")
        return read

    monkeypatch.setattr(window_plan, "read_with_plan", spying_plan)
    monkeypatch.setattr(memorizz_windows, "read_in_windows", spying_archive)
    monkeypatch.setattr(memorizz_windows, "WINDOW", SMALL)
    return seen


def _plan_module_reads_spied() -> None:
    # validate_windowed calls read_with_plan through the module, so the spy sees every windowed reading
    assert "read_with_plan(path" in Path(window_plan.__file__).read_text(encoding="utf-8")


def both_paths(doc: Any, source: str, target: str, folder: Path, writers: Any = None) -> tuple[Any, Any, str | None]:
    """(the whole-memory translation, the written one, the written file's text or None)."""
    whole = translate(copy.deepcopy(doc), source, target, writers=writers)
    first = read_checked(doc, source, target, consume=True)
    written, text = judged_text(first, folder, writers, window=SMALL)
    return whole, written, text


@pytest.mark.parametrize(("fmt", "path"), FIXTURES, ids=[f"{f}/{p.name}" for f, p in FIXTURES])
def test_every_fixture_written_and_judged_from_the_file_equals_the_whole_memory_path(fmt, path, tmp_path, windows_seen):
    source, doc = load(path)
    for target in FORMATS:
        if target != fmt:
            whole, written, text = both_paths(copy.deepcopy(doc), source, target, tmp_path)
            assert_same(whole, written, text, f"{fmt} -> {target}")
    assert list(tmp_path.iterdir()) == [], "a temporary file was left behind"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_generated_document_read_in_many_windows_equals_the_whole_memory_path(fmt, tmp_path, windows_seen):
    _plan_module_reads_spied()
    doc = _parsed(fmt, generate(fmt, RECORDS))
    for target in FORMATS:
        if target == fmt:
            continue
        whole, written, text = both_paths(copy.deepcopy(doc), fmt, target, tmp_path)
        assert whole.refused is None, whole.refused
        assert_same(whole, written, text, f"{fmt} -> {target}")
    # every output format with a window plan was judged in windows, not whole (EMP: by lines)
    assert set(windows_seen) == {"amps", "memoryai", "memorizz", "omp"} - {fmt}, windows_seen


def _parsed(fmt: str, text: str) -> Any:
    return text if portable(fmt).text else json.loads(text)


def _planted(target: str, fault: str):
    """The target's own writer with one fault put in its output: the first record of the biggest record list
    repeated (ids no longer unique), or its first member removed, or a record in the middle that is a string;
    EMP's lines the same way."""
    real = portable(target).write

    def write(doc, ledger):
        out = whole(real(doc, ledger))
        if isinstance(out, str):
            lines = out.splitlines(keepends=True)
            if fault == "repeated":
                return lines[0] + out
            if fault == "not_a_record":
                return '"not a record"\n' + "".join(lines[1:])
            first = json.loads(lines[0])
            first.pop(next(iter(first)))
            return json.dumps(first) + "\n" + "".join(lines[1:])
        records = max(_lists(out), key=len)
        if fault == "repeated":
            records.append(copy.deepcopy(records[0]))
        elif fault == "not_a_record":
            records[len(records) // 2] = "not a record"
        else:
            records[0].pop(next(iter(records[0])))
        if target == "memoryai":  # sealed again, so the record rule is what refuses it, not the checksum
            from memconform.suites.memoryai import format as mai

            out = mai.seal(out)
        return out

    return write


def _lists(value: Any, depth: int = 0) -> list[list[Any]]:
    found = []
    if isinstance(value, dict) and depth < 3:
        for member in value.values():
            found += _lists(member, depth + 1)
    elif isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        found.append(value)
    return found


@pytest.mark.parametrize("fault", ["repeated", "member_removed", "not_a_record"])
@pytest.mark.parametrize("target", FORMATS)
def test_an_output_planted_with_a_fault_is_refused_alike_and_leaves_nothing(target, fault, tmp_path, windows_seen):
    source = "amps" if target != "amps" else "omp"
    doc = _parsed(source, generate(source, 120))
    whole, written, text = both_paths(doc, source, target, tmp_path, writers={target: _planted(target, fault)})
    assert_same(whole, written, text, f"{source} -> {target} ({fault})")
    if fault == "not_a_record":  # the control that the comparison is not of two empty verdicts: the fault is caught
        assert whole.refused and "does not pass memconform's checks" in whole.refused, whole.refused
        assert "checksum" not in whole.refused.split(" | ")[0], whole.refused
    assert list(tmp_path.iterdir()) == []


def _dangling_citation(doc, ledger):
    out = whole(portable("amps").write(doc, ledger))
    out["atoms"][3].setdefault("provenance", {})["artifact_ids"] = ["artifact-nowhere"]
    return out


def _wrong_content_hash(doc, ledger):
    from memconform.suites.memoryai import format as mai

    out = whole(portable("memoryai").write(doc, ledger))
    out["chunks"][3]["content_hash"] = "0" * 64
    return mai.seal(out)


@pytest.mark.parametrize(("target", "writer", "check"), [("amps", _dangling_citation, "amps.references_resolve"),
                                                          ("memoryai", _wrong_content_hash, "memoryai.content_hash_matches")])
def test_a_failed_should_check_is_the_same_warning_from_the_file(target, writer, check, tmp_path, windows_seen):
    """A failed SHOULD check is a warning in the ledger, not a refusal, on both paths (no fixture translation gives
    one, so this is what shows the file's judgement passes warnings on)."""
    doc = json.loads(generate("omp", 120))
    whole, written, text = both_paths(doc, "omp", target, tmp_path, writers={target: writer})
    assert_same(whole, written, text, f"omp -> {target}")
    assert whole.refused is None and any(w.startswith(f"{check} failed") for w in whole.ledger.warnings)
    assert windows_seen == [target], "judged in windows"


def test_an_output_over_the_size_limit_is_refused_with_the_limit_named_and_not_left(monkeypatch, tmp_path, capsys):
    import dataclasses

    from memconform.core.options import Options
    from memconform.suites.memorizz import options

    smaller = [dataclasses.replace(o, default="256KiB") if o.name == "max_bytes" else o for o in options.OPTIONS]
    monkeypatch.setattr(options, "OPTIONS", Options(*smaller))
    src = tmp_path / "in.json"
    src.write_text(generate("amps", 1500), encoding="utf-8")
    out = tmp_path / "out.json"
    doc = json.loads(src.read_text(encoding="utf-8"))
    whole, written, text = both_paths(doc, "amps", "memorizz", tmp_path)
    assert_same(whole, written, text, "amps -> memorizz over the limit")
    assert "256KiB" in (written.refused or "") and "bytes" in written.refused
    assert main(["translate", str(src), "--to", "memorizz", "--out", str(out)]) == 1
    assert "256KiB" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.json"], "nothing written, nothing left"
    # the control: under the limit it is written
    src.write_text(generate("amps", 50), encoding="utf-8")
    assert main(["translate", str(src), "--to", "memorizz", "--out", str(out)]) == 0
    assert out.exists()


def test_the_cli_replaces_the_destination_only_once_judged(tmp_path, capsys):
    src = tmp_path / "in.json"
    src.write_text(generate("omp", 30), encoding="utf-8")
    out = tmp_path / "out.json"
    out.write_text("the file before", encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"memories": "not a list"}), encoding="utf-8")
    assert main(["translate", str(bad), "--from", "omp", "--to", "amps", "--out", str(out)]) == 1
    assert out.read_text(encoding="utf-8") == "the file before", "a refused translation touched the destination"
    assert main(["translate", str(src), "--to", "amps", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["atoms"]
    plain = tmp_path / "plain"
    plain.write_text("", encoding="utf-8")  # the mode a plainly written file gets here, not a temporary file's 0600
    assert out.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
    plain.unlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "in.json", "out.json"]
    capsys.readouterr()
    assert main(["translate", str(src), "--to", "emp"]) == 0  # stdout: judged in a scratch folder, then copied
    printed = capsys.readouterr()
    whole = translate(json.loads(src.read_text(encoding="utf-8")), "omp", "emp")
    assert printed.out == whole.output and printed.err.strip() == whole.ledger.summary()


def test_a_writer_that_fails_midway_leaves_no_temporary_file(tmp_path):
    real = portable("amps").write

    def unwritable(doc, ledger):
        out = whole(real(doc, ledger))
        out["atoms"][-1]["confidence"] = float("nan")  # no JSON text holds it: the text writer raises midway
        return out

    first = read_checked(json.loads(generate("omp", 200)), "omp", "amps", consume=True)
    with pytest.raises(ValueError):
        write_judged(first, tmp_path, writers={"amps": unwritable})
    assert list(tmp_path.iterdir()) == []


def test_a_destination_folder_that_cannot_take_the_file_is_one_error_line(tmp_path, capsys):
    src = tmp_path / "in.json"
    src.write_text(generate("omp", 5), encoding="utf-8")
    for out in (tmp_path, tmp_path / "missing" / "out.json"):
        assert main(["translate", str(src), "--to", "amps", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("memconform: error: cannot write") and err.count("\n") == 1, err


# the writers that make their records as the text is written, or (MemoryAI) spill them to a temporary file as
# they are made and read them back as it is written (streamed.py)
STREAMING = ["omp", "amps", "emp", "memoryai", "memorizz"]


@pytest.mark.parametrize("target", STREAMING)
def test_a_streaming_writer_never_holds_every_native_record(target, tmp_path):
    """The streamed path's peak allocation while writing is a fraction of the same writer's made whole
    (tracemalloc counts allocations, not the machine's load); the canonical records are read before."""
    import tracemalloc

    from memconform.portability.streamed import Streamed, streaming

    source = "amps" if target != "amps" else "omp"
    with streaming():
        made = portable(target).write(read_checked(json.loads(generate(source, 5)), source, target).canonical,
                                      read_checked(json.loads(generate(source, 5)), source, target).ledger)
    section = {"omp": lambda: made["memories"], "amps": lambda: made["atoms"], "memoryai": lambda: made["chunks"],
               "memorizz": lambda: made["stores"]["personas"], "emp": lambda: made}[target]()
    assert isinstance(section, Streamed)
    peaks = []
    for writers in (None, {target: lambda d, ledger: whole(portable(target).write(d, ledger))}):
        first = read_checked(json.loads(generate(source, 3000)), source, target, consume=True)
        tracemalloc.start()
        try:
            _, part = write_judged(first, tmp_path, validate=False, writers=writers)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        part.unlink()
    streamed, made_whole = peaks
    assert streamed < made_whole / 2, f"{target}: {streamed} bytes at the peak streamed, {made_whole} made whole"
    # the judged path streams where the output is judged from its file in parts (windows, lines): every target's
    from memconform.portability.written import judged_in_parts

    assert judged_in_parts(target)


def test_the_text_of_a_streamed_list_is_written_one_record_at_a_time():
    """jsontext never reads ahead of the piece it writes: when record k's text is handed out, k + 1 were made."""
    from memconform.portability.jsontext import pieces
    from memconform.portability.streamed import Streamed

    made = []

    def records():
        for i in range(STREAM_COUNT):
            made.append(i)
            yield {"id": f"r{i}", "n": [i, i / 7]}

    doc = {"v": 1, "records": Streamed("records", records()), "after": [1]}
    text = ""
    for piece in pieces(doc):
        for i in range(STREAM_COUNT):
            if f'"r{i}"' in piece:
                assert len(made) == i + 1, f"record {i} written when {len(made)} were made"
        text += piece
    expected = {"v": 1, "records": [{"id": f"r{i}", "n": [i, i / 7]} for i in range(STREAM_COUNT)], "after": [1]}
    assert text == json.dumps(expected, ensure_ascii=False, indent=2)
    with pytest.raises(RuntimeError, match="already written"):
        list(doc["records"])
    assert "".join(pieces({"empty": Streamed("empty", iter(()))})) == json.dumps({"empty": []}, indent=2)


STREAM_COUNT = 70  # past jsontext.STREAM_ABOVE, so a list would be written member by member too


def _string_embedding(doc, ledger):
    """OMP's writer with one memory's embedding made a string list (judged from its file, in windows)."""
    out = whole(portable("omp").write(doc, ledger))
    out["memories"][3]["embedding"] = ["not a number"]
    return out


def test_an_embedding_that_is_no_number_list_is_refused_alike(tmp_path):
    """The check export_document_embedding refuses it from the file as judge() does in memory (it replaced OMP's
    output_problems, which needed the records in memory)."""
    doc = json.loads(generate("amps", 40))
    whole_tr, written, text = both_paths(doc, "amps", "omp", tmp_path, writers={"omp": _string_embedding})
    assert_same(whole_tr, written, text, "amps -> omp, a string embedding")
    assert "omp.export_document_embedding failed" in (written.refused or ""), written.refused
    assert "$.memories[3].embedding[0]" in (written.refused or ""), written.refused
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("target", STREAMING)
def test_a_streamed_output_without_judgement_is_the_whole_memory_text(target, tmp_path):
    """validate=False streams every streaming writer, as the judged path does: the same
    bytes and ledger as the whole-memory path, on every fixture and a generated document."""
    cases = [(fmt, load(path)[1]) for fmt, path in FIXTURES if fmt != target]
    cases += [(fmt, _parsed(fmt, generate(fmt, RECORDS))) for fmt in FORMATS if fmt != target]
    for fmt, doc in cases:
        whole_tr = translate(copy.deepcopy(doc), fmt, target, validate=False)
        first = read_checked(copy.deepcopy(doc), fmt, target, validate=False, consume=True)
        written, part = write_judged(first, tmp_path, validate=False)
        text = part.read_text(encoding="utf-8") if part is not None else None
        if part is not None:
            part.unlink()
        assert_same(whole_tr, written, text, f"{fmt} -> {target} (not judged)")


def _edge_bundle(with_agents: bool) -> dict[str, Any]:
    """A bundle whose chunks hold what orjson and json write apart or refuse (floats below 1e-4, an integer past
    64 bits, negative zero), non-ASCII and astral text and keys, with or without `agents` (the one member that
    sorts before `chunks`)."""
    chunks = [{"id": 1, "content": "plain", "metadata": {"small": 1e-07, "tiny": 5e-05, "zero": -0.0}},
              {"id": 2, "content": "e\u0301 \U0001d518 \u4e2d", "metadata": {"\u00e9t\u00e9": 2**70, "\U0001f600": [0.1, 1e21]}},
              {"id": 3, "content": "", "tags": ["\u2063", "z"], "importance": 0.5}]
    bundle: dict[str, Any] = {"format": "memoryai-bundle", "version": 1, "generator": "g\u00e9n", "exported_at": "2026-01-02T03:04:05Z",
                              "manifest": {"scope": "full", "embedding_model": "none", "embedding_dim": 0}, "chunks": chunks,
                              "memory_edges": [], "entities": [{"name": "\u00c5"}]}
    if with_agents:
        bundle["agents"] = [{"id": "a", "weight": 1e-06}]
    return bundle


def _memoryai_bundles() -> list[tuple[str, dict[str, Any]]]:
    found = [(path.name, json.loads(path.read_text(encoding="utf-8"))) for path in sample_files("memoryai")]
    # the writer always writes `chunks`: a fixture without them (a minimal envelope) is not one it makes
    found = [(name, doc.get("document", doc)) for name, doc in found]
    found = [(name, doc) for name, doc in found if isinstance(doc.get("chunks"), list)]
    return found + [("edges with agents", _edge_bundle(True)), ("edges without agents", _edge_bundle(False)),
                    ("no chunks", dict(_edge_bundle(True), chunks=[]))]


@pytest.mark.parametrize(("name", "bundle"), _memoryai_bundles(), ids=[name for name, _ in _memoryai_bundles()])
def test_the_checksum_summed_chunk_by_chunk_is_the_whole_bundles(name, bundle):
    """The streamed MemoryAI writer's checksum (translator.Checksum) equals memoryai.seal's on every fixture bundle
    and on edges of the canonical form; the chunks summed in another order give another digest (the comparison is
    of digests that depend on the chunks, not of two constants)."""
    from memconform.suites.memoryai import format as mai
    from memconform.suites.memoryai.portability.translator import Checksum

    def summed(chunks: list[Any]) -> dict[str, Any]:
        doc = copy.deepcopy(bundle)
        doc["manifest"].pop("checksum", None)
        doc["manifest"].pop("counts", None)
        checksum = Checksum({k: v for k, v in doc.items() if k < "chunks"})
        for chunk in chunks:
            checksum.add(chunk)
        return checksum.seal(doc, len(chunks))["manifest"]

    expected = copy.deepcopy(bundle)
    expected["manifest"].pop("checksum", None)
    expected["manifest"].pop("counts", None)
    sealed = mai.seal(expected)["manifest"]
    got = summed(copy.deepcopy(bundle["chunks"]))
    assert list(got.items()) == list(sealed.items()), name  # counts, checksum and the manifest's member order
    assert mai.checksum_matches(dict(bundle, manifest=got), "literal"), name
    if len({json.dumps(c, sort_keys=True) for c in bundle["chunks"]}) > 1:
        assert summed(copy.deepcopy(bundle["chunks"][::-1]))["checksum"] != sealed["checksum"], name


def test_a_member_before_the_chunks_not_summed_first_is_a_harness_error():
    from memconform.suites.memoryai.portability.translator import Checksum

    bundle = _edge_bundle(True)
    with pytest.raises(RuntimeError, match="before 'chunks'"):
        Checksum({}).seal(bundle, len(bundle["chunks"]))


def test_a_spilled_list_is_read_back_once_as_the_very_values():
    """streamed.Spill: the items as they were (an integer past 64 bits, a tuple, -0.0, a lone surrogate), in order,
    once; outside streaming() `spill` is a plain list."""
    from memconform.portability.streamed import Spill, spill, streaming, written

    items = [{"n": 2**70, "t": (1, 2), "z": -0.0, "s": "\ud800"}, [1e-07], "x"]
    assert spill("chunks") == [] and type(spill("chunks")) is list
    with streaming():
        held = spill("chunks")
    assert isinstance(held, Spill)
    for item in items:
        held.append(item)
    assert len(held) == 3
    back = list(written(held))
    assert back == items and type(back[0]["t"]) is tuple and str(back[0]["z"]) == "-0.0"
    with pytest.raises(RuntimeError, match="already read back"):
        list(held.streamed())


def _edge_archive() -> dict[str, Any]:
    """An archive whose records hold what the MemoRizz number rules write apart (-0.0 as 0, 1e-07, 1e21 as 1e+21,
    an integer past 64 bits), astral and non-ASCII text and keys, links inside and outside the archive, and
    empty stores beside full ones."""
    from memconform.suites.memorizz import format as mrz

    archive = mrz.empty_archive(created_at="2026-01-02T03:04:05Z")
    archive["stores"]["personas"] = [{"id": "p1", "data": {"content": "e\u0301 \U0001d518", "w": -0.0, "x": 1e-07}},
                                     {"id": "p2", "data": {"\u00e9": 2**70, "\U0001f600": [1e21, 0.5], "record_id": "r9"}}]
    archive["stores"]["toolbox"] = [{"id": "t1", "data": {"content": "z", "source_record_ids": ["p1", "elsewhere"], "delegates": "r9"}}]
    return archive


def _memorizz_archives() -> list[tuple[str, dict[str, Any]]]:
    found = [(path.name, json.loads(path.read_text(encoding="utf-8"))) for path in sample_files("memorizz")]
    found = [(name, doc.get("document", doc)) for name, doc in found]
    found = [(name, doc) for name, doc in found if isinstance(doc.get("stores"), dict)]
    return found + [("edges", _edge_archive())]


@pytest.mark.parametrize(("name", "archive"), _memorizz_archives(), ids=[name for name, _ in _memorizz_archives()])
def test_the_integrity_summed_record_by_record_is_the_whole_archives(name, archive):
    """The streamed MemoRizz writer's manifest and digest (translator.Integrity) equal memorizz.seal's and
    memorizz.external_references' on every fixture archive and on edges of the canonical form; the records of a
    store summed in another order give another digest (the comparison is of digests that depend on the records)."""
    from memconform.suites.memorizz import format as mrz
    from memconform.suites.memorizz.portability.translator import Integrity

    def summed(reverse: bool) -> dict[str, Any]:
        doc = copy.deepcopy(archive)
        integrity = Integrity(doc["stores"])
        for store, records in doc["stores"].items():
            for rec in records[::-1] if reverse else records:
                integrity.add(store, rec)
        assert integrity.external() == sorted(mrz.external_references(archive)), name
        return integrity.seal(doc)

    expected = mrz.seal(copy.deepcopy(archive))
    got = summed(False)
    assert list(got["manifest"].items()) == list(expected["manifest"].items()), name
    assert got["integrity"] == expected["integrity"], name
    if any(len({json.dumps(r, sort_keys=True) for r in records}) > 1 for records in archive["stores"].values()):
        assert summed(True)["integrity"] != expected["integrity"], name


def test_a_store_written_that_was_not_summed_is_a_harness_error():
    from memconform.suites.memorizz.portability.translator import Integrity

    archive = _edge_archive()
    with pytest.raises(RuntimeError, match="not the"):
        Integrity(["personas"]).seal(archive)


@pytest.mark.parametrize(("limit", "refused"), [(7, True), (8, False)])
def test_a_memorizz_archive_over_its_record_limit_is_refused_alike_when_spilled(monkeypatch, tmp_path, limit, refused):
    """The MemoRizz writer refuses an archive over its record limit after its records were spilled (streamed path)
    as it does with them in memory: the same refusal and ledger, nothing left; one record under, it is written."""
    from memconform.portability.tables import Table

    original = Table.limit
    monkeypatch.setattr(Table, "limit", lambda self, name, key: limit if (self.format, name, key) == ("memorizz", "id", "max_items")
                        else original(self, name, key))
    doc = json.loads(generate("amps", 8))
    whole_tr, written_tr, text = both_paths(doc, "amps", "memorizz", tmp_path)
    assert_same(whole_tr, written_tr, text, f"amps -> memorizz, limit {limit}")
    assert (f"8 records: over the archive limit of {limit}" in (written_tr.refused or "")) is refused, written_tr.refused
    assert (text is None) is refused
    assert list(tmp_path.iterdir()) == []


def test_a_spill_is_made_in_the_folder_streaming_names_and_leaves_nothing(tmp_path):
    """The CLI's spills go to the output's own folder (written.py), unlinked at once: nothing is seen there while
    or after they are used; a folder that is not there is an OSError (the control that the folder is the one used)."""
    import os

    from memconform.portability.streamed import spill, spill_file, streaming, written

    with streaming(spill_folder=tmp_path):
        held = spill("chunks")
        with spill_file() as raw:
            assert os.fstat(raw.fileno()).st_nlink == 0 and os.fstat(raw.fileno()).st_dev == tmp_path.stat().st_dev
    held.append({"a": 1})
    assert list(tmp_path.iterdir()) == []
    assert list(written(held)) == [{"a": 1}]
    with streaming(spill_folder=tmp_path / "missing"), pytest.raises(OSError):
        spill("chunks")
