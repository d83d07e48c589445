"""Run the memorizz suite against the real memorizz CLI (a `cmd:` target over a temporary filesystem store).

    python scripts/run_memorizz_cli_suite.py [--report-dir DIR] [--memorizz PATH] [-- extra memconform args]

Run it with the interpreter of an environment where both memconform and memorizz are installed (memorizz
is non-commercial licensed: a separate venv or the `memorizz` tox env, never the main one). It writes a
cmd:@config into a temporary folder, runs `memconform run --suite memorizz` (run budget 900 s unless
given: the CLI starts once per operation) and removes the folder. Exit code: memconform's.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def config(root: Path, cli: str) -> dict[str, object]:
    command = " ".join(shlex.quote(p) for p in (sys.executable, str(HERE / "memorizz_cmd_target.py"), "--root",
                                                str(root), "--memorizz", cli))
    return {"default": command + " {op} {input} {output}", "timeout_s": 180}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report-dir", default="reports/memorizz-cli")
    parser.add_argument("--memorizz", default=shutil.which("memorizz", path=str(Path(sys.executable).parent))
                        or shutil.which("memorizz"))
    parser.add_argument("rest", nargs="*", help="more `memconform run` arguments (after --)")
    args = parser.parse_args(argv)
    if not args.memorizz:
        print("memorizz is not installed in this environment", file=sys.stderr)
        return 2
    from memconform.cli.main import main as memconform

    with tempfile.TemporaryDirectory(prefix="memconform-memorizz-cli-") as folder:
        cfg = Path(folder) / "memorizz-cli.json"
        cfg.write_text(json.dumps(config(Path(folder) / "store", args.memorizz)), "utf-8")
        # every operation starts the CLI (1-2 s each): the whole suite takes ~200 s under ci, near that
        # profile's 240 s run budget, so the budget is the default profile's unless one is given
        budget = [] if any(a.startswith(("--run-budget", "--run-deadline")) for a in args.rest) else ["--run-budget", "900"]
        return memconform(["run", "--suite", "memorizz", "--target", f"cmd:@{cfg}", "--report-dir", args.report_dir,
                           *budget, *args.rest])


if __name__ == "__main__":
    sys.exit(main())
