"""The implementations registry: the shipped file, its schema, skips with reasons, placeholders, the plan."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from memconform.core.suite import suite_names
from memconform.matrix.plan import github_matrix, index_table, plan, shard_at
from memconform.matrix.registry import Implementation, RegistryError, Slot, load_registry, registry_from_data

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "implementations.toml"


def minimal(**over: object) -> dict[str, object]:
    return {"id": "x", "name": "X", "version": "1.0.0", "source": "https://example.invalid/x", "suites": ["omp"],
            "target": "http://127.0.0.1:{port}", "claims": {"omp": ["core"]}, "license": "MIT", "ci": True, **over}


def test_shipped_registry_loads_with_a_reference_and_a_clean_second_opinion_per_suite() -> None:
    entries = load_registry(SHIPPED)
    by_suite = {s: [e for e in entries if s in e.suites] for s in suite_names()}
    for suite, impls in by_suite.items():
        ids = {e.id for e in impls}
        assert f"memconform-reference-{suite}" in ids, suite
        assert f"second-opinion-{suite}" in ids, suite
    for e in entries:
        if e.id.startswith("second-opinion-"):
            assert e.env.get("SECOND_OPINION_BUGS") == "", e.id  # clean: no planted bug switched on
        assert e.version not in ("main", "master")
    memorizz = next(e for e in entries if e.id == "memorizz-cli")
    assert memorizz.requires == ("memorizz",) and memorizz.ci is False


def test_every_shipped_claim_names_a_level_of_its_suite() -> None:
    from memconform.core.suite import get_suite

    for e in load_registry(SHIPPED):
        for suite, levels in e.claims.items():
            known = {lv.key for lv in get_suite(suite).levels}
            assert set(levels) <= known, (e.id, suite, set(levels) - known)


@pytest.mark.parametrize("bad, words", [
    ({"version": "main"}, "version"),
    ({"suites": []}, "suites"),
    ({"health": "v1/health"}, "health"),
    ({"colour": "red"}, "Additional properties"),
    ({"options": ["not an option"]}, "options"),
])
def test_schema_refuses_bad_entries_naming_the_field(bad: dict[str, object], words: str) -> None:
    with pytest.raises(RegistryError, match=words):
        registry_from_data({"implementation": [minimal(**bad)]}, ROOT)


def test_duplicate_ids_and_unknown_links_are_refused() -> None:
    with pytest.raises(RegistryError, match="appears twice"):
        registry_from_data({"implementation": [minimal(), minimal()]}, ROOT)
    with pytest.raises(RegistryError, match="unknown ids"):
        registry_from_data({"implementation": [minimal(independent_of=["nobody"])]}, ROOT)
    with pytest.raises(RegistryError, match="does not list"):
        registry_from_data({"implementation": [minimal(claims={"emp": ["file"]})]}, ROOT)


def test_not_toml_is_one_named_error(tmp_path: Path) -> None:
    bad = tmp_path / "implementations.toml"
    bad.write_text("[[implementation]\n", "utf-8")
    with pytest.raises(RegistryError, match="is not TOML"):
        load_registry(bad)


def test_absent_built_copy_or_executable_is_a_skip_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [impl] = registry_from_data({"implementation": [minimal(home_env="MEMCONFORM_TEST_HOME")]}, ROOT)
    monkeypatch.delenv("MEMCONFORM_TEST_HOME", raising=False)
    assert "MEMCONFORM_TEST_HOME is not set" in (impl.skip_reason() or "")
    monkeypatch.setenv("MEMCONFORM_TEST_HOME", str(tmp_path / "absent"))
    assert "is not a folder" in (impl.skip_reason() or "")
    monkeypatch.setenv("MEMCONFORM_TEST_HOME", str(tmp_path))
    assert impl.skip_reason() is None
    [exe] = registry_from_data({"implementation": [minimal(requires=["no-such-executable-here"])]}, ROOT)
    assert "no-such-executable-here not found" in (exe.skip_reason() or "")


def test_placeholders_are_filled_and_cmd_placeholders_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCONFORM_TEST_HOME", "/opt/built")
    impl = Implementation.from_entry(minimal(home_env="MEMCONFORM_TEST_HOME"), tmp_path)
    text = "cmd:{python} {home}/x.js --port {port} --db {workdir}/db {op} {input} {output} {root}"
    assert impl.expand(text, Slot(tmp_path / "w", 4242)) == (
        f"cmd:{sys.executable} /opt/built/x.js --port 4242 --db {tmp_path / 'w'}/db {{op}} {{input}} {{output}} {tmp_path}")


def test_plan_is_fixed_by_the_file_not_by_what_is_installed() -> None:
    entries = load_registry(SHIPPED)
    shards = plan(entries, seed_count=2)
    assert [s.index for s in shards] == list(range(len(shards)))
    assert len(shards) == 2 * sum(len(e.suites) for e in entries)  # memorizz-cli too, installed or not
    assert shards == plan(entries, seed_count=2)
    matrix = json.loads(github_matrix(shards))
    assert matrix["include"][0] == {"shard": 0, "implementation": entries[0].id, "suite": entries[0].suites[0],
                                    "seed": shards[0].seed}
    table = index_table(shards).splitlines()
    assert table[0].split("\t") == ["index", "implementation", "suite", "seed"] and len(table) == len(shards) + 1
    assert shard_at(shards, 3) == shards[3]
    omp_ci = [s.implementation for s in plan(entries, suites=["omp"], ci_only=True)]
    assert omp_ci == [e.id for e in entries if e.ci and "omp" in e.suites]
    assert {"memconform-reference-omp", "second-opinion-omp"} <= set(omp_ci)


def test_the_shipped_file_is_plain_toml_with_the_entry_shape() -> None:
    data = tomllib.loads(SHIPPED.read_text("utf-8"))
    for e in data["implementation"]:
        assert {"id", "name", "version", "source", "suites", "target", "claims", "license", "ci"} <= set(e)
