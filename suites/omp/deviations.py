"""The deviations an OMP run can establish and a later check's failure can be explained by
(core/established.py): one name each, shared by the check that establishes it and those it explains."""

STORES_INVALID = "omp.import_stores_invalid"  # an import stored a memory §2.1 forbids
FILTERS_AFTER_PAGING = "omp.list_filters_after_paging"  # list filters applied to the page, not before paging
CONFLICT_FROM_BODY = "omp.conflict_from_body_only"  # the import strategy read from the body, not the query
