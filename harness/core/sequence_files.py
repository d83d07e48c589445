"""A sequence of operations as a file: saved when a model-based check fails, read back for replay.

A failing check saves the last example (hypothesis runs the shrunk failing example last) as a
language-neutral JSON file under the report folder, `sequences/<check>-<run>.json`:

    {"format": "memconform-sequence", "version": 1, "suite", "check", "target": {"kind", "string"},
     "profile", "seed", "options", "steps": [{"by": "target"|"harness"|"check", "op", "body", "params",
     ..., "reply": {"status", "body"}, "expected", "message"}], "diverged_at": N}

beside a human script of the same steps (curl lines for http:// targets, the command lines for cmd:).
`check_document` reads such a file back; harness/run/replay.py sends its steps again
(`memconform replay FILE`). No pytest, CLI or transport in here.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from .results import HarnessError
from .sequence import HARNESS_ACTIONS, Recorder
from .wording import visible

FORMAT = "memconform-sequence"
VERSION = 1


# ---- saving ----------------------------------------------------------------------------------------

def target_string(ctx: Any) -> str:
    parts = shlex.split(ctx.reproduce_base) if ctx.reproduce_base else []
    if "--target" in parts[:-1]:
        return parts[parts.index("--target") + 1]
    return str(getattr(ctx.target, "description", "") or f"reference:{ctx.suite.name}")


def target_kind(spec: str) -> str:
    return spec.split(":", 1)[0] if ":" in spec else "unknown"


def document(ctx: Any, recorder: Recorder) -> dict[str, Any]:
    """The sequence file's content: the steps up to the divergence, secrets redacted."""
    steps = recorder.steps if recorder.diverged_at is None else recorder.steps[:recorder.diverged_at + 1]
    steps = [_raw_redacted(step, ctx.redactor) for step in steps]
    spec = target_string(ctx)
    return ctx.redactor.deep({
        "format": FORMAT, "version": VERSION, "suite": ctx.suite.name, "check": ctx.check_id,
        "target": {"kind": target_kind(spec), "string": spec},
        "profile": ctx.profile.name, "seed": ctx.profile.seed, "options": dict(ctx.profile.options),
        "steps": steps, "diverged_at": recorder.diverged_at,
    })


def _raw_redacted(step: dict[str, Any], redactor: Any) -> dict[str, Any]:
    """A step whose raw body is kept as base64 (not UTF-8) with the secrets masked in its bytes, then
    encoded again: masking the base64 text instead would leave a body replay cannot decode."""
    if not isinstance(step.get("raw_base64"), str):
        return step
    try:
        raw = base64.b64decode(step["raw_base64"], validate=True)
    except ValueError:
        return step  # not base64 after all: the text is redacted as any other
    encoded = base64.b64encode(redactor.binary(raw)).decode("ascii")
    if redactor.text(encoded) != encoded:
        # the base64 text itself still reads as part of a secret (a run of its characters by chance):
        # masking it would leave no body to replay; say so instead of keeping it
        kept = {k: v for k, v in step.items() if k != "raw_base64"}
        return {**kept, "raw_withheld": f"{len(raw)} bytes: their base64 reads as part of a secret"}
    return {**step, "raw_base64": encoded}


def _wrote(ctx: Any, path: Path, text: str) -> None:
    """The run's folder is checked against what its writers said they wrote (core/runner.Context.wrote)."""
    wrote = getattr(ctx, "wrote", None)
    if wrote is not None:
        wrote(path, text.replace("\n", os.linesep).encode("utf-8"))  # as write_text wrote it


def save(ctx: Any, recorder: Recorder) -> tuple[Path, Path | None] | None:
    """Write the sequence file (and its human script) under the report folder; None without one."""
    saved = save_explained(ctx, recorder)
    return None if saved is None else (saved[0], saved[1])


def save_explained(ctx: Any, recorder: Recorder) -> tuple[Path, Path | None, str] | None:
    """save(), and why no script was written when a value it would embed cannot be a shell word."""
    if ctx.report_dir is None:
        return None
    doc = document(ctx, recorder)
    folder = Path(ctx.report_dir) / "sequences"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', ctx.check_id or ctx.suite.name)}-{ctx.run_id}"
    path = folder / f"{stem}.json"
    text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
    path.write_text(text, encoding="utf-8")
    _wrote(ctx, path, text)
    why = ""
    try:
        lines = script_lines(ctx, doc)
    except Unscriptable as exc:
        lines, why = [], f"no shell script: {exc}"
    script = None
    if lines:
        script = folder / f"{stem}.sh"
        text = "\n".join(lines) + "\n"
        script.write_text(text, encoding="utf-8")
        script.chmod(0o755)
        _wrote(ctx, script, text)
    return _shown(ctx, path), (_shown(ctx, script) if script is not None else None), why


