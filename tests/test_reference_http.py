"""The reference served over real HTTP on loopback gives the same verdicts as in process."""

from __future__ import annotations

import pytest
from memconform.core.profile import Profile
from memconform.kit.loopback import serve_in_thread
from memconform.run.session import execute_run
from memconform.suites.memoryai.reference.brain import ReferenceBrain
from memconform.suites.memoryai.reference.http_app import make_app


@pytest.fixture(scope="module")
def base_url():
    url, stop = serve_in_thread(make_app(ReferenceBrain()))
    yield url
    stop()


def test_same_verdicts_over_http(base_url, tmp_path):
    over_http = execute_run(["memoryai"], base_url, Profile.named("ci"), tmp_path)
    in_process = execute_run(["memoryai"], "reference:memoryai", Profile.named("ci"), None)
    http_outcomes = {r.check_id: r.outcome.value for r in over_http.results}
    local = {r.check_id: r.outcome.value for r in in_process.results}
    assert {k: v for k, v in http_outcomes.items() if v != "passed"} == {}
    # the differences allowed: status codes and file names (Content-Disposition) exist only over HTTP
    assert {k for k in local if local[k] != http_outcomes[k]} == {"memoryai.rejection_status", "memoryai.export_filename_json"}
    assert over_http.exit_code == 0


def test_api_key_is_redacted_from_every_report_file(base_url, tmp_path):
    execute_run(["memoryai"], base_url, Profile.named("ci"), tmp_path, api_key="sk-very-secret-key-123",
                check_ids=["tenant_id_not_adopted"], command="memconform run --api-key sk-very-secret-key-123")
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert "sk-very-secret-key-123" not in path.read_text(encoding="utf-8"), path
