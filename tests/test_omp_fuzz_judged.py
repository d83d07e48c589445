"""OMP fuzz failures judged by how schemathesis generated the request (negative data, valid data, ignored
auth) replay from their JSON files (issue 31 item 8): suites/omp/fuzzing/judged.py.

The comparator is asked directly: each judgement passes the statuses it names and, where the run accepted
readings, an answer a reading of OMP's table accepts (a reply a reading accepts is not a reproduction), and
blames the rest; it runs without schemathesis. Then end to end: a mutant failing each check saves the failing
request as JSON, `memconform replay` reproduces it on the mutant (exit 1) and not on the reference (exit 0);
an ignored-auth probe with a wrong key replays with that key, never the run's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memconform.core.check_context import NoTarget
from memconform.core.profile import Profile
from memconform.core.results import HarnessError
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.run.replay import key_placeholder
from memconform.suites.omp import readings as table
from memconform.suites.omp.fuzzing import judged
from memconform.suites.omp.reference.api import ApiError, OmpApi, Principal
from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, serve_target

NEGATIVE_STATUSES = [400, 401, 403, 404, 405, 406, 409, 415, 422, 428, 429, "5xx"]  # schemathesis's defaults
POSITIVE_STATUSES = ["2xx", "3xx", 401, 403, 404, 409, 429, "5xx"]


def omp_ctx(**options: str) -> Context:
    return Context(suite=get_suite("omp"), target=NoTarget(), profile=Profile.named("ci", options={
        f"omp.{k}": v for k, v in options.items()}))


def asked(request: table.Asked) -> dict[str, Any]:
    return {"method": request.method, "path": request.path, "query": dict(request.query), "body": request.body,
            "negative": sorted(request.negative), "described": request.described or request.method, "size": request.size}


def expected(kind: str, request: table.Asked, statuses: list[Any], accept_readings: bool = True) -> dict[str, Any]:
    return {"judged": kind, "asked": asked(request), "statuses": statuses, "accept_readings": accept_readings,
            "why": "(what was judged)"}


CREATE_TOO_LONG = table.Asked("POST", "/v1/memories", body={**table.MEMORY, "content": "x" * 10001},
                              negative=frozenset({"body"}), described="POST")
LIST_BAD_LIMIT = table.Asked("GET", "/v1/memories", query={"limit": "abc"}, negative=frozenset({"query"}), described="GET")
SEMANTIC = table.Asked("POST", "/v1/memories/search", body={"q": "coffee", "mode": "semantic"}, described="POST")


def test_negative_data_accepted_reproduces_and_a_refusal_does_not() -> None:
    judge = expected("negative", CREATE_TOO_LONG, NEGATIVE_STATUSES)
    served = table.reply(201, table.MEMORY_SERVED)
    assert "invalid data accepted" in (judged.judged_reply_differs(omp_ctx(), served, judge) or "")
    for status in (400, 422, 500):  # a 5xx is the server-error check's, not this one's
        assert judged.judged_reply_differs(omp_ctx(), table.reply(status, table.envelope("validation_error")), judge) is None


def test_an_answer_a_reading_accepts_is_not_a_reproduction_and_its_control_is() -> None:
    """O9: a bad list parameter served as a sane page; the same request answered with 101 memories is blamed,
    and under omp.bad_params=reject (the reading pinned away) the sane page is blamed too."""
    judge = expected("negative", LIST_BAD_LIMIT, NEGATIVE_STATUSES)
    ctx = omp_ctx()
    assert judged.judged_reply_differs(ctx, table.reply(200, table.PAGE), judge) is None
    assert "a bad query parameter served as a sane page" in ctx.readings["O9"]["seen"]  # recorded, as the run does
    assert judged.judged_reply_differs(omp_ctx(), table.reply(200, {"memories": [table.MEMORY_SERVED] * 101}), judge)
    assert judged.judged_reply_differs(omp_ctx(bad_params="reject"), table.reply(200, table.PAGE), judge)
    unread = expected("negative", LIST_BAD_LIMIT, NEGATIVE_STATUSES, accept_readings=False)
    assert judged.judged_reply_differs(omp_ctx(), table.reply(200, table.PAGE), unread)  # as the run judged it


def test_valid_data_refused_reproduces_unless_a_reading_accepts_the_refusal() -> None:
    judge = expected("positive", SEMANTIC, POSITIVE_STATUSES)
    refusal = table.reply(422, table.envelope("validation_error", "mode"))
    assert judged.judged_reply_differs(omp_ctx(), refusal, judge) is None  # O13: optional at OMP-Core
    assert judged.judged_reply_differs(omp_ctx(), table.reply(200, table.SEARCH_PAGE), judge) is None
    bare = table.reply(422, {"detail": "mode not supported"})
    assert "schema-valid data refused" in (judged.judged_reply_differs(omp_ctx(), bare, judge) or "")
    plain = expected("positive", table.Asked("POST", "/v1/memories", body=table.MEMORY, described="POST"), POSITIVE_STATUSES)
    assert judged.judged_reply_differs(omp_ctx(), table.reply(422, table.envelope("validation_error", "tags")), plain)


def test_a_probe_without_the_key_reproduces_unless_refused_with_401_or_403() -> None:
    judge = expected("auth", table.Asked("GET", "/v1/memories", described="GET"), list(judged.AUTH_REFUSALS), False)
    assert "accepted" in (judged.judged_reply_differs(omp_ctx(), table.reply(200, table.PAGE), judge) or "")
    assert "not refused with 401 or 403" in (judged.judged_reply_differs(omp_ctx(), table.reply(404, {}), judge) or "")
    for status in (401, 403):
        assert judged.judged_reply_differs(omp_ctx(), table.reply(status, table.envelope("unauthorized")), judge) is None


@pytest.mark.parametrize("wrong", [
    {"judged": "os.system"}, {"judged": "negative", "asked": "GET /"},
    {"judged": "negative", "asked": {"method": "GET", "path": "/v1/memories"}},
    expected("negative", LIST_BAD_LIMIT, []), expected("negative", LIST_BAD_LIMIT, "4xx"),  # type: ignore[arg-type]
])
def test_a_crafted_judgement_is_one_usage_error(wrong: dict[str, Any]) -> None:
    with pytest.raises(HarnessError):
        judged.judged_reply_differs(omp_ctx(), table.reply(200, table.PAGE), wrong)


def test_status_classes_are_read_as_classes_only() -> None:
    assert judged.allows(["5xx"], 503) and not judged.allows(["5xx"], 499)
    assert judged.allows([422], 422) and not judged.allows([True, "4x", "x22"], 422)


def test_the_keys_placeholder_is_sent_as_the_targets_own_key() -> None:
    headers, auth = key_placeholder({"Authorization": "Bearer $MEMCONFORM_API_KEY", "Accept": "*/*"}, False)
    assert (headers, auth) == ({"Accept": "*/*"}, True)
    assert key_placeholder({"Authorization": "Bearer ***"}, False) == ({"Authorization": "Bearer ***"}, False)
    assert key_placeholder(None, True) == (None, True)


def test_the_judgement_replays_without_schemathesis(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['schemathesis'] = None\n"
            "from memconform.suites.omp.fuzzing import judged\n"
            "from memconform.suites.omp import readings as table\n"
            "from tests_judged import omp_ctx, expected, SEMANTIC, POSITIVE_STATUSES\n"
            "judge = expected('positive', SEMANTIC, POSITIVE_STATUSES)\n"
            "print(judged.judged_reply_differs(omp_ctx(), table.reply(422, {'detail': 'no'}), judge))\n")
    (tmp_path / "tests_judged.py").write_text(Path(__file__).read_text("utf-8"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=120, check=False)
    assert out.returncode == 0 and "schema-valid data refused" in out.stdout, out.stderr[-2000:]


# ---- end to end: saved by the run, replayed by the CLI ---------------------------------------------------

class AnyKeyAccepted(OmpApi):
    """§3.2: a request without a key is refused, but any key is taken as the global one."""

    def authenticate(self, headers: Any) -> Principal:
        try:
            return super().authenticate(headers)
        except ApiError:
            if not headers.get("authorization", "").strip():
                raise
            return self.principals[self.keys.global_key]


def any_key_accepted() -> ServedTarget:
    return serve_target(ServerSpec(api_class=AnyKeyAccepted), label="fake:omp:any-key-accepted")


KEY = {"MEMCONFORM_API_KEY": "sk-judged-replay-0123456789"}
MUTANTS = "python:memconform.suites.omp.mutants:"
JUDGED_FAILURES = [(MUTANTS + "no_validation", "fuzz_negative_data_rejected"),
                   (MUTANTS + "tags_ascii_only", "fuzz_valid_data_accepted"),
                   (MUTANTS + "auth_skipped", "fuzz_ignored_auth"),
                   (f"python:{__name__}:any_key_accepted", "fuzz_ignored_auth")]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MEMCONFORM_")}, **KEY,
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "memconform", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600, check=False)


@pytest.mark.slow
@pytest.mark.mutants
@pytest.mark.parametrize("target,check", JUDGED_FAILURES, ids=[f"{t.rsplit(':', 1)[1]}-{c}" for t, c in JUDGED_FAILURES])
def test_a_judged_fuzz_failure_is_saved_as_json_and_replays(tmp_path: Path, target: str, check: str) -> None:
    run = cli("run", "--suite", "omp", "--target", target, "--check", f"omp.{check}", "--report-dir",
              str(tmp_path / "report"), cwd=tmp_path)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    saved = sorted((tmp_path / "report" / "examples").glob(f"omp-{check}-*.json"))
    assert saved, run.stdout[-3000:]
    assert "Replay with: memconform replay " in run.stdout and '--api-key "$MEMCONFORM_API_KEY"' in run.stdout
    assert "[Filtered]" not in run.stdout
    text = saved[0].read_text("utf-8")
    assert KEY["MEMCONFORM_API_KEY"] not in text
    doc = json.loads(text)
    step, judgement = doc["steps"]
    assert judgement["op"] == judged.COMPARATOR and judgement["expected"]["judged"] in ("negative", "positive", "auth")
    if judgement["expected"]["judged"] == "auth":  # the probe, never the run's key
        assert step["auth"] is False and "$MEMCONFORM_API_KEY" not in json.dumps(step)
    else:
        assert step["auth"] is True and step["headers"]["Authorization"] == "Bearer $MEMCONFORM_API_KEY"
    again = cli("replay", str(saved[0]), "--target", target, cwd=tmp_path)
    assert again.returncode == 1 and "the divergence reproduced" in again.stdout, again.stdout[-2000:] + again.stderr
    clean = cli("replay", str(saved[0]), "--target", "reference:omp", cwd=tmp_path)
    assert clean.returncode == 0 and "no divergence" in clean.stdout, clean.stdout[-2000:] + clean.stderr
