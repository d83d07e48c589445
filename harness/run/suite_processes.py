"""Several suites against their embedded references, side by side: one process per suite.

Each suite runs in a process of its own (its own reference, context, run state and imports: suites share
nothing), and the run's own process records what they send in the order a run one suite after another
records it: every result of the first suite, then its notes, readings, calls and level verdicts, then the
second suite's, and so on. So report.jsonl, the renderings and the exit code are those of the sequential
run; only the wall time differs (EMP's lock checks wait on purpose while the others compute).

Only a run of the embedded references goes side by side: suites run against one live target share its
state (a store, a rate limit), and run one after another.
"""

from __future__ import annotations

import os
import pickle
import queue
import shutil
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.clock import Clock
from ..core.profile import Profile
from ..core.registry import select_checks
from ..core.results import HarnessError, Result

Launch = Callable[[int, "_Job", Any], Any]

if TYPE_CHECKING:
    from .session import RunOutcome, Session

# how many suite processes at most (MEMCONFORM_SUITE_PROCESSES; 1: one suite after another in one process)
ENV_PROCESSES = "MEMCONFORM_SUITE_PROCESSES"
POLL_S = 0.5  # how often the run looks whether a suite's process is still alive while it waits for news
JOIN_S = 30.0  # how long a suite's process that closed its suite may take to end before it is stopped


def processes_allowed() -> int:
    """The most suite processes a run may start (1: none, the suites in turn in the run's own process)."""
    value = os.environ.get(ENV_PROCESSES, "").strip()
    if not value:  # one more than the cores: the cores stay busy while a suite waits (EMP's lock checks)
        return (os.cpu_count() or 1) + 1
    try:
        allowed = int(value)
    except ValueError:
        raise HarnessError(f"{ENV_PROCESSES}={value!r}: a whole number of processes (1: the suites in turn)") from None
    if allowed < 1:
        raise HarnessError(f"{ENV_PROCESSES}={value!r}: at least 1 (1: the suites in turn)")
    return allowed


def side_by_side(session: Session) -> bool:
    """Does this run go side by side? Several suites, each against its own embedded reference."""
    return session.target is None and len(session.suites) > 1 and processes_allowed() > 1


def run(session: Session) -> RunOutcome:
    """`memconform run`'s Session.run: side by side where it can, else the suites in turn. (Not for a Python
    caller's run, memconform.api: a spawned process would import the caller's script again.)"""
    if not side_by_side(session):
        return session.run()
    try:
        return run_side_by_side(session)
    finally:
        session.close()


def run_side_by_side(session: Session, launch: Launch | None = None) -> RunOutcome:
    """The suites of `session` in processes of their own, recorded as Session.run records them in turn.
    `launch(index, job, news)` starts one suite's part and returns its process (tests pass their own)."""
    import multiprocessing

    session.start()
    parts = _parts_folder(session.write_dir)
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing of this process carried over
    news: Any = spawn.Queue()
    allowed = processes_allowed()
    waiting = launch_order(session.suites, session.profile.name)
    running: dict[int, Any] = {}
    closed: set[int] = set()  # suites whose process said it closed them: their slot is free
    inbox: dict[int, list[tuple[Any, ...]]] = {i: [] for i in range(len(session.suites))}
    hars: list[Path] = []

    def spawned(index: int, job: _Job, news: Any) -> Any:
        process = spawn.Process(target=run_part, args=(index, job, news), daemon=True, name=f"memconform-suite-{job.suite}")
        process.start()
        return process

    def start_more() -> None:
        while waiting and len(set(running) - closed) < allowed:
            index, name = waiting.pop(0)
            folder = parts / name if parts is not None else None
            job = _Job(name, session.suites, session.profile, session.api_key, session.check_ids, session.command,
                       folder, session.report_dir if folder is not None else None, session.clock.run_deadline)
            running[index] = (launch or spawned)(index, job, news)

    try:
        start_more()
        for index, name in enumerate(session.suites):
            while True:
                message = inbox[index].pop(0) if inbox[index] else None
                if message is None:
                    message = _next_news(news, inbox, index, name, running)
                    if any(m[0] == "closed" for i in set(running) - closed for m in inbox[i]):
                        closed.update(i for i in running if any(m[0] == "closed" for m in inbox[i]))
                        start_more()  # a suite ahead finished while this one runs: its slot goes to the next
                    if message is None:
                        continue
                kind = message[0]
                if kind == "start":
                    if session.on_start is not None:
                        session.on_start(message[1])
                elif kind == "result":
                    session.record(_result(message[1]))
                elif kind == "not started":  # as Session.context does: the run ends here, its report complete
                    error = HarnessError(message[1])
                    session.outcome.notes.append({"suite": name, "note": f"could not start: {error}"})
                    session._open_failed[name] = error
                    session.finish()
                    raise error
                elif kind == "closed":
                    _close(session, name, parts, message[1], hars)
                    break
                else:  # "broke": a harness error outside any check; the run stops, its report truncated
                    raise HarnessError(session.redactor.text(f"{name}: the suite's process broke: {message[1]}"))
            process = running.pop(index)
            closed.discard(index)
            process.join(JOIN_S)  # it has said all it had to: it only ends now
            if process.is_alive():
                process.terminate()
            start_more()
        _merge_exchanges(session, hars)
        return session.finish()
    finally:
        for process in running.values():  # only on an error: what still runs is stopped
            process.terminate()
            process.join(5)
        news.close()
        news.join_thread()
        if parts is not None:
            shutil.rmtree(parts, ignore_errors=True)


