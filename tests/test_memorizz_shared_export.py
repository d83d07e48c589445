"""MemoRizz checks that send their refused archives one by one and then read one export of everything (the
rejection checks, the forbidden and open envelope classes): a failure planted on one archive among them is
named by that archive alone, as when each had an export of its own (the ci run against the reference passes
them all, and the middle records and the batch's middle item, which read each namespace alone)."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.run.session import RunOutcome, execute_run
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.reference import ReferenceArchiveStore
from memconform.targets.base import Rejected


class WritesWhatItRefuses(ReferenceArchiveStore):
    """Refuses an archive of version 2, or one whose integrity digest is upper case, but writes its records
    first; right on every other archive."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = body.get("archive") if isinstance(body, dict) else None
        if isinstance(archive, dict) and (archive.get("version") == 2 or planted_digest(archive)):
            for store, record in memorizz.records_of(archive):
                self.write(store, str(record["id"]), record["data"])
            raise Rejected({"ok": False, "errors": ["refused after writing"]})
        return super().import_archive(body, **params)


class PagedAndWritesWhatItRefuses(WritesWhatItRefuses):
    """The same, and its export of everything leaves out the newest records of each store (one page of a
    paginated query, never followed, as the mutant ExportTruncatesPastN): the records a refused archive wrote
    are past that page, so only an export of their namespace shows them."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        if not (isinstance(body, dict) and body.get("memory_id")):
            for store, records in archive["stores"].items():
                archive["stores"][store] = records[:max(0, len(records) - 2)]
        return memorizz.seal(archive)


def planted_digest(archive: dict[str, Any]) -> bool:
    digest = (archive.get("integrity") or {}).get("digest")
    return isinstance(digest, str) and digest != digest.lower()


def run(check: str, profile: str = "ci", target: str | None = f"python:{__name__}:WritesWhatItRefuses") -> RunOutcome:
    return execute_run(["memorizz"], target, Profile.named(profile), None, check_ids=[check])


@pytest.mark.parametrize("check, titles", [
    ("memorizz.rejects_unsupported_version", ["an archive with version 2 was refused, but its records were written"]),
    ("memorizz.domain_envelope_every_class", ["an archive with archive.version:two = 2 was refused",
                                              "an archive with archive.integrity.digest:uppercase = "]),
])
@pytest.mark.parametrize("mutant", ["WritesWhatItRefuses", "PagedAndWritesWhatItRefuses"])
def test_each_refused_archive_that_wrote_is_named_alone(check: str, titles: list[str], mutant: str) -> None:
    seen = {}
    for profile in ("ci", "default"):
        [result] = run(check, profile, f"python:{__name__}:{mutant}").results
        assert result.outcome.value == "failed", (profile, result.reason)
        seen[profile] = [f.title for f in result.failures]
        assert len(seen[profile]) == len(titles), (profile, seen[profile])
        for title, expected in zip(seen[profile], titles, strict=True):
            assert title.startswith(expected) and title.endswith("was refused, but its records were written"), (profile, title)
    def named(profile: str) -> list[str]:
        return [t.split(" = ")[0] for t in seen[profile]]  # the digest's value is the run's own

    assert named("ci") == named("default")


@pytest.mark.parametrize("check", ["memorizz.rejects_unsupported_version", "memorizz.rejects_duplicate_or_inconsistent_ids",
                                   "memorizz.domain_envelope_every_class", "memorizz.domain_records_every_class",
                                   "memorizz.import_batch_middle_item"])
def test_the_reference_passes_with_one_export_for_all(check: str) -> None:
    outcome = run(check, target=None)
    assert [r.outcome.value for r in outcome.results] == ["passed"], [r.failures for r in outcome.results]


# ---- the structural domain checks (domain_archive_every_class, domain_records_and_manifest_every_class) ---------

STRUCTURE_CHECKS = ["memorizz.domain_archive_every_class", "memorizz.domain_records_and_manifest_every_class"]


class FirstPageAndWritesWhatItRefuses(ReferenceArchiveStore):
    """Writes the well-formed records of an archive it refuses, and its export of everything is the first page of
    each store (the oldest PAGE records; the next pages never followed): what a refused archive wrote after that
    page shows only in an export of its namespace."""

    PAGE: int | None = 2

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        try:
            return super().import_archive(body, **params)
        except Rejected:
            archive = body.get("archive") if isinstance(body, dict) and body.get("mode") != "preview" else None
            for store, record in memorizz.records_of(archive or {}):
                if store in memorizz.STORES and isinstance(record.get("id"), str) and isinstance(record.get("data"), dict):
                    self.write(store, record["id"], record["data"])
            raise

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        archive = super().export(body, **params)
        if self.PAGE is not None and not (isinstance(body, dict) and (body.get("memory_id") or body.get("agent_id"))):
            for store, records in archive["stores"].items():
                archive["stores"][store] = records[:self.PAGE]
        return memorizz.seal(archive)


class WritesWhatItRefusesUnpaged(FirstPageAndWritesWhatItRefuses):
    """The same writes, and an export of everything that shows everything: what the paged one must match."""

    PAGE = None


class FirstPageOnly(FirstPageAndWritesWhatItRefuses):
    """The control: the same paged export, and a refused archive writes nothing."""

    def import_archive(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return ReferenceArchiveStore.import_archive(self, body, **params)


@pytest.mark.parametrize("check", STRUCTURE_CHECKS)
def test_records_a_refused_archive_wrote_past_the_export_page_are_found_and_named(check: str) -> None:
    """Before the guard these checks trusted that one export of everything: the records were past its page, so
    every refused class 'wrote nothing' and the check passed."""
    [result] = run(check, target=f"python:{__name__}:FirstPageAndWritesWhatItRefuses").results
    assert result.outcome.value == "failed", (result.outcome, result.reason)
    titles = [f.title for f in result.failures]
    assert titles and all(t.endswith("was refused, but its records were written") for t in titles), titles
    assert all(f.received and f.expected == 0 for f in result.failures)
    # every class the unpaged export names, the paged one names too: the page hid none of them
    [unpaged] = run(check, target=f"python:{__name__}:WritesWhatItRefusesUnpaged").results
    assert sorted(titles) == sorted(f.title for f in unpaged.failures)


@pytest.mark.parametrize("target", [None, f"python:{__name__}:FirstPageOnly"])
@pytest.mark.parametrize("check", STRUCTURE_CHECKS)
def test_the_reference_and_a_paged_export_that_hides_nothing_written_pass(check: str, target: str | None) -> None:
    outcome = run(check, target=target)
    assert [r.outcome.value for r in outcome.results] == ["passed"], [r.failures for r in outcome.results]
