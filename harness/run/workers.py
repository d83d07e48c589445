"""pytest-xdist: each worker's part of a run (its report, saved examples and sequences, exchanges) merged into one
report folder, with the level verdicts, notes and readings of the whole run."""

from __future__ import annotations

from pathlib import Path

from ..core.profile import Profile
from ..core.registry import REGISTRY
from ..core.report import Report
from ..core.results import Result
from . import report_folder
from .folder_ledger import Ledger
from .session import RunOutcome, Session


def merge_worker_reports(report_dir: Path, target: str | None, profile: Profile, api_key: str | None,
                         command: str) -> RunOutcome | None:
    """pytest-xdist: each worker wrote its checks' results under `.<report folder>.workers/<id>/`; one report
    of them all, with the level verdicts, notes and readings of the whole run (None: no worker wrote one)."""
    import shutil

    workers = report_folder.workers_folder(report_dir)
    folders = sorted(p for p in workers.glob("*") if (p / "report.jsonl").is_file())
    if not folders:
        return None
    reports = [Report.from_path(p / "report.jsonl", allow_truncated=True, allow_empty=True) for p in folders]
    lines = {line["check_id"]: line for r in reports for line in r.results}
    order = {c.id: i for i, c in enumerate(REGISTRY.all())}  # the serial run's order
    ranked = sorted(lines.values(), key=lambda line: order.get(line["check_id"], len(order)))
    suites = list(dict.fromkeys(line["suite"] for line in ranked))
    session = Session(suites, target, profile, report_dir, api_key, command=command)
    session.start()
    assert session.write_dir is not None
    for folder in folders:  # the files the workers' reports name (by the report folder's name) come along
        move_files_of(folder, session.write_dir, session.ledger)
    for line in ranked:
        session.record(Result.from_json(line, strict=profile.strict))
    for r in reports:
        footer = r.footer or {}
        session.outcome.notes += [n for n in footer.get("notes", []) if n not in session.outcome.notes]
        session.outcome.readings += [x for x in footer.get("readings", []) if x not in session.outcome.readings]
        for worker in footer.get("calls", []):  # each worker's calls to its own target, added up per suite
            total = session.outcome.calls.setdefault(worker["suite"], {})
            for name, value in worker.items():
                if name != "suite":
                    total[name] = total.get(name, 0) + value
        if r.footer is None:
            session.outcome.notes.append({"suite": suites[0] if suites else "", "note": "a worker's report was cut off"})
    outcome = _finish_with_the_workers_exchanges(session, folders)
    shutil.rmtree(workers, ignore_errors=True)
    return outcome


def _finish_with_the_workers_exchanges(session: Session, folders: list[Path]) -> RunOutcome:
    """The merged run's exchanges.har is the workers' together (the curl lines of its report point to it)."""
    from ..targets.exchanges import merge_hars
    from . import exchange_report

    assert session.write_dir is not None
    har = session.write_dir / exchange_report.HAR_NAME
    if merge_hars(har, [f / exchange_report.HAR_NAME for f in folders]) and session.ledger is not None:
        session.ledger.record_as_is(har)
    return session.finish()


def move_files_of(worker: Path, run: Path, ledger: Ledger | None) -> None:
    """A worker's saved examples and sequences into the merged run's folder (their names are unique)."""
    for kind in ("examples", "sequences"):
        for path in sorted((worker / kind).glob("*")):
            (run / kind).mkdir(exist_ok=True)
            if not (run / kind / path.name).exists():
                path.rename(run / kind / path.name)
                if ledger is not None:
                    ledger.record_as_is(run / kind / path.name)
