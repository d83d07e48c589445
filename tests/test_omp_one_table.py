"""One source of readings for OMP (issue 34 item 1, issue 35 item 2): the fuzzer, the model and the example
checks read the same table (suites/omp/readings.py), so no check blames an answer another accepts.

The walk: every row of the table (an errata point and one reading of it) has a request meeting the point, an
answer fitting the reading and an answer no reading allows; every check the row names is asked through its
own code (the fuzzer's accepted_readings, the model's accepts, the large round trip's refusal, the domain
sweep's dropped field) and must accept the first and refuse the second.

Then the fakes, each a small ASGI server on loopback with one reading a real implementation took, and a
control with an answer no reading allows: a Core-only server refusing semantic and hybrid search (O13) and a
search `q` without word characters (O34), an import body limit answered with the §4 envelope (O40), a
server without embeddings dropping the field (O38).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from memconform.core.check_context import NoTarget
from memconform.core.profile import CI_SEED, Profile
from memconform.core.readings import Observation, Reading
from memconform.core.results import Outcome
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.run.session import execute_run
from memconform.suites.omp import ask, dataset, domain_data
from memconform.suites.omp import example_readings as ex
from memconform.suites.omp import model as m
from memconform.suites.omp import readings as table
from memconform.suites.omp.checks import (
    bad_input,
    domain_writes,
    import_paths,
    large_roundtrip,
    search,
    search_full,
)
from memconform.suites.omp.fuzzing import accepted, judged
from memconform.suites.omp.mutants.large import ImportBodyCapEnvelope
from memconform.suites.omp.reference.api import OmpApi, Principal
from memconform.suites.omp.reference.parts import Out, Req
from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, serve_target
from memconform.suites.omp.table import TABLE
from memconform.targets.base import Reply


def omp_ctx(**options: str) -> Context:
    return Context(suite=get_suite("omp"), target=NoTarget(), profile=Profile.named("ci", options={
        f"omp.{k}": v for k, v in options.items()}))


# ---- each check that can meet a reading, asked through its own code ------------------------------------
# A judge answers False (refused), True (accepted) or, for a check that records readings, the readings it
# recorded for the point (accepted, and the walk asserts the row's reading is among them); a refusal's text
# (`failed`) names the readings the check accepted.

Verdict = bool | set[str]
failed: dict[str, str] = {}


def schemathesis_case(asked: table.Asked) -> Any:
    """The parts of a schemathesis case the fuzzer's judge reads."""
    from schemathesis.generation.meta import ParameterLocation

    negative = {ParameterLocation(n) for n in asked.negative}
    meta = SimpleNamespace(components={loc: None for loc in negative}, is_negative_at=lambda loc: loc in negative)
    return SimpleNamespace(method=asked.method, operation=SimpleNamespace(path=asked.path, method=asked.described or asked.method),
                           query=dict(asked.query), body=asked.body, meta=meta)


def by_the_fuzzer(row: Reading, asked: table.Asked, answer: Reply) -> Verdict:
    response = SimpleNamespace(status_code=answer.status, content=answer.raw)
    return (row.point, row.name) in accepted.accepted_readings(omp_ctx(), schemathesis_case(asked), response)


def by_the_replay(row: Reading, asked: table.Asked, answer: Reply) -> Verdict:
    """A saved fuzz failure replayed (fuzzing/judged.py): with no status passing it (1xx is none of the walk's),
    the table alone decides."""
    saved = {"judged": "negative" if asked.negative else "positive", "accept_readings": True, "statuses": ["1xx"],
             "asked": {"method": asked.method, "path": asked.path, "query": dict(asked.query), "body": asked.body,
                       "negative": sorted(asked.negative), "described": asked.described, "size": asked.size}}
    return judged.judged_reply_differs(omp_ctx(), answer, saved) is None


def by_the_model(row: Reading, request: Any, answer: Any) -> Verdict:
    """The model under every reading: the set of answers it allows holds this one."""
    if isinstance(request, table.Asked):
        return m.Model.seeded([], m.Readings(), complete=False).accepts(m.Request("search", body=request.body), answer) is None
    if isinstance(request, ex.Modelled):
        model = request.seeded(m.Readings())
        if request.read_back:
            return any(check(answer) is None for check in model.expect_read_back(request.request).values())
        return model.accepts(request.request, answer) is None
    stored = request.stored if hasattr(request, "stored") else tuple(d for _, d in request.made)
    return m.Model.seeded(stored, m.Readings()).accepts(m.Request("search", body=request.query), answer) is None


