"""One contract over every target kind in TARGET_KINDS: what a check may rely on whichever kind the user
chose. Each kind gets a maker that stands up the same small implementation behind it (an in-process
object, a command, a drop folder with a responder, an HTTP app on loopback) offering:

    echo      replies {"got": <the request body>}
    verbatim  replies {"verbatim": true} when the raw bytes it was handed are exactly RAW
    huge      replies a JSON string far over the reply cap
    hang      never answers within the test's deadlines

A new kind in TARGET_KINDS without a maker here fails `test_every_kind_has_a_contract_maker`.
`reference:` is the python kind with a suite's factory behind it: its own row asserts that, and the
deadline, Unsupported and close rows run on it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from memconform.core.profile import Limits
from memconform.core.results import TargetError, Unsupported
from memconform.targets import TARGET_KINDS, Route, Target, open_target

RAW = b'{"a": 1, "a": 2, "s": "\\ud800"}'  # duplicate names and a lone surrogate: bytes no re-encoding keeps
KEY = "contract-s3cret-key-9f2c"
CAP = 64 * 1024
HUGE = CAP * 4
OPS = ("echo", "verbatim", "huge", "hang")


class Impl:
    """The in-process implementation (python:); the other makers speak the same four operations."""

    def echo(self, body=None, **params):
        return {"got": body}

    def verbatim(self, body=None, **params):
        return {"verbatim": bytes(body) == RAW if isinstance(body, (bytes, bytearray)) else False}

    def huge(self, body=None, **params):
        return {"blob": "x" * HUGE}

    def hang(self, body=None, **params):
        time.sleep(30)
        return {}


CMD_SCRIPT = f"""
import json, sys, time
op, inp, out = sys.argv[1], sys.argv[2], sys.argv[3]
raw = open(inp, "rb").read()
if op == "echo":
    json.dump({{"got": json.loads(raw)}}, open(out, "w"))
elif op == "verbatim":
    json.dump({{"verbatim": raw == {RAW!r}}}, open(out, "w"))
elif op == "huge":
    json.dump({{"blob": "x" * {HUGE}}}, open(out, "w"))
elif op == "hang":
    time.sleep(30)
else:
    sys.exit(4)
"""


LINES_SCRIPT = f"""
import base64, json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["cmd"] == "start":
        print(json.dumps({{"ready": True, "version": 1}}), flush=True)
        continue
    if msg["cmd"] == "stop":
        break
    seq, op = msg["seq"], msg["op"]
    if op == "echo":
        reply = {{"seq": seq, "status": "ok", "body": {{"got": msg.get("body")}}}}
    elif op == "verbatim":
        reply = {{"seq": seq, "status": "ok", "body": {{"verbatim": base64.b64decode(msg.get("raw", "")) == {RAW!r}}}}}
    elif op == "huge":
        reply = {{"seq": seq, "status": "ok", "body": {{"blob": "x" * {HUGE}}}}}
    elif op == "hang":
        time.sleep(30)
        continue
    else:
        reply = {{"seq": seq, "status": "unsupported"}}
    print(json.dumps(reply), flush=True)
"""


def make_cmd_lines(tmp_path: Path, limits: Limits) -> Target:
    script = tmp_path / "lines_impl.py"
    script.write_text(LINES_SCRIPT)
    return open_target(f"cmd-lines:{sys.executable} {script}", limits=limits, api_key=KEY)


def make_python(tmp_path: Path, limits: Limits) -> Target:
    from memconform.targets.pyobj import PythonTarget

    return PythonTarget(Impl(), "python:contract", limits)


def make_cmd(tmp_path: Path, limits: Limits) -> Target:
    script = tmp_path / "impl.py"
    script.write_text(CMD_SCRIPT)
    config = tmp_path / "target.json"
    config.write_text(json.dumps({"default": f"{sys.executable} {script} {{op}} {{input}} {{output}}",
                                  "timeout_s": limits.call_deadline_s}))
    return open_target(f"cmd:@{config}", limits=limits, api_key=KEY)


class DropResponder:
    """The dir: implementation: reads each request from inbox/, answers in outbox/."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "inbox").mkdir(parents=True)
        (root / "outbox").mkdir()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.stop.is_set():
            for f in (self.root / "inbox").glob("*.json"):
                request_id, op, _ = f.name.split(".")
                raw = f.read_bytes()
                f.unlink()
                if op == "echo":
                    reply = {"status": "ok", "body": {"got": json.loads(raw)["body"]}}
                elif op == "verbatim":
                    reply = {"status": "ok", "body": {"verbatim": raw.endswith(b'"body": ' + RAW + b"}")}}
                elif op == "huge":
                    reply = {"status": "ok", "body": {"blob": "x" * HUGE}}
                elif op == "hang":
                    continue
                else:
                    reply = {"status": "unsupported"}
                (self.root / "outbox" / f"{request_id}.json").write_text(json.dumps(reply))
            time.sleep(0.01)


def make_dir(tmp_path: Path, limits: Limits) -> Target:
    responder = DropResponder(tmp_path / "drop")
    target = open_target(f"dir:{tmp_path / 'drop'}", limits=limits)
    target.__dict__["_contract_responder"] = responder
    return target


