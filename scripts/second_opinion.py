"""Run a suite against its second-opinion implementation (tests/second_opinion/<spec>/), clean and with
each planted bug switched on, and say which checks and levels caught each bug.

    python scripts/second_opinion.py SPEC [--bug NAME]... [--out FILE.json] [--profile ci]

SPEC is a folder of tests/second_opinion/: a suite's name, or the name followed by a number for another
independent implementation of it (omp2, emp2). A folder holding launch.json is started its author's way
(omp3, memoryai3): `bug_env` names the variable that switches a bug on (else SECOND_OPINION_BUGS);
`python` is an in-process target `module:attr` imported from the folder; `server` is the argv after the
interpreter (the script first, `{port_file}` where the server writes its port), `key_env` the variable
that hands it a fresh API key (never written to a file), `env` more variables.

The implementations were written from the spec text alone by someone who had not read the suite;
bugs.json lists each planted bug with the sentence it breaks and the level it should fail. A bug is
caught when, compared with the clean run, some check newly fails (a warning counts for a SHOULD bug)
and, for a MUST bug, the level it names (or any level) newly stops being conformant.
tests/test_second_opinion.py keeps what this finds (tests/second_opinion/caught.json) true.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SO = ROOT / "tests" / "second_opinion"
HTTP_SPECS = ("memoryai", "omp")


def suite_of(folder: str) -> str:
    """omp2 -> omp: a second independent implementation of the same spec."""
    return folder.rstrip("0123456789")


class Implementation:
    """One second-opinion implementation with a set of bugs on: a target string and extra run arguments."""

    def __init__(self, folder: str, bugs: str, work: Path) -> None:
        spec = suite_of(folder)
        self.spec, self.work = spec, work
        launch_file = SO / folder / "launch.json"
        launch: dict[str, Any] = json.loads(launch_file.read_text("utf-8")) if launch_file.is_file() else {}
        self.bug_env: str = launch.get("bug_env", "SECOND_OPINION_BUGS")
        self.env = dict(os.environ, SECOND_OPINION_BUGS=bugs, SECOND_OPINION_STATE=str(work / "state"))
        self.env[self.bug_env] = bugs
        self.server: subprocess.Popen[str] | None = None
        self.args: list[str] = []
        self.cwd: Path | None = None  # where the run starts: an in-process target's module is imported from there
        if "python" in launch:
            self.target, self.cwd = f"python:{launch['python']}", SO / folder
            return
        if "server" in launch:
            self._start_own_way(folder, launch, work)
            return
        if spec not in HTTP_SPECS:
            self.target = f"cmd:{sys.executable} {SO / folder / 'app.py'} {{op}} {{input}} {{output}}"
            return
        cmd = [sys.executable, str(SO / folder / "server.py"), "--port", "0"]
        if spec == "omp":
            cmd += ["--credentials", str(work / "credentials.json")]
        self.log = work / "server.log"  # its stderr: OMP's §7 "content not logged" is checked on it
        with open(self.log, "wb") as log:
            self.server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, env=self.env, text=True)
        assert self.server.stdout is not None
        self.target = self.server.stdout.readline().strip()
        if not self.target.startswith("http://127.0.0.1:"):
            self.close()
            raise RuntimeError(f"the {spec} second opinion did not start: {self.target!r}")
        if spec == "omp":
            keys = json.loads((work / "credentials.json").read_text("utf-8"))
            (work / "omp-keys.json").write_text(json.dumps({k: keys[k] for k in ("tool_keys", "other_user_key")}))
            # it has no AI provider key (its README): extract/compress may be called
            self.args = [f"--api-key={keys['api_key']}", "--option", f"omp.credentials={work / 'omp-keys.json'}",
                         "--option", "omp.ai_endpoints=no-key", "--option", f"omp.server_log={self.log}"]

    def _start_own_way(self, folder: str, launch: dict[str, Any], work: Path) -> None:
        """A server started as its README says: its port read from the file it writes, its key handed over
        in the environment, its stderr the log OMP's §7 check reads."""
        key, port_file = secrets.token_urlsafe(32), work / "port"
        script, *rest = launch["server"]
        argv = [sys.executable, str(SO / folder / script), *(a.replace("{port_file}", str(port_file)) for a in rest)]
        env = {**self.env, **launch.get("env", {}), **({launch["key_env"]: key} if "key_env" in launch else {})}
        self.log = work / "server.log"
        with open(self.log, "wb") as log:
            self.server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=env, text=True)
        deadline = time.monotonic() + 30
        while not (port_file.is_file() and port_file.read_text("utf-8").strip().isdigit()):
            if self.server.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"the {folder} second opinion did not start: {self.log.read_text('utf-8', 'replace')[-500:]!r}")
            time.sleep(0.05)
        self.target = f"http://127.0.0.1:{int(port_file.read_text('utf-8'))}"
        if self.spec == "omp":
            self.args = [f"--api-key={key}", "--option", "omp.ai_endpoints=no-key", "--option", f"omp.server_log={self.log}"]

    def close(self) -> None:
        if self.server is not None:
            self.server.terminate()
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()