def recorded(row: Reading, check: Callable[[Context], Any], names: bool = True) -> Verdict:
    """Run a check's observation on a run's context: the readings it recorded, or False with its failure kept
    (`names`: its failure names the readings, as ctx.observe words it)."""
    ctx = omp_ctx()
    outcome = check(ctx)
    failures = [outcome.failure] if isinstance(outcome, Observation) else list(outcome or ())
    if any(f is not None for f in failures):
        if names:
            failed[f"{row.point}:{row.name}"] = " ".join(str(f.expected) for f in failures if f is not None)
        return False
    return set(ctx.readings.get(row.point, {}).get("seen", []))


def by_the_large_round_trip(row: Reading, asked: table.Asked, answer: Reply) -> Verdict:
    run = large_roundtrip.Large(word="w")
    run.mine = [{"content": "x" * asked.size}]
    return recorded(row, lambda ctx: large_roundtrip.refused(ctx, answer, run, "overwrite"), names=False)


def by_the_domain_sweep(row: Reading, request: Any, answer: Reply) -> Verdict:
    if isinstance(request, ex.OpenClass):
        vc = request.value_class()
        return recorded(row, lambda ctx: domain_data.observe_open(ctx, vc, answer.ok, 400 <= answer.status < 500, answer.brief()))
    if isinstance(request, ex.Expired):
        return recorded(row, lambda ctx: domain_writes.observe_expiry(ctx, request.label, answer))
    ctx = omp_ctx()
    if not domain_writes.field_dropped(ctx, request.route, request.body, answer):
        return False
    return set(ctx.readings.get(row.point, {}).get("seen", []))


def by_ask_observe(row: Reading, request: ex.Modelled, answer: Any) -> Verdict:
    """update_clears_nullable, list_limit_max_100, list_empty_and_repeated_parameters: ask.observe, as they call it."""
    return recorded(row, lambda ctx: ask.observe(ctx, request.point, request.request, answer, seeded=request.seeded,
                                                 pins=request.pins, read_back=request.read_back, title=row.point))


def by_the_keyword_check(row: Reading, request: ex.KeywordSearch, answer: Reply) -> Verdict:
    found = {name for name, mem in request.made if mem["id"] in ex.ids(answer)}
    return recorded(row, lambda ctx: search.observe_keyword_match(ctx, dict(request.made), request.query, found))


def by_the_filter_check(row: Reading, request: ex.TagSearch, answer: Reply) -> Verdict:
    model = m.Model.seeded(request.stored, m.Readings(keyword_match="all-words"))
    return recorded(row, lambda ctx: search.observe_search_tags(ctx, model, request.query, ex.ids(answer)))


def by_the_paging_check(row: Reading, request: ex.PinnedSearch, answer: Reply) -> Verdict:
    return recorded(row, lambda ctx: search.observe_pinned(ctx, list(request.stored), request.query, answer, request.option,
                                                           request.values, request.reading, "the page"))


def by_the_import_check(row: Reading, request: ex.ImportBatch, answer: tuple[Reply, int]) -> Verdict:
    reply, stored = answer
    return recorded(row, lambda ctx: ctx.observe("O7", import_paths.o7_predictions(reply, request.where, request.bad_id,
                                                                                   stored, request.good)))


def by_the_fixture_check(row: Reading, request: ex.BadListFixture, answer: Reply) -> Verdict:
    return recorded(row, lambda ctx: ctx.observe("O9", bad_input.o9_predictions(request.case, answer)))


def by_the_tool_key_checks(row: Reading, request: ex.ForeignMemory, answer: Reply) -> Verdict:
    return recorded(row, lambda ctx: search_full.tool_status_failures(ctx, answer))


def by_the_seeding(row: Reading, request: ex.CreatedAtKept, answer: int) -> Verdict:
    return recorded(row, lambda ctx: dataset.observe_created_at(ctx, answer, request.imported))


def by_the_limits_check(row: Reading, asked: table.Asked, answer: Reply) -> Verdict:
    created = answer.ok and isinstance(answer.body, dict) and isinstance(answer.body.get("id"), str)
    return recorded(row, lambda ctx: bad_input.observe_char_unit(ctx, answer, created, ctx.option("char_unit")))


