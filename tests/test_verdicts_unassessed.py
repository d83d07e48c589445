"""Levels a user can act on: a level not claimed and with nothing applied is "not claimed"; a level left
unobserved only for want of a memconform test hook or of an option says what it needs and does not fail
the run, unless the run requires hooks (--require-hooks, the pytest plugin's --mc-require-hooks, certify)."""

from __future__ import annotations

from memconform.cli.common import profile_from_args
from memconform.cli.main import build_parser
from memconform.core.profile import Profile
from memconform.core.results import (
    Inconclusive,
    NeedsHook,
    NeedsOperator,
    NotExercised,
    Outcome,
    Result,
    SkipCheck,
)
from memconform.core.suite import Level, SuiteSpec
from memconform.core.verdicts import exit_code, level_verdicts

SUITE = SuiteSpec("toy", "Toy spec", "1", [
    Level("1", "Level 1 Producer"),
    Level("2", "Level 2 Consumer", requires=("1",)),
    Level("ai", "AI endpoints"),
])


def result(name: str, level: str, outcome: Outcome = Outcome.PASSED, skip: SkipCheck | None = None) -> Result:
    r = Result(check_id=f"toy.{name}", suite="toy", spec="Toy spec", section="§1", keyword="MUST", level=level,
               sentence="s", outcome=outcome)
    if skip is not None:  # what the runner keeps of a SkipCheck
        r.outcome, r.reason = Outcome.SKIPPED, skip.reason
        r.not_applicable, r.inconclusive = skip.not_applicable, skip.inconclusive
        r.needs, r.needs_kind = getattr(skip, "needs", ""), getattr(skip, "needs_kind", "")
    return r


def verdicts(results: list[Result], claimed: set[str] | None = None, require_hooks: bool = False) -> dict[str, object]:
    return {v.key: v for v in level_verdicts(SUITE, results, claimed, require_hooks=require_hooks)}


NO_DECAY = NeedsHook("DNA protection", "decay")
NO_AI_OPTION = NotExercised("extract without an AI key", "omp.ai_endpoints=no-key")


def hookless_run() -> list[Result]:
    return [result("exports", "1"), result("imports", "2"), result("dna_kept", "2", skip=NO_DECAY)]


def test_a_missing_hook_is_named_and_does_not_fail_the_run() -> None:
    results = hookless_run()
    levels = verdicts(results)
    consumer = levels["2"]
    assert consumer.status == "not assessed"
    assert consumer.line() == ("Level 2 Consumer: conformant on every rule observable through the spec's interface; "
                               "not assessed: DNA protection, needs the decay hook")
    assert consumer.to_json("toy")["needs"] == ["DNA protection, needs the decay hook"]
    assert not consumer.gating
    assert exit_code(results, levels.values()) == 0


def test_require_hooks_makes_a_missing_hook_fail_the_run() -> None:
    results = hookless_run()
    levels = verdicts(results, require_hooks=True)
    assert levels["2"].gating and exit_code(results, levels.values()) == 1


def test_a_missing_hook_beside_another_unobserved_check_still_fails_the_run() -> None:
    results = [*hookless_run(), result("imports_twice", "2", Outcome.ERRORED)]
    consumer = verdicts(results)["2"]
    assert consumer.gating and "also DNA protection, needs the decay hook" in consumer.line()


def test_a_failure_beside_a_missing_hook_is_not_conformant() -> None:
    results = [*hookless_run(), result("imports_twice", "2", Outcome.FAILED)]
    assert verdicts(results)["2"].status == "not conformant"


def test_a_level_observable_only_through_a_hook_says_so_without_claiming_conformance() -> None:
    results = [result("exports", "1"), result("dna_kept", "2", skip=NO_DECAY)]
    consumer = verdicts(results)["2"]
    assert consumer.line() == "Level 2 Consumer: not assessed: DNA protection, needs the decay hook"
    assert not consumer.gating


def test_a_prerequisite_wanting_a_hook_passes_its_need_on() -> None:
    results = [result("exports", "1"), result("exports_ids", "1", skip=NeedsHook("deletion", "delete_chunk")),
               result("imports", "2")]
    consumer = verdicts(results)["2"]
    assert consumer.needs == ["deletion, needs the delete_chunk hook"] and not consumer.why and not consumer.gating
    assert verdicts(results, require_hooks=True)["2"].gating


def test_a_level_not_exercised_for_want_of_an_option_never_decides_the_exit_code() -> None:
    results = [result("exports", "1"), result("extract_without_key", "ai", skip=NO_AI_OPTION)]
    for required in (False, True):
        ai = verdicts(results, require_hooks=required)["ai"]
        assert ai.line() == "AI endpoints: not assessed: extract without an AI key, needs --option omp.ai_endpoints=no-key"
        assert not ai.gating
        assert exit_code(results, verdicts(results, require_hooks=required).values()) == 0


def test_a_plain_inconclusive_check_still_fails_the_run() -> None:
    """The control: only a missing hook or option is excused, never an empty store."""
    results = [result("exports", "1", skip=Inconclusive("the target exported an empty store"))]
    levels = verdicts(results)
    assert levels["1"].status == "not assessed" and levels["1"].gating
    assert exit_code(results, levels.values()) == 1


def test_a_level_not_claimed_with_nothing_applied_is_not_claimed() -> None:
    skip = SkipCheck("target does not claim level 'ai'", not_applicable=True)
    results = [result("exports", "1"), result("extract_without_key", "ai", skip=skip)]
    levels = verdicts(results, claimed={"1", "2"})
    assert levels["ai"].status == "not claimed" and levels["ai"].line().startswith("AI endpoints: not claimed")
    assert exit_code(results, levels.values()) == 0