def _shown(ctx: Any, path: Path) -> Path:
    """The path as the report names it: the run's folder is swapped into the report folder's place."""
    shown = getattr(ctx, "shown_path", None)  # a bare context (a test's, replay's) writes where it names
    return shown(path) if shown is not None else path


def replay_line(ctx: Any, path: Path) -> str:
    words = ["memconform", "replay", str(path), "--target", target_string(ctx)]
    line = " ".join(shlex.quote(w) for w in words)
    if "$MEMCONFORM_API_KEY" in ctx.reproduce_base:
        line += ' --api-key "$MEMCONFORM_API_KEY"'
    return line


def failure_detail(ctx: Any, recorder: Recorder) -> str:
    """Save the sequence and say how to rerun it: the failure's "Reproduce with:" line."""
    saved = save_explained(ctx, recorder)
    if saved is None:
        return "(no report folder: the sequence was not saved)"
    path, script, why = saved
    shown = f"Reproduce with: {replay_line(ctx, path)}"
    return shown + (f" (or read and run {script})" if script else f" ({why})" if why else "")


class Unscriptable(ValueError):
    """A value the human script would have to embed that no shell line should carry (a control character)."""


# what no line of a script may carry, even quoted: a terminal showing the script (`cat`) would obey it;
# line feeds and tabs stay, inside single quotes only (a comment shows them written out)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORK = "\x00W\x00"  # where the script's work folder goes in a command word (no template can hold a NUL)


def _word(value: Any) -> str:
    """One shell word for a value the script embeds: single-quoted, refused if it holds a control character."""
    text = str(value)
    if _CONTROL.search(text):
        raise Unscriptable(f"{visible(text[:80])!s} holds a control character")
    return shlex.quote(text)


def _comment(text: Any) -> str:
    """Text for a `#` line: one line, every control character written out (a newline cannot end the comment)."""
    return visible(str(text)).replace("\n", "\\n").replace("\t", "\\t")


def script_lines(ctx: Any, doc: dict[str, Any]) -> list[str]:
    """curl lines for an HTTP target (a served reference too), the command lines for a cmd: target;
    nothing for in-process ones. Every value a line embeds is one single-quoted word (shlex.quote), and
    Unscriptable when it holds a control character; comments show their text written out."""
    target = ctx.target
    kind = doc["target"]["kind"]
    http, command = hasattr(target, "base_url"), kind == "cmd" and hasattr(target, "templates")
    if not (http or command):
        return []  # an in-process target: the JSON file is the script
    head = ["#!/bin/sh", f"# {_comment(doc['check'])}: the sequence of operations that left the target different from the model",
            f"# replay: memconform replay <this file's .json> --target {_comment(shlex.quote(doc['target']['string']))}",
            "# the key is read from $MEMCONFORM_API_KEY", "set -u"]
    body: list[str] = []
    for i, step in enumerate(doc["steps"]):
        if step["by"] == "check":
            body.append(f"# step {i}: the model expected here: {_comment(step['message'][:300])}")
        elif step["by"] == "harness":
            body.append(f"# step {i}: the harness ({_comment(step['op'])})")
            shell = HARNESS_ACTIONS[step["op"]][1](step["body"]) if step["op"] in HARNESS_ACTIONS else []
            if any(_CONTROL.search(line) for line in shell):
                raise Unscriptable(f"harness step {visible(step['op'])}: a line holds a control character")
            body += shell
        elif http:
            body.append(_curl(target, step))
        else:
            body += _command(target, step, i)
    return head + body if body else []


def _curl(target: Any, step: dict[str, Any]) -> str:
    routes = getattr(target, "routes", {})
    route = step.get("route") or (dataclasses.asdict(routes[step["op"]]) if step["op"] in routes else None)
    if route is None:
        return f"# {_comment(step['op'])}: no HTTP route known"
    path = route["path"].format_map({k: str(v) for k, v in (step.get("path_params") or {}).items()})
    url = target.base_url.rstrip("/") + path + ("?" + urlencode(step["params"]) if step.get("params") else "")
    auth = ' -H "Authorization: Bearer $MEMCONFORM_API_KEY"' if step.get("auth", True) else ""
    data = ""
    if "body" in step:
        data = f" -H 'Content-Type: application/json' --data {_word(json.dumps(step['body'], ensure_ascii=False))}"
    elif "raw_text" in step:
        data = f" --data-binary {_word(step['raw_text'])}"
    return f"curl -sS -X {_word(route['method'])}{auth} {_word(url)}{data}; echo"


