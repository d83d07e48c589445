"""`memconform port` speaks to every target `run` speaks to (issue 32 item 5): an OMP server that wants its
key is reached with --from-api-key / --to-api-key / --api-key / MEMCONFORM_API_KEY (and --option
omp.credentials=FILE), the key never printed; the loss check compares fields, extension fields included,
and names the hop where an extension field was dropped."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main
from memconform.portability.port import port
from memconform.suites.amps.reference import ReferenceAmpsStore
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, serve_target

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def omp_server() -> Iterator[ServedTarget]:
    """The reference OMP app on 127.0.0.1:<ephemeral>, wanting its own freshly made key."""
    served = serve_target(ServerSpec(), label="keyed omp")
    yield served
    served.close()


def _lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("how", ["from-api-key", "api-key", "environment"])
def test_port_from_an_omp_server_with_its_key(omp_server, how, capsys, monkeypatch):
    key = omp_server.api.keys.global_key
    args = ["port", "--from", omp_server.base_url, "--from-format", "omp", "--to", "reference:amps"]
    if how == "environment":
        monkeypatch.setenv("MEMCONFORM_API_KEY", key)
    else:
        args += [f"--{how}", key]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "every loss was predicted by the ledger" in captured.out
    assert key not in captured.out + captured.err


def test_port_to_an_omp_server_with_its_key_and_credentials_file(omp_server, tmp_path, capsys):
    creds = omp_server.omp_facts.credentials
    assert creds is not None
    file = tmp_path / "credentials.json"
    file.write_text(json.dumps({"tool_keys": creds.tool_keys, "other_user_key": creds.other_user_key}), encoding="utf-8")
    key = omp_server.api.keys.global_key
    assert main(["port", "--from", "reference:emp", "--to", omp_server.base_url, "--to-format", "omp",
                 "--to-api-key", key, "--option", f"omp.credentials={file}"]) == 0
    assert "every loss was predicted by the ledger" in capsys.readouterr().out


@pytest.mark.parametrize("key", [None, "wrong-key-0123456789"])
def test_without_the_right_key_port_is_one_error_line_exit_2(omp_server, key, capsys, monkeypatch):
    """The negative control: the same server refuses a port with no key or a wrong one (401), said in one line."""
    monkeypatch.delenv("MEMCONFORM_API_KEY", raising=False)
    args = ["port", "--from", omp_server.base_url, "--from-format", "omp", "--to", "reference:amps"]
    assert main(args + (["--from-api-key", key] if key else [])) == 2
    err = capsys.readouterr().err
    assert _lines(err)[-1].startswith("memconform: error:") and "401" in err and "internal error" not in err


def _seed(tmp_path: Path) -> Path:
    doc = json.loads((ROOT / "fixtures" / "amps" / "valid" / "linked-complete.json").read_text(encoding="utf-8"))["document"]
    doc = copy.deepcopy(doc)
    doc["atoms"][0]["x-team"] = {"owner": "mira"}
    doc["atoms"][0]["x-provider"] = {"score": 3}
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


class TopLevelXDroppingAmps(ReferenceAmpsStore):
    """An AMPS store that keeps x-provider but drops an atom's other x- fields on import."""

    def import_export(self, doc: Any, **params: Any) -> dict[str, Any]:
        if isinstance(doc, dict):
            doc = {**doc, "atoms": [{k: v for k, v in a.items() if not k.startswith("x-") or k == "x-provider"}
                                    for a in doc["atoms"]]}
        return super().import_export(doc, **params)


class MetaFieldDroppingEmp(ReferenceEmpApp):
    """An EMP writer that drops one extension field of meta (the translation's own block survives)."""

    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        entry = dict(body["entry"])
        if isinstance(entry.get("meta"), dict):
            entry["meta"] = {k: v for k, v in entry["meta"].items() if k != "score"}
        return super().append({**body, "entry": entry})


def test_an_amps_x_field_travels_there_and_back(tmp_path):
    for b in ("omp", "memoryai", "emp", "memorizz"):
        result = port("reference:amps", f"reference:{b}", seed=_seed(tmp_path))
        assert result.ok, [f.line() for f in result.findings]
        assert result.back is not None and result.back.output is not None
        atom = next(a for a in result.back.output["atoms"] if "x-team" in a)
        assert atom["x-team"] == {"owner": "mira"}, b
        assert {k: v for k, v in atom["x-provider"].items() if k != "memconform_port"} == {"score": 3}, b


def test_a_source_that_drops_an_x_field_is_named_at_a(tmp_path):
    result = port(f"python:{__name__}:TopLevelXDroppingAmps", "reference:omp", fmt_a="amps", seed=_seed(tmp_path))
    assert [(f.where, f.field) for f in result.findings] == [("A", "extensions")]


def test_a_target_that_drops_an_extension_field_is_named_at_b(tmp_path):
    result = port("reference:amps", f"python:{__name__}:MetaFieldDroppingEmp", fmt_b="emp", seed=_seed(tmp_path))
    assert ("B", "extensions") in {(f.where, f.field) for f in result.findings}
    assert not any(f.where == "A" for f in result.findings)
    assert port("reference:amps", "reference:emp", seed=_seed(tmp_path)).ok, "the control: the reference keeps it"
