"""Replay a saved sequence of operations (core/sequence_files.py) against a target: `memconform replay FILE`.

The steps are sent again through `ctx.target.call`; harness steps are done again by the suite's
registered harness actions; at the recorded divergence the named comparator (core/sequence.py's
registry) says whether the target still leaves the model there. Ids the target assigned and folders
the harness made are renamed as the replay meets them (`Replay.rename`). It builds target requests,
so it sits above harness/targets, not in the core.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable
from typing import Any

from ..core.results import HarnessError, SkipCheck, TargetError
from ..core.sequence import COMPARATORS, HARNESS_ACTIONS
from ..core.sequence_files import check_document
from ..targets.base import Request, Route


@dataclasses.dataclass
class Replay:
    """One replay: the renames learned so far, the last target reply, and the printed lines."""

    ctx: Any
    say: Callable[[str], None]
    renames: dict[str, str] = dataclasses.field(default_factory=dict)
    last: Any = None

    def rename(self, value: Any) -> Any:
        """Recorded ids and folders replaced by the ones this replay got (whole strings, or folder prefixes)."""
        if isinstance(value, str):
            if value in self.renames:
                return self.renames[value]
            for old, new in self.renames.items():
                if old.startswith("/") and value.startswith(old + "/"):
                    return new + value[len(old):]
            return value
        if isinstance(value, list):
            return [self.rename(v) for v in value]
        if isinstance(value, dict):
            return {self.rename(k): self.rename(v) for k, v in value.items()}
        return value

    def learn(self, recorded: Any, reply: Any) -> None:
        """An id the target assigned then and now: later steps use the new one."""
        old = recorded.get("body") if isinstance(recorded, dict) else None
        new = reply.body if reply is not None else None
        if isinstance(old, dict) and isinstance(new, dict):
            for key in ("id", "memory_id", "artifact_id"):
                if isinstance(old.get(key), str) and isinstance(new.get(key), str) and old[key] != new[key]:
                    self.renames[old[key]] = new[key]


def request_of(step: dict[str, Any], rp: Replay) -> Request:
    raw = None
    if "raw_text" in step:
        raw = rp.rename(step["raw_text"]).encode("utf-8")
    elif "raw_base64" in step:
        try:
            raw = base64.b64decode(step["raw_base64"], validate=True)
        except ValueError:
            raise HarnessError(f"step {step['op']!r}: its raw body is not base64") from None
    elif "raw_withheld" in step:
        raise HarnessError(f"step {step['op']!r}: its raw body was not saved ({step['raw_withheld']})")
    route = None
    if step.get("route"):
        known = {f.name for f in dataclasses.fields(Route)}
        fields = {k: v for k, v in step["route"].items() if k in known}  # a member this harness does not know: left
        for old, new in rp.renames.items():  # an id the route's path holds (PUT /memories/<id>)
            fields["path"] = fields["path"].replace(old, new)
        route = Route(**fields)
    headers, auth = key_placeholder(step.get("headers"), step.get("auth", True))
    return Request(op=step["op"], body=rp.rename(step.get("body")), params=rp.rename(step.get("params")),
                   headers=headers, path_params=rp.rename(step.get("path_params")), raw=raw,
                   filename=step.get("filename"), route=route, auth=auth)


KEY_VARIABLE = "$MEMCONFORM_API_KEY"


def key_placeholder(headers: dict[str, Any] | None, auth: bool) -> tuple[dict[str, Any] | None, bool]:
    """A saved header naming $MEMCONFORM_API_KEY stands for the key: the target sends its own key there
    (the header dropped, auth on), never the variable's name."""
    if not headers or not any(KEY_VARIABLE in str(v) for v in headers.values()):
        return headers, auth
    return {k: v for k, v in headers.items() if KEY_VARIABLE not in str(v)} or None, True


def replay(ctx: Any, doc: Any, say: Callable[[str], None]) -> bool:
    """Send the steps again; True when the target leaves the model where the file says it did."""
    steps = check_document(doc)
    rp = Replay(ctx, say)
    n = len(steps)
    for i, step in enumerate(steps):
        where = f"step {i + 1}/{n}"
        if step["by"] == "harness":
            action = HARNESS_ACTIONS.get(step["op"])
            if action is None:
                raise HarnessError(f"{where}: no harness action {step['op']!r} in this installation")
            renames = action[0](ctx, rp.rename(step["body"]))
            for old, new in (renames or {}).items():
                rp.renames.setdefault(old, new)
            say(f"{where} harness {step['op']}{': ' + step['note'] if step.get('note') else ''}")
        elif step["by"] == "target":
            request = request_of(step, rp)
            try:
                reply = ctx.target.call(request)
            except SkipCheck as exc:  # not offered now: what the machine did then too, when it was recorded so
                say(f"{where} {step['op']}: {exc.reason}")
                rp.last = None
                continue
            except TargetError as exc:
                raise HarnessError(f"{where} {step['op']}: the target errored: {exc}") from None
            rp.learn(step.get("reply"), reply)
            rp.last = reply
            say(f"{where} {step['op']} -> {reply.status}")
        else:
            fn = COMPARATORS.get(step["op"])
            if fn is None:
                raise HarnessError(f"{where}: no comparator {step['op']!r} in this installation")
            differs = fn(ctx, rp.last, rp.rename(step.get("expected")))
            if differs:
                say(f"{where} DIVERGED: {differs}")
                say(f"         (recorded: {step.get('message', '')})")
                return True
            say(f"{where} as the model expects ({step['op']})")
    return False
