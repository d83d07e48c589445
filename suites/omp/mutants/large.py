"""Known-broken OMP servers at the sizes real ones meet: an import that refuses bodies over 1 MiB (the
public OMP server's round trip stops short of it). One broken rule each; registered at the end of mutants/__init__.py."""

from __future__ import annotations

from memconform.suites.omp.reference.api import ApiError, OmpApi, Out, Principal, Req

IMPORT_BODY_CAP_1MB = 1024 * 1024  # Express's body parser with `limit: '1mb'`


class ImportBodyCap1Mb(OmpApi):
    """§8 "Supports export and import": import bodies over 1 MiB are refused with 413, so the server's own
    export cannot be imported back once it passes 1 MB; every smaller import works."""

    def op_import(self, who: Principal, req: Req) -> Out:
        if len(req.raw) > IMPORT_BODY_CAP_1MB:
            raise ApiError("payload_too_large", f"import bodies are limited to {IMPORT_BODY_CAP_1MB} bytes", status=413)
        return super().op_import(who, req)


MUTANT_CLASSES: dict[str, type[OmpApi]] = {
    "import_body_cap_1mb": ImportBodyCap1Mb,
}
EXPECTED_KILLS: dict[str, set[str]] = {
    "import_body_cap_1mb": {"omp.own_export_imported_back_large"},
}
EXPECTED_TITLES: dict[str, set[tuple[str, str]]] = {
    "import_body_cap_1mb": {("omp.own_export_imported_back_large", "was refused when imported back")},
}
