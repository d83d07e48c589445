"""The deviations an EMP run can establish and a later check's failure can be explained by
(core/established.py): one name each, shared by the check that establishes it and those it explains."""

NEWEST_NOT_RESOLVED = "emp.newest_ts_not_resolved"  # a reader returning lines of an id its newer line supersedes
UPDATE_AS_NEW_ID = "emp.update_as_new_id"  # a writer appending an update under an id of its own
APPEND_GLUED = "emp.append_glued_to_last_line"  # a writer appending onto a last line that has no newline
