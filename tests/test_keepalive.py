"""A 4xx or 5xx answer may leave the request body unread on a kept-alive connection, where it would be
read as the start of the next request. After such an answer (or any broken exchange) the next request
goes on a new connection, inside a check too, and the check's transcript names the cause."""

from __future__ import annotations

from typing import Any

import httpx
from memconform.core.profile import Limits, Profile
from memconform.core.results import TargetError
from memconform.run.session import execute_run
from memconform.targets.base import Request
from memconform.targets.http import HttpTarget
from test_http_target import KEY, ROUTES, json_response, keep_alive_front


def mock(handler: Any) -> HttpTarget:
    return HttpTarget("http://target.test", ROUTES, Limits(), KEY, transport=httpx.MockTransport(handler))


def test_a_4xx_to_a_request_with_a_body_is_noted_and_one_without_a_body_is_not():
    target = mock(lambda r: json_response(404 if r.method == "POST" else 400, {"detail": "no"}))
    try:
        target.request("GET", "/v1/thing")
    except TargetError:
        pass
    assert target.notes == []
    try:
        target.send(Request("missing", {"chunks": []}))
    except Exception:  # noqa: BLE001 - 404: the route is absent; what matters is the note
        pass
    assert len(target.notes) == 1 and "answered 404 to a request with a body" in target.notes[0]
    assert "new connection" in target.notes[0]


def test_a_sloppy_keep_alive_server_answers_a_model_based_sequence_as_its_careful_twin(monkeypatch):
    """The faithful MemoryAI reference behind a front that answers 404 to the memconform test hooks
    without reading their bodies: model_sequences must not see "the same sequence answered differently"."""
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.memoryai.reference.brain import ReferenceBrain
    from memconform.suites.memoryai.reference.http_app import make_app

    upstreams = [serve_in_thread(make_app(ReferenceBrain())) for _ in range(3)]
    fronts = [keep_alive_front(upstreams[0][0], drains_404=False), keep_alive_front(upstreams[1][0], drains_404=True)]
    try:
        outcomes = []
        for url, _ in fronts:
            outcome = execute_run(["memoryai"], url, Profile.named("ci"), None, check_ids=["model_sequences"])
            outcomes.append([(r.outcome.value, r.reason) for r in outcome.results])
        sloppy, twin = outcomes
        assert sloppy == twin, (sloppy, twin)
        assert all("differently twice" not in reason for _, reason in sloppy)
        # the control: with the connection kept after such an answer, the leftovers do change the verdict
        monkeypatch.setattr(HttpTarget, "_drop_connections", lambda self, why: None)
        reused = keep_alive_front(upstreams[2][0], drains_404=False)
        fronts.append(reused)
        outcome = execute_run(["memoryai"], reused[0], Profile.named("ci"), None, check_ids=["model_sequences"])
        assert [(r.outcome.value, r.reason) for r in outcome.results] != twin
    finally:
        for _, stop in fronts + upstreams:
            stop()
