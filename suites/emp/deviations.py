"""The deviations an EMP run can establish and a later check's failure can be explained by
(core/established.py): one name each, shared by the check that establishes it and those it explains."""

NEWEST_NOT_RESOLVED = "emp.newest_ts_not_resolved"  # a reader returning lines of an id its newer line supersedes
