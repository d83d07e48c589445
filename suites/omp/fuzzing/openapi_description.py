"""memconform's OpenAPI description of OMP (fixtures/omp/openapi.yaml) as the fuzzer uses it: adapted to the
run's readings (options) and to what may be called (extract/compress only without an AI key, errata O11),
and, for valid data, with request bodies closed to undescribed fields (errata O28).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.kit.fixtures_loader import fixture_root
from memconform.suites.omp import client

DESCRIPTION = "omp/openapi.yaml"
AI_PATHS = ("/v1/extract", "/v1/compress")
BODY_METHODS = ("post", "put")


def ai_allowed(ctx: CheckContext) -> bool:
    """Extract/compress only where the target states it has no AI key (errata O11)."""
    return ctx.option("ai_endpoints") != "skip" and client.facts(ctx).ai_key_configured is False


@functools.cache
def shipped_description() -> dict[str, Any]:
    """The description as shipped (parsed once: YAML parsing costs more than the fuzzing of a ci run)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    parsed: dict[str, Any] = yaml.load((fixture_root() / DESCRIPTION).read_text("utf-8"), Loader=loader)  # noqa: S506
    return parsed


REQUEST_SCHEMAS = ("MemoryCreate", "MemoryUpdate", "SourceRequest", "SearchRequest", "TranscriptRequest")


def closed_requests(doc: dict[str, Any]) -> dict[str, Any]:
    """The description with request bodies closed to undescribed fields (valid data only; responses untouched)."""
    schemas = doc["components"]["schemas"]
    for name in REQUEST_SCHEMAS:
        if name in schemas and "additionalProperties" not in schemas[name]:
            schemas[name]["additionalProperties"] = False
    return doc


def description(ctx: CheckContext) -> dict[str, Any]:
    """The shipped description, adapted to the run's readings (options) and to what may be called."""
    doc = copy.deepcopy(shipped_description())
    if not ai_allowed(ctx):
        for path in AI_PATHS:
            doc["paths"].pop(path, None)
    if ctx.option("limit_over_max") != "reject":
        # errata O9 option: limit=101 may be served as 100 (the default accepts both), so it is not invalid data
        doc["components"]["parameters"]["limit"]["schema"].pop("maximum", None)
        doc["components"]["schemas"]["SearchRequest"]["properties"]["limit"].pop("maximum", None)
    if ctx.option("conflict_in") == "body":
        # errata O1 option: the strategy is a body field, and a query parameter would be ignored
        post = doc["paths"]["/v1/import"]["post"]
        conflict = next(p for p in post.pop("parameters") if p["name"] == "conflict")
        doc["components"]["schemas"]["ImportRequest"]["properties"]["conflict"] = conflict["schema"]
    if ctx.option("error_message") == "required":
        # errata O15 pinned: every error carries its message
        doc["components"]["schemas"]["Error"]["required"] = ["error", "message"]
    if ctx.option("malformed_json_status") == "422":
        for item in doc["paths"].values():
            for method in BODY_METHODS:
                item.get(method, {}).get("responses", {}).pop("400", None)
    return doc