def test_a_level_not_claimed_but_failing_is_not_conformant() -> None:
    """A rule broken is reported whatever the target claims."""
    results = [result("exports", "1"), result("extract_without_key", "ai", Outcome.FAILED)]
    assert verdicts(results, claimed={"1", "2"})["ai"].status == "not conformant"


def test_a_result_keeps_what_it_needs_through_the_report() -> None:
    r = result("dna_kept", "2", skip=NO_DECAY)
    back = Result.from_json(r.to_json())
    assert (back.needs, back.needs_kind) == ("DNA protection, needs the decay hook", "hook")


def test_the_command_line_sets_require_hooks() -> None:
    parser = build_parser()
    assert profile_from_args(parser.parse_args(["run", "--require-hooks"])).require_hooks is True
    assert profile_from_args(parser.parse_args(["run"])).require_hooks is False


def test_an_omp_server_answering_extract_is_not_failed_for_what_memconform_would_not_call() -> None:
    """Over HTTP the target does not say whether it has an AI key: extract/compress are not exercised
    (no real AI provider is ever called), the level names the option, and the run exits 0."""
    from memconform.run.session import execute_run
    from memconform.suites.omp.reference.serve import ServerSpec, serve_target

    served = serve_target(ServerSpec())
    try:
        outcome = execute_run(["omp"], served.base_url, Profile.named("ci"), report_dir=None, api_key=served.api.keys.global_key,
                              check_ids=["extract_without_ai_key", "compress_without_ai_key"])
    finally:
        served.close()
    assert {r.needs_kind for r in outcome.results} == {"option"}
    ai = next(v for v in outcome.levels["omp"] if v.key == "ai")
    assert "needs --option omp.ai_endpoints=no-key" in ai.line() and not ai.gating
    assert outcome.exit_code == 0


def test_certify_requires_the_hooks_and_verify_agrees(tmp_path) -> None:
    """A certificate says nothing was left unassessed for want of a hook: certify exits 1 on a hook-less
    target that `run` lets exit 0, and verify recomputes the same exit code from the bundle."""
    import base64
    import json
    import sys
    from pathlib import Path

    from memconform.cli.main import main
    from memconform.evidence.certify import verify_bundle

    key = tmp_path / "vendor.key"
    assert main(["keygen", str(key)]) == 0
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        out = tmp_path / "bundle.json"
        code = main(["certify", "--suite", "memoryai", "--target", "python:test_memoryai_verdicts:NoHooks", "--key", str(key),
                     "--profile", "ci", "--out", str(out)])
    finally:
        sys.path.remove(str(Path(__file__).parent))
    assert code == 1
    envelope = json.loads(out.read_text("utf-8"))  # a signed DSSE envelope: the bundle is its Statement's predicate
    bundle = json.loads(base64.b64decode(envelope["payload"]))["predicate"]
    assert bundle["exit_code"] == 1 and verify_bundle(bundle) == []


NO_SERVER_LOG = NeedsOperator("§7 content not logged in plain text", "omp.server_log=PATH")


def test_a_file_only_the_operator_can_name_is_asked_for_without_failing_the_run() -> None:
    """Issue 34 item 11: a rule read in the server's log, with the log not named, leaves its level not
    assessed naming the option; the run exits 0, and --require-hooks (certify) asks for it."""
    results = [result("keys_long", "ai"), result("content_not_logged", "ai", skip=NO_SERVER_LOG)]
    level = verdicts(results)["ai"]
    assert level.line() == ("AI endpoints: conformant on every rule observable through the spec's interface; "
                            "not assessed: §7 content not logged in plain text, needs --option omp.server_log=PATH")
    assert not level.gating and exit_code(results, verdicts(results).values()) == 0
    required = verdicts(results, require_hooks=True)
    assert required["ai"].gating and exit_code(results, required.values()) == 1
    # the control: an option memconform withholds on purpose never decides, even when hooks are required
    withheld = [result("keys_long", "ai"), result("extract_without_key", "ai", skip=NO_AI_OPTION)]
    assert exit_code(withheld, verdicts(withheld, require_hooks=True).values()) == 0


def test_an_omp_server_whose_log_is_not_named_exits_0_with_the_level_saying_what_it_needs() -> None:
    """`memconform serve omp` without its log named: the §7 level says it needs omp.server_log, exit 0;
    with --require-hooks the same run exits 1."""
    from memconform.run.session import execute_run
    from memconform.suites.omp.reference.serve import ServerSpec, serve_target

    served = serve_target(ServerSpec())
    checks = ["api_keys_at_least_32_chars", "content_not_logged"]
    try:
        outcome = execute_run(["omp"], served.base_url, Profile.named("ci"), report_dir=None,
                              api_key=served.api.keys.global_key, check_ids=checks)
        required = Profile.named("ci")
        required.require_hooks = True
        strict_outcome = execute_run(["omp"], served.base_url, required, report_dir=None,
                                     api_key=served.api.keys.global_key, check_ids=checks)
    finally:
        served.close()
    assert [(r.check_id, r.outcome) for r in outcome.results] == [
        ("omp.api_keys_at_least_32_chars", Outcome.PASSED), ("omp.content_not_logged", Outcome.SKIPPED)]
    assert outcome.results[1].needs_kind == "operator"
    security = next(v for v in outcome.levels["omp"] if v.key == "security")
    assert "not assessed: §7 content not logged in plain text, needs --option omp.server_log=PATH" in security.line()
    assert security.observable_conformant and not security.gating
    assert outcome.exit_code == 0
    assert strict_outcome.exit_code == 1