FUZZ = (by_the_fuzzer, by_the_replay)
JUDGES: dict[str, tuple[Callable[[Reading, Any, Any], Verdict], ...]] = {
    "fuzz_valid_data_accepted": FUZZ, "fuzz_negative_data_rejected": FUZZ, "fuzz_status_codes": (by_the_fuzzer,),
    "fuzz_no_server_error": (by_the_fuzzer,),
    "model": (by_the_model,),  # search_mode_used_honest, domain_*_parameters, model_based_sequences ask it
    "own_export_imported_back_large": (by_the_large_round_trip,),
    "domain_create_every_class": (by_the_domain_sweep,), "domain_update_every_class": (by_the_domain_sweep,),
    "domain_import_every_class": (by_the_domain_sweep,),
    "update_clears_nullable": (by_ask_observe,), "list_limit_max_100": (by_ask_observe,),
    "list_empty_and_repeated_parameters": (by_ask_observe,),
    "search_keyword_all_words": (by_the_keyword_check,), "search_filters": (by_the_filter_check,),
    "search_limit_and_total": (by_the_paging_check,), "import_bad_memory_reported": (by_the_import_check,),
    "list_rejects_bad_paging": (by_the_fixture_check,), "tool_key_forbidden_other_read": (by_the_tool_key_checks,),
    "tool_key_forbidden_other_write": (by_the_tool_key_checks,), "listing_dataset": (by_the_seeding,),
    "accepts_values_at_limits": (by_the_limits_check,),
}
ROWS = list(TABLE)


def test_every_point_of_the_table_is_an_errata_entry() -> None:
    from pathlib import Path

    import memconform.suites.omp as omp_suite

    errata = (Path(omp_suite.__file__).parent / "errata.md").read_text()
    assert all(f"## {point} " in errata for point in TABLE.points()), TABLE.points()


def test_every_check_a_row_names_is_a_registered_check_or_a_named_judge() -> None:
    registered = {check_id.split(".", 1)[1] for check_id in get_suite("omp").registered()}
    shared = {"model", "listing_dataset"}  # the model every example check asks; the listing checks' seeding
    named = {check for row in ROWS for check in row.checks}
    assert named <= registered | shared, sorted(named - registered - shared)
    assert named <= set(JUDGES), sorted(named - set(JUDGES))


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.point}:{r.name}" for r in ROWS])
def test_every_check_that_can_meet_a_reading_accepts_its_answer_and_refuses_the_control(row: Reading) -> None:
    assert row.example is not None and row.wrong is not None and row.checks, "a row needs an example, a control and its checks"
    request, answer = row.example
    assert row.fits(request, answer, m.Readings()), "the example fits its own reading"
    assert not row.fits(request, row.wrong, m.Readings()), "the control fits no reading"
    for check in row.checks:
        for judge in JUDGES[check]:
            got = judge(row, request, answer)
            assert got, f"{check} ({judge.__name__}) blames what {row.point} accepts ({row.name})"
            if isinstance(got, set):
                assert row.name in got, f"{check} recorded {sorted(got)}, not {row.name!r}"
            failed.pop(f"{row.point}:{row.name}", None)
            assert not judge(row, request, row.control(check)), f"{check} ({judge.__name__}) accepts the control of {row.point} ({row.name})"
            text = failed.pop(f"{row.point}:{row.name}", None)
            if text is not None:  # the refusal names the readings the check accepts, this one among them
                assert row.name.rsplit(": ", 1)[-1] in text, text


def test_a_reading_pinned_away_is_blamed_again() -> None:
    semantic = TABLE.named("O13", "semantic not offered: refused with a 4xx")
    asked, answer = semantic.example  # type: ignore[misc]
    assert not semantic.fits(asked, answer, m.Readings(semantic_required=True))  # OMP-Search must serve it
    model = m.Model.seeded([], m.Readings(semantic_required=True), complete=False)
    assert model.accepts(m.Request("search", body=asked.body), answer) is not None
    null = TABLE.named("O37", "null on an optional field: refused")
    asked, answer = null.example  # type: ignore[misc]
    assert by_the_fuzzer(null, asked, answer)  # the default pins accept it
    pinned = accepted.accepted_readings(omp_ctx(null_optional="absent"), schemathesis_case(asked),
                                        SimpleNamespace(status_code=answer.status, content=answer.raw))
    assert ("O37", null.name) not in pinned


# ---- the fakes -----------------------------------------------------------------------------------------

