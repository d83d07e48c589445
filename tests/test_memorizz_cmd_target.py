"""scripts/memorizz_cmd_target.py, memconform's own adapter of the memorizz CLI, meets every input of the
hostile-JSON battery (harness/kit/hostile.py) and never crashes where the product refuses (issue 35 item 6).

memorizz need not be installed: a stand-in CLI plays the product's part. It reads the archive file with a
strict stdlib parser and refuses (exit 2, as memorizz does) whatever that parser refuses, so the test
asks only what the adapter does with the bytes: hands them to the product as they were sent, answers a
refusal as exit 3 with a JSON report, and never raises."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from memconform.kit.hostile import battery

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "memorizz_cmd_target.py"
ENVELOPE = b'{"mode": "restore", "conflict": "error", "archive": '  # as suites/memorizz/checks/hostile_input.py sends it

FAKE_CLI = '''#!{python}
"""memorizz stand-in: `memory import FILE ...` refuses (exit 2) what a strict parser refuses; `memory export OUT`."""
import json, shutil, sys
args = sys.argv[1:]
if args[:2] == ["memory", "export"]:
    open(args[2], "w").write('{{"format": "memorizz-archive"}}')
    sys.exit(0)
if args[:2] != ["memory", "import"]:
    sys.exit(64)
shutil.copyfile(args[2], {seen!r})
def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)
def no_constant(name):
    raise ValueError(name)
try:
    raw = open(args[2], "rb").read()
    if raw.startswith(b"\\xef\\xbb\\xbf"):
        raise ValueError("BOM")
    text = raw.decode("utf-8")
    text.encode("utf-8")  # a lone surrogate escape decodes, but cannot be stored
    value = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    if not isinstance(value, dict):
        raise ValueError("not an archive")
except (ValueError, RecursionError) as exc:
    print(f"Error: invalid archive: {{exc}}", file=sys.stderr)
    sys.exit(2)
print(json.dumps({{"ok": True, "imported": 0}}))
'''


def load_adapter() -> Any:
    spec = importlib.util.spec_from_file_location("memorizz_cmd_target", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def adapter() -> Any:
    return load_adapter()


@pytest.fixture
def fake_cli(tmp_path: Path) -> tuple[Path, Path]:
    seen = tmp_path / "seen-by-memorizz.json"
    cli = tmp_path / "memorizz"
    cli.write_text(FAKE_CLI.format(python=sys.executable, seen=str(seen)), "utf-8")
    cli.chmod(0o755)
    return cli, seen


def run(adapter: Any, cli: Path, tmp_path: Path, op: str, request: bytes) -> tuple[int, Any]:
    given, output = tmp_path / "input.json", tmp_path / "output.json"
    given.write_bytes(request)
    output.unlink(missing_ok=True)
    code = adapter.main(["--root", str(tmp_path / "root"), "--memorizz", str(cli), op, str(given), str(output)])
    reply = json.loads(output.read_text("utf-8")) if output.exists() else None
    return code, reply


def archive(marker: str) -> dict[str, Any]:
    from memconform.suites.memorizz import format as mz

    archive = mz.empty_archive(source_provider="memconform-probe")
    archive["stores"]["knowledge_base"].append({"id": "kb-1", "data": {"id": "kb-1", "memory_id": "ns", "content": f"{marker} prose"}})
    return dict(mz.seal(archive))


BATTERY = battery(archive, "adapter")


def test_the_battery_is_the_whole_one() -> None:
    assert len(BATTERY) >= 150
    assert len({item.category for item in BATTERY}) >= 5


def test_every_hostile_archive_reaches_memorizz_as_sent_and_a_refusal_is_exit_3(adapter: Any, fake_cli: tuple[Path, Path],
                                                                                 tmp_path: Path) -> None:
    cli, seen = fake_cli
    outcomes: dict[int, int] = {}
    for item in BATTERY:
        seen.unlink(missing_ok=True)
        code, reply = run(adapter, cli, tmp_path, "import_archive", ENVELOPE + item.data + b"}")
        outcomes[code] = outcomes.get(code, 0) + 1
        assert code in (0, 3), item.name
        assert isinstance(reply, dict), item.name  # a report on exit 3 too
        if seen.exists():  # split: memorizz met the battery's bytes themselves, not a re-serialisation
            assert seen.read_bytes() == item.data, item.name
        else:  # the request itself could not be split into fields: refused by the adapter, saying why
            assert code == 3 and "the request cannot be read" in reply["errors"][0], item.name
        if code == 0:
            assert reply.get("ok") is True, item.name
    assert outcomes.get(3, 0) >= len(BATTERY) // 2, outcomes  # the stand-in refuses most of the battery


@pytest.mark.parametrize("request_bytes", [
    b"", b"\xff\xfe", b"[]", b'"text"', b"null", b"{", b'{"mode": "restore"', b'{"mode": "restore",}',
    b'{"mode": "clone", "conflict": "--apply", "archive": {}}', b'{"mode": ["x"], "archive": {}}',
    b'{"mode": "restore", "archive": {}} trailing', b'{"\xff": 1}', b"{" * 100_000 + b"}" * 100_000,
    b'{"archive": "' + b"\\" * 7 + b'"}',
])
def test_a_request_that_is_no_object_of_fields_is_refused_never_a_crash(adapter: Any, fake_cli: tuple[Path, Path], tmp_path: Path,
                                                                         request_bytes: bytes) -> None:
    cli, _ = fake_cli
    for op in ("import_archive", "export"):
        code, reply = run(adapter, cli, tmp_path, op, request_bytes)
        assert code in (0, 3), (op, request_bytes[:40])
        assert isinstance(reply, dict)


def test_the_battery_as_a_whole_request_never_crashes_the_export(adapter: Any, fake_cli: tuple[Path, Path], tmp_path: Path) -> None:
    cli, _ = fake_cli
    for item in BATTERY:
        code, reply = run(adapter, cli, tmp_path, "export", item.data)
        assert code in (0, 3), item.name
        assert isinstance(reply, dict), item.name


def test_a_clean_restore_and_export_go_through(adapter: Any, fake_cli: tuple[Path, Path], tmp_path: Path) -> None:
    cli, seen = fake_cli
    sent = json.dumps(archive("clean")).encode()
    code, reply = run(adapter, cli, tmp_path, "import_archive", ENVELOPE + sent + b"}")
    assert (code, reply) == (0, {"ok": True, "imported": 0})
    assert seen.read_bytes() == sent
    code, reply = run(adapter, cli, tmp_path, "export", b'{"memory_id": "ns", "types": ["knowledge_base"]}')
    assert (code, reply) == (0, {"format": "memorizz-archive"})
    assert run(adapter, cli, tmp_path, "export", b'{"types": [1]}')[0] == 3


def test_memorizz_missing_is_the_target_erroring_not_a_refusal(adapter: Any, tmp_path: Path) -> None:
    code, _ = run(adapter, tmp_path / "no-such-memorizz", tmp_path, "import_archive", ENVELOPE + b"{}}")
    assert code == adapter.EXIT_ERROR


# What memorizz prints is hostile too: a stand-in whose stdout and stderr carry what a product may send back.
HOSTILE_CLI = '''#!{python}
import sys
out, err, code = {answer!r}
sys.stdout.buffer.write(out)
sys.stderr.buffer.write(err)
sys.exit(code)
'''

HOSTILE_ANSWERS = {
    "a report holding a lone surrogate escape": (b'{"ok": false, "errors": ["id \\ud800 refused"]}', b"", 1),
    "a report of invalid UTF-8": (b'{"ok": false, "errors": ["\xff\xfe"]}', b"\xc3\x28", 1),
    "a report nested past any parser": (b"[" * 200_000, b"", 0),
    "no report, stderr of invalid UTF-8": (b"", b"Error: \xff\xfe\xfd", 2),
    "a report that is not an object": (b"[1, 2]", b"", 1),
    "nothing at all": (b"", b"", 0),
}


@pytest.mark.parametrize("answer", HOSTILE_ANSWERS, ids=list(HOSTILE_ANSWERS))
@pytest.mark.parametrize("op", ["import_archive", "export"])
def test_what_memorizz_prints_never_crashes_the_adapter(adapter: Any, tmp_path: Path, answer: str, op: str) -> None:
    """Exit 0 or 3 with a JSON reply, or 5 (the target erring: an export said done and wrote nothing); never a
    traceback, whatever bytes memorizz's answer holds."""
    cli = tmp_path / "memorizz"
    cli.write_text(HOSTILE_CLI.format(python=sys.executable, answer=HOSTILE_ANSWERS[answer]), "utf-8")
    cli.chmod(0o755)
    for mode in ("restore", "preview"):
        request = b'{"mode": "%s", "archive": {}}' % mode.encode() if op == "import_archive" else b"{}"
        code, reply = run(adapter, cli, tmp_path, op, request)
        assert code in (0, 3, adapter.EXIT_ERROR), (op, mode, code)
        if code != adapter.EXIT_ERROR:
            assert isinstance(reply, dict), (op, mode, reply)
        else:
            assert op == "export" and HOSTILE_ANSWERS[answer][2] == 0  # exit 0 and no archive written