def _command(target: Any, step: dict[str, Any], i: int) -> list[str]:
    template = target.templates.get(step["op"], target.default_template)
    if template is None:
        return [f"# {_comment(step['op'])}: no command template"]
    payload = step.get("raw_text") if "raw_text" in step else json.dumps(step.get("body", step.get("params") or {}), ensure_ascii=False)
    work = f'"$W"/{i}'
    values = {"op": step["op"], "input": f"{_WORK}/{i}/input.json", "output": f"{_WORK}/{i}/output.json", "workdir": f"{_WORK}/{i}"}
    argv = " ".join(_sh_word(tok.format(**values)) for tok in shlex.split(template))
    params = step.get("params") or {}
    if not all(isinstance(k, str) and _ENV_NAME.fullmatch(k) for k in params):
        raise Unscriptable("a parameter name is not an environment variable's name")
    env = " ".join(f"MEMCONFORM_PARAM_{k.upper()}={_word(v)}" for k, v in params.items())
    # printf of one quoted word, not a here-document: a payload line equal to the delimiter would end it
    return [f"W=${{W:-$(mktemp -d)}}; mkdir -p {work}",
            f"printf '%s\\n' {_word(payload)} > {work}/input.json",
            f"(cd {work} && MEMCONFORM_OP={_word(step['op'])} {env + ' ' if env else ''}{argv}); "
            f"echo \"exit $?\"; cat {work}/output.json 2>/dev/null; echo"]


def _sh_word(word: str) -> str:
    """One shell word: the pieces around the work folder single-quoted, the folder itself "$W" (expanded);
    nothing else in the word can expand."""
    return '"$W"'.join(_word(piece) if piece else "" for piece in word.split(_WORK)) or "''"


# ---- reading a sequence file back -----------------------------------------------------------------

def is_sequence(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def check_document(doc: Any) -> list[dict[str, Any]]:
    """The steps of a sequence file, after every member replay reads is found to have its type: a crafted
    file is one usage error, never an internal one."""
    if not is_sequence(doc):
        raise HarnessError(f"not a memconform sequence file (format {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise HarnessError(f"sequence file version {doc.get('version')!r}; this harness reads version {VERSION}")
    steps = doc.get("steps")
    if not isinstance(steps, list) or not all(isinstance(s, dict) and s.get("by") in ("target", "harness", "check") for s in steps):
        raise HarnessError("the sequence file's steps are not a list of target, harness and check steps")
    for n, step in enumerate(steps, 1):
        wrong = _wrong_member(step)
        if wrong:
            raise HarnessError(f"the sequence file's step {n}: {wrong}")
    if not any(s["by"] == "check" for s in steps):
        raise HarnessError("the sequence file names no divergence (no check step): nothing to reproduce")
    target = doc.get("target", {})
    if not isinstance(target, dict) or not isinstance(target.get("string", ""), str):
        raise HarnessError("the sequence file's target is not {\"kind\", \"string\"}")
    if not isinstance(doc.get("suite"), str):
        raise HarnessError("the sequence file names no suite")
    if doc.get("seed") is not None and (not isinstance(doc["seed"], int) or isinstance(doc["seed"], bool)):
        raise HarnessError("the sequence file's seed is not an integer")
    if not isinstance(doc.get("options", {}) or {}, dict):
        raise HarnessError("the sequence file's options are not an object")
    return steps


_STEP_TYPES: dict[str, tuple[type, ...]] = {
    "op": (str,), "params": (dict,), "path_params": (dict,), "headers": (dict,), "raw_text": (str,),
    "raw_base64": (str,), "raw_withheld": (str,), "filename": (str,), "route": (dict,), "auth": (bool,),
    "note": (str,), "message": (str,),
}


def _wrong_member(step: dict[str, Any]) -> str:
    if not isinstance(step.get("op"), str):
        return "no operation name (op)"
    for name, kinds in _STEP_TYPES.items():
        if name in step and not isinstance(step[name], kinds):
            return f"{name} is not a {kinds[0].__name__}"
    route = step.get("route")
    if route is not None and not (isinstance(route.get("method"), str) and isinstance(route.get("path"), str)):
        return "the route has no method and path"
    if step["by"] == "harness" and "body" not in step:
        return "a harness step without its body"
    return ""