def http_app():
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route as StarletteRoute

    async def echo(request):
        return JSONResponse({"got": json.loads(await request.body())})

    async def verbatim(request):
        return JSONResponse({"verbatim": await request.body() == RAW})

    async def huge(request):
        return Response(json.dumps({"blob": "x" * HUGE}), media_type="application/json")

    async def hang(request):
        import asyncio

        await asyncio.sleep(30)
        return JSONResponse({})

    return Starlette(routes=[StarletteRoute(f"/{op}", fn, methods=["POST"])
                             for op, fn in (("echo", echo), ("verbatim", verbatim), ("huge", huge), ("hang", hang))])


@pytest.fixture(scope="module")
def http_base() -> Iterator[str]:
    from memconform.kit.loopback import serve_in_thread

    base, stop = serve_in_thread(http_app())
    yield base
    stop()


def make_http(tmp_path: Path, limits: Limits, base: str = "") -> Target:
    routes = {op: Route("POST", f"/{op}") for op in OPS}
    return open_target(base, routes, limits=limits, api_key=KEY)


MAKERS: dict[str, Callable[..., Target]] = {"python:": make_python, "cmd:": make_cmd, "cmd-lines:": make_cmd_lines,
                                             "dir:": make_dir, "http://": make_http}
# kinds that are another kind's class under another prefix
ALIASES = {"https://": "http://", "reference:": "python:"}
KINDS = sorted(MAKERS)


def test_every_kind_has_a_contract_maker():
    assert set(TARGET_KINDS) == set(MAKERS) | set(ALIASES)


def test_reference_is_the_python_kind_with_a_suites_factory():
    from memconform.targets.pyobj import PythonTarget

    target = open_target("reference:emp")
    try:
        assert isinstance(target, PythonTarget) and target.description == "reference:emp"
        with pytest.raises(Unsupported):
            target.call("no_such_operation", {})
    finally:
        target.close()


@pytest.fixture()
def make(request, tmp_path, http_base) -> Iterator[Callable[[Limits], Target]]:
    made: list[Target] = []

    def build(limits: Limits) -> Target:
        maker = MAKERS[request.param]
        target = maker(tmp_path, limits, http_base) if request.param == "http://" else maker(tmp_path, limits)
        made.append(target)
        return target

    yield build
    for target in made:
        target.close()
        responder = target.__dict__.get("_contract_responder")
        if responder is not None:
            responder.stop.set()


LIMITS = Limits(call_deadline_s=20, request_timeout_s=20, dir_wait_s=20, max_response_bytes=CAP)


@pytest.mark.parametrize("make", KINDS, indirect=True)
def test_a_body_goes_there_and_back(make):
    body = {"text": "é 🎉", "n": 2**53 + 1, "list": [None, True, 1.5]}
    assert make(LIMITS).call("echo", body).body == {"got": body}


@pytest.mark.parametrize("make", KINDS, indirect=True)
def test_raw_bytes_reach_the_implementation_verbatim(make):
    assert make(LIMITS).call("verbatim", raw=RAW).body == {"verbatim": True}


@pytest.mark.parametrize("make", KINDS, indirect=True)
def test_a_reply_over_the_cap_is_an_error(make):
    with pytest.raises(TargetError):
        make(LIMITS).call("huge", {})


@pytest.mark.parametrize("make", KINDS, indirect=True)
def test_an_operation_not_offered_is_unsupported(make):
    with pytest.raises(Unsupported):  # over HTTP: an operation the suite has no route for
        make(LIMITS).call("absent", {})


@pytest.mark.parametrize("make", KINDS, indirect=True)
def test_a_spent_run_budget_errors_at_once_without_calling(make):
    target = make(Limits(run_deadline_s=0, max_response_bytes=CAP))
    with pytest.raises(TargetError, match="run budget"):
        target.call("echo", {"a": 1})


@pytest.mark.parametrize("make", KINDS, indirect=True)
def test_a_call_that_never_answers_ends_at_its_deadline(make):
    target = make(Limits(call_deadline_s=1.0, request_timeout_s=1.0, dir_wait_s=1.0, max_response_bytes=CAP))
    started = time.monotonic()
    with pytest.raises(TargetError):
        target.call("hang", {})
    assert time.monotonic() - started < 25  # bounded well below the 30 s hang: unboundedness, not speed


@pytest.mark.parametrize("make", KINDS, indirect=True)
def test_the_key_is_in_no_description_or_error(make):
    target = make(LIMITS)
    assert KEY not in target.description
    with pytest.raises(TargetError) as err:
        target.call("huge", {})
    assert KEY not in str(err.value)


@pytest.mark.parametrize("make", KINDS, indirect=True)
def test_close_twice_is_harmless(make):
    target = make(LIMITS)
    assert target.call("echo", {"a": 1}).body == {"got": {"a": 1}}
    target.close()
    target.close()


def test_the_target_help_and_the_readme_name_every_kind():
    from memconform.cli.main import build_parser

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text("utf-8")
    table = readme.split("## Targets", 1)[1].split("\n## ", 1)[0]  # the README's targets table
    run_parser = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    target_help = next(a.help for a in run_parser._actions if "--target" in a.option_strings)
    missing = [(prefix, where) for prefix in TARGET_KINDS
               for where, said in (("--target help", prefix in (target_help or "")), ("README", f"| `{prefix}" in table
                                                                                     or f" or `{prefix}" in table))
               if not said]
    assert missing == []
