"""Each suite's planned calls per profile: the calls a run of the profile sends to the suite's embedded
reference, written to suites/<spec>/calls.json (the run header's `planned_calls` reads it).

    python scripts/planned_calls.py                      # ci, every suite
    python scripts/planned_calls.py --profile default --suite emp
    python scripts/planned_calls.py --check              # exit 1 when a recorded figure is off by more than 10%

The runs go one suite at a time against the references, with the profile's fixed seed, and write no report.
"""

from __future__ import annotations

import argparse
import json
import sys

TOLERANCE = 0.10  # a figure is for planning a run: a check changed since is within this, or it is rewritten


def measured(suite: str, profile: str) -> int:
    from memconform.core.profile import Profile
    from memconform.run.session import execute_run

    outcome = execute_run([suite], None, Profile.named(profile), None)
    return int(outcome.calls[suite]["calls"])


def main(argv: list[str] | None = None) -> int:
    from memconform import __version__
    from memconform.core.suite import all_suites
    from memconform.run.planned_calls import calls_file, recorded

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("--profile", action="append", default=[])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    off = []
    for suite in [s.name for s in all_suites() if not args.suite or s.name in args.suite]:
        data = recorded(suite) or {"profiles": {}}
        for profile in args.profile or ["ci"]:
            calls = measured(suite, profile)
            was = data["profiles"].get(profile)
            print(f"{suite} {profile}: {calls} calls (recorded: {was})")
            if args.check:
                if not isinstance(was, int) or abs(calls - was) > TOLERANCE * was:
                    off.append(f"{suite} {profile}: {calls} calls, recorded {was}")
                continue
            data["profiles"][profile] = calls
        if not args.check:
            data["harness_version"] = __version__
            data["profiles"] = dict(sorted(data["profiles"].items()))
            calls_file(suite).write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    for line in off:
        print(f"off by more than {TOLERANCE:.0%}: {line}; rerun scripts/planned_calls.py", file=sys.stderr)
    return 1 if off else 0


if __name__ == "__main__":
    sys.exit(main())