def launch_order(suites: list[str], profile: str) -> list[tuple[int, str]]:
    """The suites (with their place in the report) in the order their processes start: the longest first by
    the seconds measured for the suite (run/estimate.py), so a long suite does not start last and end the run
    alone; the report keeps the suites' own order whatever this one is."""
    from .estimate import suite_seconds

    return sorted(enumerate(suites), key=lambda item: (-suite_seconds(item[1], profile), item[0]))


def _next_news(news: Any, inbox: dict[int, list[tuple[Any, ...]]], index: int, name: str,
               running: dict[int, Any]) -> tuple[Any, ...] | None:
    """The next message of suite `index` (others' kept in their inboxes), None if none came yet; a
    process that ended without saying it closed its suite is a harness error."""
    try:
        sender, message = news.get(timeout=POLL_S)
    except queue.Empty:
        process = running.get(index)  # None: not started yet, its slot still held by suites that started first
        if process is not None and not process.is_alive() and news.empty():
            raise HarnessError(f"{name}: the suite's process ended (exit code {process.exitcode}) before its "
                               "suite was finished; nothing of it is reported as passed") from None
        return None
    if sender == index:
        return tuple(message)
    inbox[sender].append(tuple(message))
    return None


def _result(payload: tuple[str, Any]) -> Result:
    how, data = payload
    return pickle.loads(data) if how == "pickle" else Result.from_json(data[0], strict=data[1])


def _close(session: Session, name: str, parts: Path | None, closed: dict[str, Any], hars: list[Path]) -> None:
    """A suite's end, as Session.close_suite records it: notes, readings, calls, level verdicts; its files
    (saved examples, sequences, exchanges) moved into the run's folder."""
    out = session.outcome
    out.notes += closed["notes"]
    out.readings += closed["readings"]
    if closed["calls"] is not None:
        out.calls[name] = closed["calls"]
    if closed["levels"] is not None:
        out.levels[name] = closed["levels"]
    session._closed.add(name)
    if parts is None or session.write_dir is None:
        return
    from .exchange_report import HAR_NAME
    from .workers import move_files_of

    move_files_of(parts / name, session.write_dir, session.ledger)
    har = parts / name / HAR_NAME
    if har.is_file():  # the run's exchanges.har is every suite's together, as in a run of one process
        hars.append(har)


def _merge_exchanges(session: Session, hars: list[Path]) -> None:
    if not hars or session.write_dir is None:
        return
    from ..targets.exchanges import merge_hars
    from .exchange_report import HAR_NAME

    har = session.write_dir / HAR_NAME
    if merge_hars(har, hars) and session.ledger is not None:
        session.ledger.record_as_is(har)


def _parts_folder(write_dir: Path | None) -> Path | None:
    """Where the suites' processes write their files (beside the run's folder, never in it: what is in it
    the run checks against what it wrote)."""
    if write_dir is None:
        return None
    return Path(tempfile.mkdtemp(prefix=f".{write_dir.name}.suites-", dir=write_dir.parent))


class _Job:
    """What a suite's process needs to run its part (pickled to it)."""

    def __init__(self, suite: str, suites: list[str], profile: Profile, api_key: str | None, check_ids: list[str] | None,
                 command: str, folder: Path | None, report_name: Path | None, run_deadline: float) -> None:
        self.suite, self.suites, self.profile, self.api_key = suite, suites, profile, api_key
        self.check_ids, self.command, self.folder, self.report_name = check_ids, command, folder, report_name
        self.run_deadline = run_deadline  # time.monotonic() is the machine's: the run's deadline holds across processes


def run_part(index: int, job: _Job, news: Any) -> None:
    """In a suite's process: its checks run against its reference, each result sent as it comes."""
    from .session import Session

    def send(*message: Any) -> None:
        news.put((index, message))

    try:
        # every suite of the run named, so the options are checked as the run checks them; one suite run
        session = Session(job.suites, None, job.profile, job.folder, job.api_key, job.check_ids, job.command,
                          report_name=job.report_name)
        limits = job.profile.limits
        session.clock = Clock(job.run_deadline, limits.run_deadline_s, limits.check_deadline_s)
        session.on_start = lambda check_id: send("start", check_id)
        session.on_result = lambda result: send("result", _payload(result))
        with session:
            try:
                session.context(job.suite)
            except HarnessError as exc:
                send("not started", str(exc))
                return
            for check in select_checks(job.suite, job.check_ids):
                session.run_check(check)
            session.close_suite(job.suite)
            _write_exchanges(session, job)
            out = session.outcome
            send("closed", {"notes": out.notes, "readings": out.readings, "calls": out.calls.get(job.suite),
                            "levels": out.levels.get(job.suite)})
    except BaseException as exc:  # noqa: BLE001 - told to the run, which stops with its report truncated
        send("broke", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}")
    finally:
        news.close()
        news.join_thread()  # everything sent is in the pipe before the process ends


def _payload(result: Result) -> tuple[str, Any]:
    """A result as the run's process gets it back: pickled whole, or (a value in it that cannot be pickled)
    as its report line, which is what report.jsonl holds of it anyway."""
    try:
        return ("pickle", pickle.dumps(result))
    except Exception:  # noqa: BLE001 - any value a target sent may sit in a failure
        return ("json", (result.to_json(), result.strict))


def _write_exchanges(session: Session, job: _Job) -> None:
    if job.folder is None:
        return
    from . import exchange_report

    exchange_report.write(job.folder, [c.target for c in session.contexts.values()], session.redactor)

