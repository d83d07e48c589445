"""Every write path tried with every class of every field of the domain table (suites/omp/domain.json):
create, partial update, and import batches in which one item in the middle is of one class."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.kit import domain, domain_plan
from memconform.suites.omp import client, controls, deviations, domain_data, readings, rules, table
from memconform.suites.omp.deviations import STORES_INVALID
from memconform.suites.omp.domain_writing import (
    STILL_SERVED,
    carry,
    expires_in_past,
    observe_expiry,
    others_kept,
    packable,
    patch_as_body,
    patch_for,
    together,
    top_field,
    unchanged,
    update_expectation,
)
from memconform.suites.omp.importing import import_report_failures, import_with
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Reply

IMPORT_BATCH = 40  # valid items per import: small files, so only the classes decide


def judge_refusal(ctx: CheckContext, case: domain_data.Case, answer: Reply) -> Iterator[Failure]:
    """A value the spec forbids: 422 validation_error with the §4 envelope."""
    for failure in rules.validation_failures(ctx, answer):
        yield Failure(f"{case.label}: {failure.title}", failure.received, failure.expected, failure.path, failure.detail)


def judge_open(ctx: CheckContext, case: domain_data.Case, answer: Reply, stored: dict[str, Any] | None) -> Iterator[Failure]:
    """A value the spec is silent on: accepted (and then a sound Memory) or refused with a 4xx envelope; never a 5xx."""
    if answer.ok:
        if stored is not None:
            yield from domain_data.read_back_failures(case, stored, "$")
        return
    for failure in rules.error_failures(ctx, answer, None, None):
        yield Failure(f"{case.label}: {failure.title}", failure.received, failure.expected, failure.path, failure.detail)


def never_stored(ctx: CheckContext, refused: list[domain_data.Case], what: str) -> Iterator[Failure]:
    """Refused values left nothing behind: one export, every refused marker absent."""
    if not refused:
        return
    text = {str(m.get("content")) for m in client.exported(ctx)}
    kept = [case.label for case in refused if any(case.marker in t for t in text)]
    if kept:
        yield Failure(f"{what}: a refused value was stored anyway", kept[:5], "nothing stored", "$.memories", f"{len(kept)} in all")


@SUITE.check(sweep=True, section="§3.3", keyword="MUST", level="core", sentence="Create a new memory.")
def domain_create_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """POST /v1/memories with each value of each class of each field alone (the rest the suite's usual
    memory): allowed values created and read back as written, forbidden ones 422 and not stored, values
    the spec is silent on either way, never a 5xx. Under ci allowed values of different fields share a
    memory (harness/kit/domain_plan.py; one refused is split until the failure names its value)."""
    controls.control(client.create(ctx, client.memory(ctx, "domain-create")), "creating the suite's usual memory")
    refused: list[domain_data.Case] = []
    dropped: list[domain_data.Case] = []

    def attempt(row: list[domain_data.Case]) -> list[Failure]:
        found = list(_created_row(ctx, row) if len(row) > 1 else _created_alone(ctx, row[0], refused, dropped))
        domain_data.ledger(ctx).judge(case.cls.key for case in row)
        return found

    rows = domain_plan.rows_for(list(domain_data.cases(ctx, domain_data.WRITE_FIELDS_CREATE, "dc")), ctx.profile.name,
                                group=lambda case: "allowed" if packable(ctx, case) else None, slot=top_field)
    yield from domain_plan.judge_rows(rows, attempt)
    yield from never_stored(ctx, refused, "create")
    yield from dropped_not_stored(ctx, dropped, "create")


def _created_row(ctx: CheckContext, row: list[domain_data.Case]) -> Iterator[Failure]:
    answer = client.create(ctx, together(row), quiet=True)
    if not answer.ok or not isinstance(answer.body, dict):
        keys = ", ".join(case.cls.key for case in row[:4])
        yield Failure(f"{len(row)} allowed values in one memory ({keys} ...): refused", answer.brief(), "201 Created", "$")
        return
    for case in row:
        yield from domain_data.read_back_failures(case, answer.body, "$")


def _created_alone(ctx: CheckContext, case: domain_data.Case, refused: list[domain_data.Case], dropped: list[domain_data.Case]) -> Iterator[Failure]:
    answer = client.create(ctx, case.body, quiet=True)
    stored = answer.body if answer.ok and isinstance(answer.body, dict) else None
    expect = domain_data.expectation(ctx, case.cls)
    if answer.status < 500:
        domain_data.observe_open(ctx, case.cls, answer.ok and domain_data.kept_instant(case, stored), 400 <= answer.status < 500, answer.brief())
    if expect == "valid":
        if not answer.ok or stored is None:
            yield Failure(f"{case.label}: an allowed value was refused", answer.brief(), "201 Created", "$")
        else:
            yield from domain_data.read_back_failures(case, stored, "$")
    elif expect == "invalid" and field_dropped(ctx, readings.CREATE, case.body, answer):
        dropped.append(case)  # errata O38: a server without embeddings drops the field; judged on the export
    elif expect == "invalid":
        if answer.ok:  # stored: what the export then holds of it is this deviation, not the export's
            key = f"{deviations.CREATE_STORES_INVALID}:domain"
            established.establish(ctx, key, f"a create stored a memory §2.1 forbids ({case.label})")
            deviations.sent_item(ctx, case.body, key)
        yield from judge_refusal(ctx, case, answer)
        refused.append(case)
    else:
        yield from judge_open(ctx, case, answer, stored)


def field_dropped(ctx: CheckContext, route: tuple[str, str], body: Any, answer: Reply) -> bool:
    """An invalid value accepted because the server does not support its field and dropped it (OMP's table
    of readings, errata O38: accepted, and the memory served back holds no such field): recorded."""
    return bool(table.TABLE.observe(ctx, readings.Asked(*route, body=body), answer, readings.pins(ctx), points=("O38",)))


def dropped_not_stored(ctx: CheckContext, dropped: list[domain_data.Case], what: str) -> Iterator[Failure]:
    """A field said dropped is not in the export either: the value was not stored anyway."""
    if not dropped:
        return
    exported = client.exported(ctx)
    kept = [case.label for case in dropped for m in exported
            if case.marker in str(m.get("content")) and m.get("embedding") is not None]
    if kept:
        yield Failure(f"{what}: an embedding the server answered without (dropped) is in the export", kept[:5],
                      "no embedding stored (errata O38)", "$.memories", f"{len(kept)} in all")




@SUITE.check(sweep=True, section="§3.3", keyword="MUST", level="core",
             sentence="Update an existing memory. All fields are optional — only provided fields are updated.")
def domain_update_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """PUT /v1/memories/:id with each value of each class as a one-field patch; the "absent" class as a
    patch of every other field. Allowed values change that field and nothing else, forbidden ones 422
    and leave the memory as it was; never a 5xx. Under ci allowed values of different fields go in one
    patch of a memory of their own (harness/kit/domain_plan.py; one refused is split until the failure
    names its value)."""
    every = list(domain_data.cases(ctx, domain_data.WRITE_FIELDS_CREATE, "du"))
    packed = [case for case in every if domain_plan.packs(ctx.profile.name) and packable_patch(ctx, case)]
    yield from domain_plan.judge_rows(domain_plan.pack(packed, top_field), lambda row: list(_updated_together(ctx, row)))
    alone = {id(case) for case in every} - {id(case) for case in packed}
    for field_id in domain_data.WRITE_FIELDS_CREATE:
        cases = [case for case in every if case.cls.field == field_id and id(case) in alone]
        if not cases:
            continue
        made = client.created(ctx, client.memory(ctx, f"du-{field_id}"))
        before = client.get(ctx, made["id"], quiet=True).accepted_json(dict, "reading the memory to update")
        for case in cases:
            patch = patch_for(case, before)
            answer = client.update(ctx, made["id"], patch, quiet=True)
            after = client.get(ctx, made["id"], quiet=True)
            now = after.body if after.ok and isinstance(after.body, dict) else None
            as_body = domain_data.Case(case.cls, case.value, patch_as_body(before, patch), case.marker)
            if answer.status < 500:
                kept = answer.ok and domain_data.kept_instant(as_body, now)
                domain_data.observe_open(ctx, case.cls, kept, 400 <= answer.status < 500, answer.brief())
            if answer.ok and expires_in_past(patch):
                seen = observe_expiry(ctx, case.label, after)
                if seen.failure:
                    yield seen.failure
                if not seen.fits(STILL_SERVED):  # gone (or unreadable): go on with a fresh memory
                    domain_data.ledger(ctx).judge([case.cls.key])
                    made = client.created(ctx, client.memory(ctx, f"du-{field_id}-again"))
                    before = client.get(ctx, made["id"], quiet=True).accepted_json(dict, "reading the memory to update")
                    continue
            if now is None:
                yield Failure(f"{case.label}: the memory is gone after an update", after.brief(), "200 and the memory", "$")
                return
            expect = update_expectation(ctx, case)
            if expect == "invalid":
                if answer.ok and now != before:  # stored: the export then holds it
                    established.establish(ctx, deviations.UPDATE_STORES_INVALID, f"an update stored a value §2.1 forbids ({case.label})")
                    deviations.sent_item(ctx, {**patch, "id": made["id"]}, deviations.UPDATE_STORES_INVALID)
                if not (field_dropped(ctx, readings.UPDATE, patch, answer) and field_dropped(ctx, readings.UPDATE, patch, after)):
                    yield from judge_refusal(ctx, case, answer)  # (errata O38: a field dropped is no refusal owed)
                yield from unchanged(case, before, now)
            elif expect == "valid" and case.value is not None:
                if not answer.ok:
                    yield Failure(f"{case.label}: an allowed value was refused", answer.brief(), "200 OK", "$")
                else:
                    yield from domain_data.read_back_failures(as_body, now, "$")
                    yield from others_kept(case, before, now, patch)
            else:  # an open timestamp accepted is read back as the same instant (errata O53); other open values as served
                yield from judge_open(ctx, as_body, answer, now if domain_data.open_point(case.cls) in (domain_data.OTHER_FORM, domain_data.UTC_OFFSET) else None)
            domain_data.ledger(ctx).judge([case.cls.key])
            before = now  # the memory as this update left it is what the next one starts from


def packable_patch(ctx: CheckContext, case: domain_data.Case) -> bool:
    """An allowed value that sets its field (not absent, not null, not an expiry already gone) and that no
    errata point reads: it goes in a patch beside others."""
    return (update_expectation(ctx, case) == "valid" and packable(ctx, case)
            and case.value is not domain.ABSENT and case.value is not None
            and not expires_in_past({top_field(case): case.body.get(top_field(case))}))


def _updated_together(ctx: CheckContext, row: list[domain_data.Case]) -> Iterator[Failure]:
    """A fresh memory patched with every case's value at once: the patch accepted, each field read back
    as written and every field not in the patch kept."""
    made = client.created(ctx, client.memory(ctx, "du-row"))
    before = client.get(ctx, made["id"], quiet=True).accepted_json(dict, "reading the memory to update")
    patch: dict[str, Any] = {}
    for case in row:
        one = patch_for(case, before)
        if "." in top_field(case) and "source" in patch:
            carry(patch, case)  # a second source field: set in the source the first one's patch holds
        else:
            patch.update(copy.deepcopy(one))
    answer = client.update(ctx, made["id"], patch, quiet=True)
    after = client.get(ctx, made["id"], quiet=True)
    now = after.body if after.ok and isinstance(after.body, dict) else None
    domain_data.ledger(ctx).judge(case.cls.key for case in row)
    label = row[0].label if len(row) == 1 else f"{len(row)} allowed values in one patch ({', '.join(x.cls.key for x in row[:4])} ...)"
    if not answer.ok:
        yield Failure(f"{label}: an allowed value was refused", answer.brief(), "200 OK", "$")
        return
    if now is None:
        yield Failure(f"{label}: the memory is gone after an update", after.brief(), "200 and the memory", "$")
        return
    for case in row:
        yield from domain_data.read_back_failures(domain_data.Case(case.cls, case.value, patch_as_body(before, patch), case.marker), now, "$")
    moved = sorted(k for k in before if k not in patch and k != "updated_at" and not domain_data.same_json(before.get(k), now.get(k)))
    if moved:
        yield Failure(f"{label}: a field not in the patch changed", {k: now.get(k) for k in moved[:3]},
                      {k: before.get(k) for k in moved[:3]}, "$")


@SUITE.check(sweep=True, section="§3.3", keyword="MUST", level="core", sentence="Import memories from an OMP export file.")
def domain_import_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """POST /v1/import: the allowed classes of every field in small batches, all imported; each other
    class as the middle item of a three-item batch, then what the spec allows: the item imported, or
    reported in errors with the two beside it imported, or the whole file refused with a 4xx and nothing
    imported; never a 5xx, and a memory stored before neither lost nor changed."""
    keep = client.created(ctx, client.memory(ctx, "di-keep"))
    before = client.get(ctx, keep["id"]).accepted_json(dict, "reading the memory that must survive")
    every = list(domain_data.cases(ctx, domain_data.WRITE_FIELDS_CREATE + domain_data.IMPORT_ONLY_FIELDS, "di", full=True))
    plain = [case for case in every if domain_data.expectation(ctx, case.cls) == "valid" and not chokes(case.cls)]
    stored_markers: dict[str, str] = {}  # marker -> what must hold: "stored", "absent", "either"
    for start in range(0, len(plain), IMPORT_BATCH):
        batch = plain[start:start + IMPORT_BATCH]
        answer = import_with(ctx, [case.body for case in batch])
        yield from _plain_batch_failures(answer, batch)
        for case in batch:
            stored_markers[case.marker] = "stored" if answer.ok and case.marker in str(case.body.get("content")) else "either"
            domain_data.ledger(ctx).judge([case.cls.key])
    for case in (case for case in every if domain_data.expectation(ctx, case.cls) != "valid" or chokes(case.cls)):
        goods = [client.full_memory(ctx, f"dig{i}") for i in range(2)]
        deviations.sent_import(ctx, case.body)
        answer = import_with(ctx, [goods[0], case.body, goods[1]])
        yield from _batch_failures(ctx, case, answer, stored_markers, goods)
        domain_data.ledger(ctx).judge([case.cls.key])
    yield from _envelope_failures(ctx, stored_markers)
    yield from _stored_as_promised(ctx, stored_markers)
    after = client.get(ctx, keep["id"])
    if not after.ok or not isinstance(after.body, dict):
        yield Failure("a memory stored before the imports was lost", after.brief(), "still there", "$")
    elif not domain_data.same_json({k: v for k, v in before.items() if k != "updated_at"}, {k: v for k, v in after.body.items() if k != "updated_at"}):
        yield Failure("a memory stored before the imports was changed", str(after.body)[:160], str(before)[:160], "$")


CHOKING = ("absent", "null", "empty", "below_max", "at_max", "at_max_bmp", "at_max_astral", "at_max_items", "at_max_keys")


def chokes(vc: domain.ValueClass) -> bool:
    """A class real implementations choke on although the spec allows it: an optional field left out or
    null, a value at its limit. Such an item goes alone into the middle of a batch of its own."""
    return vc.id in CHOKING


def _plain_batch_failures(answer: Reply, batch: list[domain_data.Case]) -> Iterator[Failure]:
    if answer.status >= 500:
        yield Failure(f"an import of {len(batch)} allowed values: a server error", answer.status, "200 and every item imported", "$",
                      ", ".join(case.label for case in batch[:4]))
        return
    yield from import_report_failures(answer)
    if not answer.ok:
        yield Failure(f"an import of {len(batch)} allowed values was refused", answer.brief(), "200 and every item imported",
                      "$", ", ".join(case.label for case in batch[:4]))


def _batch_failures(ctx: CheckContext, case: domain_data.Case, answer: Reply, expected: dict[str, str],
                    goods: list[dict[str, Any]]) -> Iterator[Failure]:
    label = f"import [valid, {case.label}, valid]"
    expect = domain_data.expectation(ctx, case.cls)
    if answer.status >= 500:
        yield Failure(f"{label}: a server error", answer.status, "200 with the item reported, or a 4xx", "$",
                      answer.raw[:160].decode("utf-8", "replace"))
        expected.update({case.marker: "either", goods[0]["content"]: "either", goods[1]["content"]: "either"})
        return
    if not answer.ok:  # the whole file refused: nothing of it may be stored
        domain_data.observe_open(ctx, case.cls, False, 400 <= answer.status < 500, answer.brief())
        if expect == "valid":
            yield Failure(f"{label}: a file of allowed items was refused", answer.brief(), "200 and all three imported", "$")
        for failure in rules.error_failures(ctx, answer, None, None):
            yield Failure(f"{label}: {failure.title}", failure.received, failure.expected, failure.path)
        expected.update({case.marker: "absent", goods[0]["content"]: "absent", goods[1]["content"]: "absent"})
        return
    yield from import_report_failures(answer)
    body = answer.body if isinstance(answer.body, dict) else {}
    errors: list[Any] = body["errors"] if isinstance(body.get("errors"), list) else []
    named = [e for e in errors if isinstance(e, dict) and (e.get("index") == 1 or e.get("id") == case.body.get("id"))]
    reported = bool(named) or body.get("imported") == 2
    domain_data.observe_open(ctx, case.cls, not reported, reported, {k: body.get(k) for k in ("imported", "skipped", "errors")})
    if expect == "valid" and reported:
        yield Failure(f"{label}: an allowed item was not imported", {k: body.get(k) for k in ("imported", "skipped", "errors")},
                      '{"imported": 3, "skipped": 0, "errors": []}', "$")
    if expect == "invalid" and not reported and import_dropped_field(ctx, case):
        expected.update({goods[0]["content"]: "stored", goods[1]["content"]: "stored", case.marker: "either"})
        return  # errata O38: the item imported without the field a server without embeddings drops
    if expect == "invalid" and not reported:
        established.establish(ctx, STORES_INVALID, f"an import stored an invalid memory ({case.label})")
        yield Failure(f"{label}: a forbidden item was neither refused nor reported", {k: body.get(k) for k in ("imported", "skipped", "errors")},
                      '{"imported": 2, "errors": [{"index": 1, ...}]}', "$.errors")
    findable = case.marker in str(case.body.get("content"))
    expected.update({goods[0]["content"]: "stored", goods[1]["content"]: "stored",
                     case.marker: "absent" if expect == "invalid" or reported
                     else "stored" if findable and expect == "valid" else "either"})


def import_dropped_field(ctx: CheckContext, case: domain_data.Case) -> bool:
    """An import item whose only fault is a field the server does not support, imported without it (O38):
    the exported memory holding its marker has no such field."""
    request = readings.Asked(*readings.IMPORT, body=case.body)
    if not readings.unsupported_embedding(request):
        return False
    found = [m for m in client.exported(ctx) if case.marker in str(m.get("content"))]
    return len(found) == 1 and field_dropped(ctx, readings.IMPORT, case.body, Reply(status=200, body=found[0], raw=b""))


def _stored_as_promised(ctx: CheckContext, expected: dict[str, str]) -> Iterator[Failure]:
    contents = [str(m.get("content")) for m in client.exported(ctx)]
    missing = [m for m, want in expected.items() if want == "stored" and not any(m in t for t in contents)]
    extra = [m for m, want in expected.items() if want == "absent" and any(m in t for t in contents)]
    if missing:
        yield Failure("imported items (reported imported, or beside a reported one) are not in the export", missing[:4],
                      "every item the report counts as imported", "$.memories", f"{len(missing)} in all")
    if extra:
        yield Failure("items of a refused file, or reported as errors, are in the export", extra[:4], "not stored", "$.memories",
                      f"{len(extra)} in all")


def _envelope_failures(ctx: CheckContext, expected: dict[str, str]) -> Iterator[Failure]:
    """Each class of the export envelope's fields around one valid memory: allowed ones imported, a file
    without its memories array refused, the others either way; never a 5xx."""
    for field in domain_data.table().for_operation("import", where=("envelope",)):
        name = field.id.split(".", 1)[1]
        for vc in field.classes:
            mem = client.full_memory(ctx, f"die-{vc.key}")
            doc = client.export_file([mem])
            value = vc.value()
            if value is domain.ABSENT:
                doc.pop(name, None)
            else:
                doc[name] = value
            answer = client.import_(ctx, doc)
            label = f"import of a file with {vc.key} = {value!r:.40}"
            if answer.status >= 500:
                yield Failure(f"{label}: a server error", answer.status, "200, or a 4xx", "$", answer.raw[:160].decode("utf-8", "replace"))
            elif vc.expect == "valid" and not answer.ok:
                yield Failure(f"{label}: refused", answer.brief(), "200", "$")
            elif vc.expect == "invalid":
                for failure in rules.validation_failures(ctx, answer):
                    yield Failure(f"{label}: {failure.title}", failure.received, failure.expected, failure.path)
            elif not answer.ok:
                for failure in rules.error_failures(ctx, answer, None, None):
                    yield Failure(f"{label}: {failure.title}", failure.received, failure.expected, failure.path)
            if name != "memories":
                imported = answer.ok and isinstance(answer.body, dict) and answer.body.get("imported") == 1
                expected[mem["content"]] = "stored" if imported else "absent" if not answer.ok else "either"
            domain_data.ledger(ctx).judge([vc.key])
