"""The floors of pyproject.toml as pins: constraints/lowest.txt, for the lowest-supported-versions job.

Every dependency (the runtime ones and the dev extra's) pinned to the lowest release its `>=` floor
allows, so installing with `pip install -c constraints/lowest.txt -e '.[dev]'` tests the floors the
package claims. A dependency without a `>=` floor is left out (nothing claimed, nothing to test);
transitive dependencies are left to the resolver (they are other packages' floors, not ours).

    python scripts/lowest_versions.py           # rewrite constraints/lowest.txt
    python scripts/lowest_versions.py --check   # exit 1 when the file is not what the floors say
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
OUTPUT = ROOT / "constraints" / "lowest.txt"
EXTRAS = ("dev",)

HEADER = """\
# The lowest release each floor in pyproject.toml allows (written by scripts/lowest_versions.py; do
# not edit by hand: change the floor in pyproject.toml and rerun the script). Used by
# docs/ci/lowest-versions.yml: pip install -c constraints/lowest.txt -e '.[dev]'
"""


# a PEP 508 requirement as pyproject lists them: name, optional [extras], specifiers, optional ; marker
# (read with the standard library alone: the script runs on a bare Python before anything is installed)
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)")


def requirements(pyproject: dict) -> list[str]:
    project = pyproject["project"]
    listed = list(project.get("dependencies", []))
    for extra in EXTRAS:
        listed += project.get("optional-dependencies", {}).get(extra, [])
    return listed


def floor_of(requirement: str) -> tuple[str, str | None]:
    """The requirement's name and the version after `>=` (None: it claims no floor)."""
    match = REQUIREMENT.match(requirement)
    if match is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    floors = [s.strip()[2:].strip() for s in match.group(2).split(",") if s.strip().startswith(">=")]
    return match.group(1), (floors[0] if len(floors) == 1 else None)


def pins(pyproject: dict) -> list[str]:
    seen: dict[str, str] = {}
    for requirement in requirements(pyproject):
        name, floor = floor_of(requirement)
        if floor is not None:
            seen.setdefault(re.sub(r"[-_.]+", "-", name).lower(), f"{name}=={floor}")
    return sorted(seen.values(), key=str.lower)


def render(pyproject: dict) -> str:
    return HEADER + "".join(f"{line}\n" for line in pins(pyproject))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text = render(tomllib.loads(PYPROJECT.read_text("utf-8")))
    if args.check:
        current = OUTPUT.read_text("utf-8") if OUTPUT.is_file() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(ROOT)} is not what pyproject.toml's floors say: "
                  "run python scripts/lowest_versions.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {len(pins(tomllib.loads(PYPROJECT.read_text('utf-8'))))} floors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