class CoreOnlySearch(OmpApi):
    """An OMP-Core server: semantic and hybrid search refused with 422 and the §4 envelope naming `mode`, and
    a search `q` without word characters refused the same way (its full-text engine finds no token)."""

    compliance = "OMP-Core"

    def op_search(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        if body.get("mode") in ("semantic", "hybrid"):
            raise self.invalid("value", "mode", "semantic search is not offered (OMP-Core)")
        if isinstance(body.get("q"), str) and body["q"] and not table.WORD.search(body["q"]):
            raise self.invalid("value", "q", "q holds no word to search for")
        return super().op_search(who, req)


class CoreOnlySearchBareRefusal(CoreOnlySearch):
    """The control: the same refusals without the §4 envelope (FastAPI's `{"detail": ...}`)."""

    def dispatch(self, op: str, handler: Any, req: Req) -> Any:
        status, body, headers = super().dispatch(op, handler, req)
        if op == "search" and status == 422:
            return 422, {"detail": [{"loc": ["body", "mode"], "msg": "not offered"}]}, headers
        return status, body, headers


def core_only_search() -> ServedTarget:
    return serve_target(ServerSpec(api_class=CoreOnlySearch), label="fake:omp:core-only-search")


def core_only_search_bare() -> ServedTarget:
    return serve_target(ServerSpec(api_class=CoreOnlySearchBareRefusal), label="fake:omp:core-only-search-bare")


def titles(outcome: Any) -> list[str]:
    return [f.title for r in outcome.results for f in r.failures]


def seen(outcome: Any) -> set[tuple[str, str]]:
    return {(r["point"], s) for r in outcome.readings for s in r["seen"]}


FUZZ_PROFILE = Profile.named("default", seed=CI_SEED)  # enough draws that a plain create gets through (see test_omp_open_readings)


@pytest.mark.slow
def test_a_core_only_server_refusing_semantic_search_passes_the_valid_data_fuzzing() -> None:
    outcome = execute_run(["omp"], f"python:{__name__}:core_only_search", FUZZ_PROFILE, report_dir=None,
                          check_ids=["fuzz_valid_data_accepted", "search_mode_used_honest"])
    by_id = {r.check_id: r for r in outcome.results}
    assert by_id["omp.fuzz_valid_data_accepted"].outcome is Outcome.PASSED, titles(outcome)
    assert by_id["omp.search_mode_used_honest"].outcome is Outcome.SKIPPED  # not applicable: optional at Core
    # the draws of this seed hold a hybrid search and a wordless q (which mode, not both, is the draws' choice)
    assert {p for p, _ in seen(outcome)} >= {"O13"}, seen(outcome)


@pytest.mark.slow
def test_a_core_only_server_refusing_semantic_search_is_omp_core_conformant_in_a_whole_run() -> None:
    """The vendor's case end to end: every OMP check under ci against the Core-only server; OMP-Core conformant,
    the levels it does not claim not claimed, exit 0 (issue 34's 'a Core-only server refusing semantic search is
    OMP-Core conformant')."""
    outcome = execute_run(["omp"], f"python:{__name__}:core_only_search", Profile.named("ci"), report_dir=None)
    levels = {level.key: level for level in outcome.levels["omp"]}
    assert levels["core"].status == "conformant" and levels["core"].claimed, titles(outcome)
    assert levels["core"].counts["passed"] > 50 and levels["core"].counts["failed"] == 0
    assert levels["search"].status == levels["full"].status == "not claimed"
    assert outcome.exit_code == 0, titles(outcome)


@pytest.mark.slow
def test_the_same_refusal_without_the_envelope_is_still_blamed() -> None:
    outcome = execute_run(["omp"], f"python:{__name__}:core_only_search_bare", FUZZ_PROFILE, report_dir=None,
                          check_ids=["fuzz_valid_data_accepted"])
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED], titles(outcome)


def served_answer(target: ServedTarget, body: dict[str, Any]) -> Reply:
    import httpx

    answer = httpx.post(f"{target.base_url}/v1/memories/search", json=body,
                        headers={"Authorization": f"Bearer {target.api.keys.global_key}"}, timeout=30)
    return Reply(status=answer.status_code, body=answer.json(), raw=answer.content)


