"""A cmd: target's command template: relative paths resolved against the caller's folder, the placeholders
checked, and why its program cannot be started (command.py and lines.py open their targets with these)."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from ..core.results import HarnessError

PLACEHOLDERS = ("op", "input", "output", "workdir")


def resolve_template(template: str, base: Path) -> str:
    """The template with relative paths made absolute against `base` (the caller's folder)."""
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise HarnessError(f"bad command template {template!r}: {exc}") from None
    if not words:
        raise HarnessError("a cmd: target needs a command template")
    out = []
    for i, word in enumerate(words):
        if "{" in word or word.startswith("-") or os.path.isabs(word):
            out.append(word)
        elif (i == 0 and "/" in word) or (i > 0 and ("/" in word or "." in word) and (base / word).exists()):
            out.append(str((base / word).resolve()))
        else:
            out.append(word)
    check_placeholders(out, template)
    return shlex.join(out)


def check_placeholders(words: list[str], template: str) -> None:
    sample = {name: name for name in PLACEHOLDERS}
    for word in words:
        try:
            word.format(**sample)
        except (KeyError, ValueError, IndexError, AttributeError) as exc:
            raise HarnessError(
                f"bad command template {template!r}: {word!r} does not format ({type(exc).__name__}: {exc}); "
                f"placeholders are {', '.join('{' + p + '}' for p in PLACEHOLDERS)} (double braces for a literal brace)"
            ) from None


def program_problem(program: str) -> str | None:
    """Why `program` cannot be started, or None when it can."""
    if "/" in program:
        path = Path(program)
        if not path.exists():
            return f"{program} does not exist"
        if path.is_dir():
            return f"{program} is a folder, not a program"
        if not os.access(path, os.X_OK):
            return f"{program} is not executable (chmod +x, or name its interpreter first)"
        return None
    if shutil.which(program) is None:
        return f"{program!r} is not found on PATH"
    return None
