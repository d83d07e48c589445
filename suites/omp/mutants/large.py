"""Known-broken OMP servers at the sizes real ones meet: an import that refuses bodies over 1 MiB with a bare
page instead of the §4 envelope (with the envelope it is errata O40's reading), and an export cut short once
it grows. One broken rule each; registered at the end of mutants/table.py."""

from __future__ import annotations

from typing import Any

from memconform.suites.omp.reference.api import ApiError, OmpApi, Out, Principal, Req

IMPORT_BODY_CAP_1MB = 1024 * 1024  # Express's body parser with `limit: '1mb'`
EXPORT_PAGE = 40  # memories: one page of a paginated store query, never followed


class ImportBodyCap1Mb(OmpApi):
    """§4 "All errors use a consistent envelope": import bodies over 1 MiB are refused with Express's bare
    413 page (HTML, no envelope), so the server's own export cannot be imported back once it passes 1 MB
    and the caller is not told why in OMP's words; every smaller import works. The same limit answered
    with the §4 envelope is a reading (errata O40; tests/test_omp_one_table.py)."""

    def asgi(self, app: Any) -> Any:
        async def capped(scope: dict[str, Any], receive: Any, send: Any) -> None:
            length = dict(scope.get("headers") or ()).get(b"content-length", b"0") if scope["type"] == "http" else b"0"
            if scope["type"] == "http" and scope["method"] == "POST" and scope["path"].endswith("/v1/import") \
                    and length.isdigit() and int(length) > IMPORT_BODY_CAP_1MB:
                page = b"<html><body><h1>413 Request Entity Too Large</h1></body></html>"
                await send({"type": "http.response.start", "status": 413,
                            "headers": [(b"content-type", b"text/html"), (b"content-length", str(len(page)).encode())]})
                await send({"type": "http.response.body", "body": page})
                return
            await app(scope, receive, send)
        return super().asgi(capped)


class ImportBodyCapEnvelope(OmpApi):
    """Not a mutant: the same 1 MiB limit answered with 413 and the §4 envelope, a reading (errata O40)."""

    def op_import(self, who: Principal, req: Req) -> Out:
        if len(req.raw) > IMPORT_BODY_CAP_1MB:
            raise ApiError("payload_too_large", f"import bodies are limited to {IMPORT_BODY_CAP_1MB} bytes", status=413)
        return super().op_import(who, req)


class ExportFirstPageOnly(OmpApi):
    """§3.3 export "Export all memories": the export holds the first 40 memories only (one page of the
    store's query, never followed), so an export that grows past it is cut short without a word."""

    def export_envelope(self, docs: list[dict[str, Any]]) -> dict[str, Any]:
        return super().export_envelope(docs[:EXPORT_PAGE])


MUTANT_CLASSES: dict[str, type[OmpApi]] = {
    "import_body_cap_1mb": ImportBodyCap1Mb,
    "export_first_page_only": ExportFirstPageOnly,
}
EXPECTED_KILLS: dict[str, set[str]] = {
    "import_body_cap_1mb": {"omp.own_export_imported_back_large"},
    "export_first_page_only": {"omp.own_export_imported_back_large"},
}
EXPECTED_TITLES: dict[str, set[tuple[str, str]]] = {
    "import_body_cap_1mb": {("omp.own_export_imported_back_large", "was refused when imported back")},
    "export_first_page_only": {("omp.own_export_imported_back_large", "memories imported")},
}
# an export cut short breaks the set-up steps of the checks every mutant also runs (they error, rightly): it
# runs only the check it must fail
KILLS_ONLY = {"export_first_page_only"}