@pytest.mark.parametrize("q", ["!!", " ", "¿?", "--"])
def test_a_search_q_without_word_characters_refused_with_the_envelope_is_not_blamed(q: str) -> None:
    """The fake's own answers to a wordless q, fed to the fuzzer's judge and to the model; a q with a word
    refused the same way is still blamed by both (the control)."""
    for make, fits in ((core_only_search, True), (core_only_search_bare, False)):
        target = make()
        try:
            answer = served_answer(target, {"q": q})
            control = served_answer(target, {"q": "coffee", "mode": "semantic"})
        finally:
            target.close()
        assert answer.status == 422
        row = TABLE.named("O34", "a search q without word characters refused")
        asked = table.Asked(*table.SEARCH, body={"q": q})
        assert by_the_fuzzer(row, asked, answer) is fits
        assert by_the_model(row, asked, answer) is fits
        assert control.status == 422
    worded = table.Asked(*table.SEARCH, body={"q": "coffee"})
    assert not by_the_fuzzer(row, worded, answer) and not by_the_model(row, worded, answer)


# ---- O40: the import body limit answered with the §4 envelope ----------------------------------------

def body_cap_envelope() -> ServedTarget:
    return serve_target(ServerSpec(api_class=ImportBodyCapEnvelope), label="fake:omp:import-body-cap-envelope")


@pytest.mark.slow
def test_a_body_limit_answered_with_the_envelope_is_a_reading_and_a_bare_413_page_fails() -> None:
    outcome = execute_run(["omp"], f"python:{__name__}:body_cap_envelope", Profile.named("ci"), report_dir=None,
                          check_ids=["own_export_imported_back_large"])
    assert [r.outcome for r in outcome.results] == [Outcome.PASSED], titles(outcome)
    assert ("O40", "a body over the server's limit refused with the §4 envelope") in seen(outcome)
    assert any("errata O40, reading recorded" in n for r in outcome.results for n in r.transcript)
    bare = execute_run(["omp"], "python:memconform.suites.omp.mutants:import_body_cap_1mb", Profile.named("ci"),
                       report_dir=None, check_ids=["own_export_imported_back_large"])
    assert [r.outcome for r in bare.results] == [Outcome.FAILED]
    assert any("was refused when imported back" in t for t in titles(bare)), titles(bare)


# ---- O38: a server without embeddings drops the field ------------------------------------------------

class NoEmbeddings(OmpApi):
    """A server without embeddings: the `embedding` field is ignored, whatever it holds, and never stored."""

    def validate_memory(self, body: dict[str, Any], *, partial: bool) -> dict[str, Any]:
        return super().validate_memory({k: v for k, v in body.items() if k != "embedding"}, partial=partial)


class StoresAnyEmbedding(OmpApi):
    """The control: an embedding that is not an array of numbers stored as it came."""

    def check_embedding(self, value: Any) -> Any:
        return value


def no_embeddings() -> ServedTarget:
    return serve_target(ServerSpec(api_class=NoEmbeddings), label="fake:omp:no-embeddings")


def stores_any_embedding() -> ServedTarget:
    return serve_target(ServerSpec(api_class=StoresAnyEmbedding), label="fake:omp:stores-any-embedding")


DROPPING = ["domain_create_every_class", "domain_update_every_class", "domain_import_every_class"]


@pytest.mark.slow
def test_a_server_without_embeddings_dropping_the_field_is_not_blamed_and_one_storing_it_is() -> None:
    outcome = execute_run(["omp"], f"python:{__name__}:no_embeddings", Profile.named("ci"), report_dir=None, check_ids=DROPPING)
    assert {r.check_id: r.outcome for r in outcome.results} == {f"omp.{c}": Outcome.PASSED for c in DROPPING}, titles(outcome)
    assert ("O38", "embedding not supported: the field dropped") in seen(outcome)
    stored = execute_run(["omp"], f"python:{__name__}:stores_any_embedding", Profile.named("ci"), report_dir=None,
                         check_ids=DROPPING)
    assert {r.check_id: r.outcome for r in stored.results} == {f"omp.{c}": Outcome.FAILED for c in DROPPING}
    assert any("memory.embedding" in t for t in titles(stored)), titles(stored)


def test_the_table_reads_a_schemathesis_case_as_sent() -> None:
    case = schemathesis_case(table.Asked("GET", "/v1/memories", query={"limit": "abc"}, negative=frozenset({"query"}),
                                         described="GET"))
    request = accepted.asked(case)
    assert (request.route, request.negative, dict(request.query)) == (table.LIST, frozenset({"query"}), {"limit": "abc"})
    assert json.loads(table.reply(200, {"a": 1}).raw) == {"a": 1}
