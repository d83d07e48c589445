"""A store that refuses a record mid-restore (the memorizz CLI's filesystem store and an id of 512 astral
characters, 2,048 bytes of file name): for a value the page leaves open the partial import is what the spec
allows after a provider failure when the committed progress is reported (errata M34); the same partial
write without the progress reported, or for a value validation must refuse, still fails."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.run.session import execute_run
from memconform.suites.memorizz.reference import ReferenceArchiveStore
from memconform.targets.base import Rejected

CHECK = "memorizz.domain_records_every_class"
BATCH = "memorizz.import_batch_middle_item"
FILE_NAME_BYTES = 255


class StoreRefused(Exception):
    pass


class FileNameLimitedStore(ReferenceArchiveStore):
    """Writes records one by one as files: an id over 255 bytes of UTF-8 is refused when its turn comes, after
    the records before it were written; the report says how many were."""

    report_progress = True

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        self.written = 0
        try:
            return super().import_archive(body, **params)
        except StoreRefused as exc:
            report = {"ok": False, "errors": [{"memory_type": str(exc), "id": self.refused, "error_type": "ValueError"}]}
            raise Rejected({**report, "imported": self.written} if self.report_progress else report, "store refused") from None

    def write(self, store: str, rid: str, data: dict[str, Any]) -> None:
        if len(rid.encode("utf-8")) > FILE_NAME_BYTES:
            self.refused = rid
            raise StoreRefused(store)
        super().write(store, rid, data)
        self.written += 1


class FileNameLimitedSilent(FileNameLimitedStore):
    """The control: the same partial write, its progress not reported."""

    report_progress = False


def failures_of(name: str, check: str = CHECK) -> list[str]:
    outcome = execute_run(["memorizz"], f"python:{__name__}:{name}", Profile.named("ci"), report_dir=None, check_ids=[check])
    return [f.title for r in outcome.results for f in r.failures]


@pytest.mark.slow
def test_the_batch_check_accepts_the_store_refusal_with_progress_and_keeps_the_rest() -> None:
    """import_batch_middle_item meets M34 too: the same store refusing the open astral id mid-restore, its progress
    reported, is the reading domain_records_every_class accepts (and the first record it committed replaced the
    held one, as that reading implies); without the progress reported it still fails, and the 512-character
    ASCII id (valid: the page allows 512) still fails in both."""
    titles = failures_of("FileNameLimitedStore", BATCH)
    assert not any("at_max_astral" in t for t in titles), titles
    assert any("record.id:at_max (valid)" in t for t in titles), titles
    silent = failures_of("FileNameLimitedSilent", BATCH)
    assert any("at_max_astral (open): the batch did none of what the spec allows" in t for t in silent), silent
    assert any("at_max_astral: a record stored before the batch was lost" in t for t in silent), silent


@pytest.mark.slow
def test_an_open_id_refused_mid_restore_with_its_progress_reported_is_the_provider_failure_reading() -> None:
    titles = failures_of("FileNameLimitedStore")
    assert not any("at_max_astral" in t and "records of it were written" in t for t in titles), titles
    silent = failures_of("FileNameLimitedSilent")
    assert any("at_max_astral" in t and "records of it were written" in t for t in silent), silent


@pytest.mark.slow
def test_an_archive_of_allowed_records_refused_names_the_record_the_errors_name() -> None:
    titles = failures_of("FileNameLimitedStore")  # its first error names the 512-character id
    refused = [t for t in titles if t.startswith("an archive") and " was refused" in t]
    # under ci a refused row is split until the failure names its record: the one the store's errors name, alone
    assert refused and all(t.endswith("its errors naming record.id:at_max") for t in refused), refused


def test_a_valid_id_refused_mid_restore_with_progress_is_one_failure_not_also_a_lost_record() -> None:
    """The memorizz CLI's run: the 512-character ASCII id (valid) refused mid-restore, two records committed and
    `imported: 2` reported. The refusal fails the batch; the held record the first one replaced (conflict=replace)
    is that committed progress, not a second fault. Without the progress reported the replacement is unaccounted
    for and still fails on its own."""
    titles = [t for t in failures_of("FileNameLimitedStore", BATCH) if "record.id:at_max" in t and "astral" not in t]
    assert len(titles) == 1 and titles[0].endswith("(valid): the batch did none of what the spec allows"), titles
    silent = [t for t in failures_of("FileNameLimitedSilent", BATCH) if "record.id:at_max:" in t]
    assert silent == ["a restore whose middle record has an id of class record.id:at_max: a record stored before the batch was lost"], silent


class FilesystemIdRules(FileNameLimitedStore):
    """memorizz 0.17.16's filesystem provider, as its own source states the rule (record ids double as file names):
    an id over 255 characters, holding '/', '\\\\' or NUL, or starting with '.' is refused when its turn comes."""

    def write(self, store: str, rid: str, data: dict[str, Any]) -> None:
        if len(rid) > 255 or any(c in rid for c in "/\\\x00") or rid.startswith("."):
            self.refused = rid
            raise StoreRefused(store)
        super().write(store, rid, data)


def test_each_id_a_file_name_store_refuses_is_named_with_the_error_that_refused_it() -> None:
    """The CLI's run said only 'was refused' for the id holding separators (a tab in it: the errors' JSON escapes
    it, so the plain id was never found there), and showed the report's preamble, not its errors."""
    outcome = execute_run(["memorizz"], f"python:{__name__}:FilesystemIdRules", Profile.named("ci"), report_dir=None,
                          check_ids=[CHECK])
    refused = [f for r in outcome.results for f in r.failures if " was refused" in f.title]
    by_class = {f.detail: f for f in refused}
    assert set(by_class) == {"record.id:at_max", "record.id:separators"}, [f.title for f in refused]
    for key, failure in by_class.items():
        assert failure.title.endswith(f"its errors naming {key}"), failure.title
        assert failure.received and failure.received[0]["error_type"] == "ValueError", failure.received
