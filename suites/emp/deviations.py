"""The deviations an EMP run can establish and a later check's failure can be explained by
(core/established.py): one name each, shared by the check that establishes it and those it explains."""

NEWEST_NOT_RESOLVED = "emp.newest_ts_not_resolved"  # a reader returning lines of an id its newer line supersedes
UPDATE_AS_NEW_ID = "emp.update_as_new_id"  # a writer appending an update under an id of its own
APPEND_GLUED = "emp.append_glued_to_last_line"  # a writer appending onto a last line that has no newline
# a writer removing or replacing a fresh memory.jsonl.lock another app holds (at its start-up, when it gives up, on
# its release): what then goes wrong under contention is that deviation's doing
FOREIGN_LOCK_REMOVED = "emp.foreign_lock_removed"
FOREIGN_LOCK_WHAT = "an app removes or replaces a fresh memory.jsonl.lock another app holds"
# a delete rewriting the file without other apps' lines (gone, no line left holding their id or content): a later
# check's line of another app missing after a delete is that deviation's doing
FOREIGN_LINES_DROPPED = "emp.delete_drops_foreign_lines"
FOREIGN_LINES_DROPPED_WHAT = "a delete rewrites memory.jsonl without other apps' lines"
