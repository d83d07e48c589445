"""MemoRizz's domain sweeps planned by harness/kit/domain_plan.py: under ci the allowed classes share an archive,
the same classes are judged with the same outcome as one class an archive (default), in fewer calls, and an
archive a target refuses is split until each failure names its class, as the class alone would have."""

from __future__ import annotations

import functools
from typing import Any

import domain_plan_kit
import pytest
from domain_plan_kit import judged
from memconform.suites.memorizz.reference import ReferenceArchiveStore

SWEEPS = ["memorizz.domain_envelope_every_class", "memorizz.domain_archive_every_class",
          "memorizz.domain_records_and_manifest_every_class", "memorizz.domain_records_every_class"]


class RefusesSomeAllowedClasses(ReferenceArchiveStore):
    """Refuses two allowed classes (warnings given as objects, a created_at with a fraction of a second) and
    stores decomposed text composed (two text classes): wrong on four classes, right on every other."""

    def problems(self, archive: Any) -> list[str]:
        found = super().problems(archive)
        manifest = archive.get("manifest") if isinstance(archive, dict) else None
        if isinstance(manifest, dict):
            if any(isinstance(w, dict) for w in manifest.get("warnings") or []):
                found.append("manifest_warnings: objects refused")
            if str(manifest.get("created_at", "")).endswith(".123456Z"):
                found.append("created_at: a fraction refused")
        return found

    def write(self, store: str, rid: str, data: dict[str, Any]) -> None:
        import unicodedata

        content = data.get("value")
        if isinstance(content, str):
            data = {**data, "value": unicodedata.normalize("NFC", content)}
        super().write(store, rid, data)


sweep = functools.partial(domain_plan_kit.sweep, "memorizz")  # (check, profile, target=None)


@pytest.mark.parametrize("check", SWEEPS)
def test_ci_judges_the_same_classes_as_default_in_fewer_calls(check: str) -> None:
    domain_plan_kit.ci_judges_as_default("memorizz", check)


@pytest.mark.parametrize("check, classes", [
    ("memorizz.domain_records_and_manifest_every_class", ["manifest.warnings:objects"]),
    ("memorizz.domain_envelope_every_class", ["manifest.created_at:fraction"]),
    ("memorizz.domain_records_every_class", ["record.data.text:nfc_nfd", "record.data.text:combining"]),
])
def test_a_refused_archive_is_split_until_each_failure_names_its_class(check: str, classes: list[str]) -> None:
    target = f"python:{__name__}:RefusesSomeAllowedClasses"
    ci, alone, titles = domain_plan_kit.packed_as_alone("memorizz", check, target)
    for title in titles:
        assert any(key in title for key in classes), title  # each failure names a class the store breaks
        assert "allowed classes" not in title and " records of " not in title  # never a whole row's
    assert judged(ci) == judged(alone)
