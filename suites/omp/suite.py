"""Open Memory Protocol v0.1 suite: the SuiteSpec, its levels from the §8 conformance clause and §5.

The checks register from their own modules, imported at the end in run order: shapes, list,
update/delete, search, export/import/health, auth, bad input, concurrency, OMP-Search/Full, the 0.2
AI endpoints and §7, the model-based run, schemathesis. Every memory the suite writes carries
`ctx.unique(...)` content and the run tag, so the suite works on a non-empty instance, and one
sweep deletes them at the end (controls.py); readings of ambiguous text are in suites/omp/errata.md (O1..).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memconform.core import history_counts
from memconform.core.check_context import CheckContext
from memconform.core.results import HarnessError
from memconform.core.suite import Later, Level, SuiteSpec
from memconform.kit.fixtures_loader import spec_text_path
from memconform.suites.omp import format as omp
from memconform.suites.omp.detect import detect as detect_export
from memconform.suites.omp.options import OPTIONS


def claimed_levels(ctx: CheckContext) -> set[str] | None:
    """The levels health claims: cumulative, OMP-Full implies OMP-Search implies OMP-Core. The AI and §7 levels
    apply whatever it claims (Level.always_judged), so they are not in the claim."""
    from memconform.suites.omp import client, controls
    from memconform.suites.omp.rules import declared_level
    from memconform.targets import is_http

    if not is_http(ctx.target):
        return None  # every check then says it needs an http:// target
    controls.track(ctx)
    answer = client.health(ctx)
    level = declared_level(answer.body)
    if level is None and ctx.option("assume_level") != "none":
        level = ctx.option("assume_level")
        ctx.state(client.OmpRun).level_note = f"health names no level; option assume_level={level} applies"
    elif level is None:
        ctx.state(client.OmpRun).level_note = "health names no level: only the OMP-Core checks run (option omp.assume_level)"
    else:
        ctx.state(client.OmpRun).level_note = f"health declares {level!r}"
    upto = omp.LEVEL_ORDER.index(level) + 1 if level else 1
    return set(omp.LEVEL_ORDER[:upto])


def preflight(ctx: CheckContext) -> None:
    """A missing or refused global key would turn every check into noise: say so once, up front."""
    from memconform.suites.omp import client, controls
    from memconform.targets import is_http

    if not is_http(ctx.target):
        return  # every check says it needs an http:// target
    if not ctx.target.api_key:
        raise HarnessError("OMP needs the target's global API key (§3.2): pass --api-key or set MEMCONFORM_API_KEY")
    controls.track(ctx)
    answer = client.preflight_send(ctx, "GET", "/memories", params={"limit": "1"}, record=False, quiet=True)
    if answer.status == 401:
        raise HarnessError(f"the target refuses the given API key: GET /v1/memories?limit=1 answered 401 "
                           f"{answer.raw[:120]!r}; pass the right one with --api-key")


def _probe(target: Any) -> bool:
    """`memconform run` without --suite: an OMP server answers `GET /v1/health` (no key, §3.3) with
    its status and the protocol version."""
    from memconform.targets import is_http
    from memconform.targets.base import Request, Route

    if not is_http(target):
        return False
    path = ("" if target.base_url.endswith(omp.BASE) else omp.BASE) + "/health"
    try:
        reply = target.call(Request("GET /health", route=Route("GET", path, statuses="returned"), auth=False))
    except Exception:  # noqa: BLE001  refused, absent, garbage: not an OMP server
        return False
    body = reply.body
    return bool(reply.status == 200 and isinstance(body, dict) and isinstance(body.get("status"), str)
                and isinstance(body.get("version"), str))


def _run_notes(ctx: CheckContext) -> list[str]:
    """The client's run notes; the client is the run's code, imported when a run ends (not to name a format)."""
    from memconform.core import established
    from memconform.suites.omp import client

    return [*client.run_notes(ctx), *established.run_notes(ctx)]


# §8: "An implementation is OMP-Core conformant if it: Implements all endpoints in §3.3 with correct
# HTTP methods and status codes; Returns responses matching the schemas in §2.1 and §3.3; Supports
# keyword search (mode: "keyword") in POST /v1/memories/search; Supports export and import via GET
# /v1/export and POST /v1/import; Implements Bearer token authentication as described in §3.2;
# Returns errors in the format described in §4" (errata O29 maps each bullet to these checks).
CORE_CLAUSE = (
    # endpoints, methods and status codes
    "create_returns_201", "get_unknown_id_404", "update_partial", "delete_then_gone", "list_response_shape",
    "unknown_id_every_route", "health_without_key",
    # response schemas of §2.1 and §3.3
    "memory_id_format", "memory_content_and_type", "memory_tags_namespace_metadata", "memory_timestamps_utc",
    "memory_source_object", "memory_reads_as_written",
    # keyword search
    "search_keyword", "search_keyword_case_insensitive", "search_keyword_all_words", "search_filters",
    # export and import
    "export_envelope", "import_report_shape", "import_skip_default", "import_overwrite", "import_duplicate",
    "export_import_round_trip",
    # bearer authentication
    "auth_missing_key_401", "auth_wrong_key_401",
    # §4 errors
    "malformed_json_rejected", "rejects_wrong_types",
)
# §5: "OMP-Search: OMP-Core + semantic search with embeddings"
SEARCH_CLAUSE = ("semantic_search",)
# §5: "OMP-Full: OMP-Search + namespacing, per-tool API keys, multi-user support"
FULL_CLAUSE = ("list_filter_namespace", "search_filter_namespace", "tool_key_own_tool", "tool_key_forbidden_other_write",
               "tool_key_forbidden_other_read", "users_isolated")

SUITE = SuiteSpec(
    options=OPTIONS,  # the readings a run can pin (options.py)
    checks_module="memconform.suites.omp.checks",  # imported when the checks are asked for, not to name a format
    document_checks=("export_document",),  # every document check: all `memconform validate` imports
    spec_text=spec_text_path('open-memory-protocol-v0.1.md'), requirements=Path(__file__).with_name("requirements.json"),
    name=omp.SUITE,
    spec_title=omp.SPEC,
    version=omp.VERSION,
    levels=[
        Level("core", "OMP-Core", clause=CORE_CLAUSE),
        Level("search", "OMP-Search", requires=("core",), clause=SEARCH_CLAUSE),
        Level("full", "OMP-Full", requires=("search",), clause=FULL_CLAUSE),
        Level("ai", "0.2 extract/compress (no AI key configured)", optional=True, always_judged=True),
        Level("security", "§7 Security considerations", always_judged=True),
    ],
    claimed_levels=claimed_levels,
    run_notes=history_counts.with_counts(_run_notes),
    preflight=preflight,
    reference=Later("memconform.suites.omp.reference.serve:reference_target"),
    portability=Later("memconform.suites.omp.portability.declared:portable"),
    interop=Later("memconform.suites.omp.interop:pairing"),
    mutants=Later("memconform.suites.omp.mutants"),
    serve=Later("memconform.suites.omp.reference.serve:serve_reference"), probe=_probe,
    # `memconform validate export.json`: a GET /v1/export body (checks/export_document.py)
    detect=detect_export,
    hints=("omp_version", "server", "memories"),
)



# the check families register from their own modules, in run order