def run(spec: str, bugs: str = "", checks: tuple[str, ...] = (), profile: str = "ci",
        options: tuple[str, ...] = ()) -> dict[str, Any]:
    """memconform run against the implementation; the report's results and level verdicts."""
    work = Path(tempfile.mkdtemp(prefix=f"memconform-so-{spec}-"))
    impl = Implementation(spec, bugs, work)
    started = time.monotonic()
    try:
        argv = [str(Path(sys.executable).with_name("memconform")), "run", "--suite", suite_of(spec), "--target", impl.target,
                "--profile", profile, "--report-dir", str(work / "report"), *impl.args,
                *(a for c in checks for a in ("--check", c)), *(a for o in options for a in ("--option", o))]
        done = subprocess.run(argv, env=impl.env, cwd=impl.cwd, capture_output=True, text=True, timeout=1200)
    finally:
        impl.close()
    lines = [json.loads(line) for line in (work / "report" / "report.jsonl").read_text("utf-8").splitlines()]
    results = {r["check_id"]: r for r in lines if r.get("type") == "result"}
    footer = lines[-1] if lines and lines[-1].get("type") == "footer" else {}
    return {"exit": done.returncode, "seconds": round(time.monotonic() - started, 1), "report": str(work / "report"),
            "results": results, "levels": {lv["title"]: lv.get("status") for lv in footer.get("levels", [])},
            "output": done.stdout[-3000:] + done.stderr[-2000:]}


def failing(outcome: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(failed checks, failed warnings) of a run."""
    failed = {c for c, r in outcome["results"].items() if r["outcome"] == "failed" and not r.get("warning")}
    warned = {c for c, r in outcome["results"].items() if r["outcome"] == "failed" and r.get("warning")}
    return failed, warned


def judge(bug: dict[str, Any], clean: dict[str, Any], buggy: dict[str, Any]) -> dict[str, Any]:
    clean_failed, clean_warned = failing(clean)
    failed, warned = failing(buggy)
    new_failed, new_warned = sorted(failed - clean_failed), sorted(warned - clean_warned)
    worse = sorted(t for t, s in buggy["levels"].items() if s == "not conformant" and clean["levels"].get(t) != "not conformant")
    # a level the clean implementation already fails cannot flip: there a new failed check is the evidence
    already = sorted(t for t, s in clean["levels"].items() if s == "not conformant")
    should = bug.get("keyword", "MUST").upper() != "MUST"
    caught = bool(new_failed and (worse or already)) or bool(should and (new_failed or new_warned))
    return {"bug": bug["name"], "keyword": bug.get("keyword"), "level_named": bug.get("level"), "caught": caught,
            "new_failures": new_failed, "new_warnings": new_warned, "levels_not_conformant": worse,
            "levels_already_not_conformant": already,
            "seconds": buggy["seconds"]}


CAUGHT = SO / "caught.json"
# stateful, fuzzing, bulk checks and sweeps of a domain table (hundreds of calls): a catcher of last resort
SLOW = ("model_sequences", "fuzz_", "hostile_json", "_large", "every_", "pairwise", "domain_")


def catcher(verdict: dict[str, Any]) -> str | None:
    """The check the regression test runs for a caught bug: the quickest that caught it."""
    found = verdict["new_failures"] or verdict["new_warnings"]
    quick = [c for c in found if not any(mark in c for mark in SLOW)]
    return (quick or found or [None])[0]


def record(spec: str, verdicts: list[dict[str, Any]], options: tuple[str, ...] = ()) -> None:
    table = json.loads(CAUGHT.read_text("utf-8")) if CAUGHT.exists() else {}
    entry = table.setdefault(spec, {})
    for v in verdicts:
        entry[v["bug"]] = ({"check": catcher(v), "caught_by": v["new_failures"] + v["new_warnings"],
                            "levels": v["levels_not_conformant"], **({"options": list(options)} if options else {})}
                           if v["caught"] else
                           {"missed": "not caught by the suite: " + ", ".join(v["new_failures"] + v["new_warnings"] or ["no check failed"])})
    CAUGHT.write_text(json.dumps(table, indent=1, sort_keys=True, ensure_ascii=False) + "\n", "utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec")
    parser.add_argument("--bug", action="append", default=[])
    parser.add_argument("--out")
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--option", action="append", default=[],
                        help="a pinned reading (NAME=VALUE), for a bug that breaks the spec only under one reading")
    parser.add_argument("--record", action="store_true",
                        help="write what caught each bug to tests/second_opinion/caught.json (the regression table)")
    args = parser.parse_args()
    bugs = json.loads((SO / args.spec / "bugs.json").read_text("utf-8"))
    bugs = [b for b in bugs if not args.bug or b["name"] in args.bug]
    options = tuple(args.option)
    clean = run(args.spec, profile=args.profile, options=options)
    clean_failed, clean_warned = failing(clean)
    print(f"{args.spec} clean: exit {clean['exit']} in {clean['seconds']} s; levels {clean['levels']}")
    print(f"  failed: {sorted(clean_failed)}; warnings: {sorted(clean_warned)}")
    verdicts = []
    for bug in bugs:
        verdict = judge(bug, clean, run(args.spec, bug["name"], profile=args.profile, options=options))
        verdicts.append(verdict)
        mark = "caught" if verdict["caught"] else "MISSED"
        print(f"  {mark:6} {bug['name']} ({bug.get('keyword')}, {bug.get('level')}): new failures "
              f"{verdict['new_failures']} warnings {verdict['new_warnings']} levels {verdict['levels_not_conformant']}"
              f" [{verdict['seconds']} s]", flush=True)
    summary = {"spec": args.spec, "clean": {"exit": clean["exit"], "levels": clean["levels"], "failed": sorted(clean_failed),
                                            "warnings": sorted(clean_warned)}, "bugs": verdicts}
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1) + "\n", "utf-8")
    if args.record:
        record(args.spec, verdicts, options)
    print(f"{args.spec}: {sum(v['caught'] for v in verdicts)} of {len(verdicts)} planted bugs caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
