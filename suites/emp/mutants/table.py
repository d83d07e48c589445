"""The EMP mutants module (SuiteSpec.mutants): the tables MUTANTS, EXPECTED_KILLS, EXPECTED_TITLES,
PINNED_KILLS, COMMAND_MUTANTS/COMMAND_KILLS and KILLED_ELSEWHERE, and a mutant as a command
(`python -m memconform.suites.emp.mutants NAME OP IN OUT`). The mutants, each breaking one rule of the reference,
live in writers.py, readers.py and paths.py (failure paths); every one is re-exported here,
so `python:memconform.suites.emp.mutants:<Name>` names it.
"""

from __future__ import annotations

from memconform.suites.emp.mutants.paths import (
    AcceptsAnyStringId,
    AppendReserialises,
    CheckThenCreateLock,
    LockLeftOnRefusal,
    MissingFileTruncates,
    QueryFiltersRawLines,
    ReplacesBadUtf8,
    RewriteReencodes,
    RewritesFromCache,
    RewritesInPlace,
    StrictFileBeforeAppend,
    TombstoneFinal,
    UpdateAsNewId,
    UpdateInPlace,
    UpdateSkipsLock,
    WholeFileDecode,
)
from memconform.suites.emp.mutants.readers import (
    CaseSensitiveSearch,
    CorruptAborts,
    ExactVersionOnly,
    FileOrderWins,
    FiltersIgnored,
    NewerMajorAccepted,
    QueryFirstFilterOnly,
    ShortLineBuffer,
    SplitsOnUnicodeLineBreaks,
    TieKeepsBoth,
    TieKeepsFirstLine,
    TombstoneByFileOrder,
    TombstoneIgnored,
)
from memconform.suites.emp.mutants.writers import (
    BreaksLockOnTimeout,
    DropsNullMetaValues,
    GivesUpAndBreaksLock,
    GluesToTornLine,
    InitializeBreaksAnyLock,
    Latin1Writer,
    LenientJson,
    LockLeftBehind,
    NeverCreatesLock,
    NoLock,
    NoValidation,
    OwnIdsWithoutVariant,
    OwnTsInSeconds,
    ReleasesAnyLock,
    RewriteDropsForeign,
    RewriteDropsIncompleteLines,
    SecondsTimestamps,
    StaleLockForever,
    StaleTakeoverAnsweredRefused,
    TakesContentlessLocks,
    WritesVersion2,
)

# caught only under a reading the profile pins (option -> mutant -> checks): tests/test_emp_readings.py
PINNED_KILLS: dict[str, dict[str, set[str]]] = {
    "emp.stale_lock_takeover=required": {StaleLockForever.__name__: {"emp.writer_stale_lock", "emp.writer_after_killed_writer"}},
    "emp.ts_tie=later-line": {TieKeepsFirstLine.__name__: {"emp.reader_equal_ts_tie"}},
}

MUTANTS: dict[str, type] = {cls.__name__: cls for cls in (
    NoLock, LockLeftBehind, StaleTakeoverAnsweredRefused, RewriteDropsForeign, FileOrderWins, CorruptAborts,
    NewerMajorAccepted, ExactVersionOnly, TombstoneIgnored, FiltersIgnored, CaseSensitiveSearch, SecondsTimestamps,
    TieKeepsBoth, TombstoneByFileOrder, GluesToTornLine, BreaksLockOnTimeout, NeverCreatesLock,
    Latin1Writer, RewritesFromCache, NoValidation, LenientJson, ShortLineBuffer, WritesVersion2, UpdateAsNewId, UpdateInPlace, AppendReserialises, ReplacesBadUtf8, RewriteReencodes, MissingFileTruncates,
    CheckThenCreateLock, UpdateSkipsLock, LockLeftOnRefusal, TombstoneFinal, WholeFileDecode, QueryFiltersRawLines,
    AcceptsAnyStringId, StrictFileBeforeAppend, SplitsOnUnicodeLineBreaks, DropsNullMetaValues,
    RewriteDropsIncompleteLines, QueryFirstFilterOnly, TakesContentlessLocks, GivesUpAndBreaksLock, InitializeBreaksAnyLock,
    OwnIdsWithoutVariant, OwnTsInSeconds, ReleasesAnyLock)}

EXPECTED_KILLS: dict[str, set[str]] = {
    "NoLock": {"emp.writer_waits_for_lock", "emp.writer_locks_around_write", "emp.writer_concurrent_no_loss",
               "emp.writer_after_torn_line", "emp.writer_keeps_out_of_held_lock"},
    "LockLeftBehind": {"emp.writer_lock_removed", "emp.writer_waits_for_lock"},
    "StaleTakeoverAnsweredRefused": {"emp.writer_stale_lock", "emp.writer_after_killed_writer"},
    # its delete reads before it locks: writer_concurrent_no_loss writes under its lock once the delete has read
    "RewriteDropsForeign": {"emp.writer_delete_keeps_foreign", "emp.writer_concurrent_no_loss"},
    "FileOrderWins": {"emp.reader_newest_ts_wins"},
    "CorruptAborts": {"emp.reader_corrupt_line_isolated"},
    "NewerMajorAccepted": {"emp.reader_newer_major_refused"},
    "ExactVersionOnly": {"emp.reader_unknown_ignored"},
    "SplitsOnUnicodeLineBreaks": {"emp.reader_returns_every_valid_class"},
    "TombstoneIgnored": {"emp.reader_tombstone_deletes"},
    "FiltersIgnored": {"emp.query_time", "emp.query_tags", "emp.query_type"},
    "CaseSensitiveSearch": {"emp.query_content", "emp.query_every_parameter_pair"},
    # only the domain table's pairs reach it: every other query check sends one filter
    "QueryFirstFilterOnly": {"emp.query_every_parameter_pair"},
    # only an empty or PID lock reaches it: the table's lock contents, and writer_concurrent_no_loss's lock just
    # created and not yet written (the other lock checks hold a lock with a token)
    "TakesContentlessLocks": {"emp.writer_lock_every_content", "emp.writer_concurrent_no_loss"},
    "SecondsTimestamps": {"emp.writer_ts_millis"},
    "TieKeepsBoth": {"emp.reader_equal_ts_tie"},
    "TombstoneByFileOrder": {"emp.reader_deleted_stays_deleted"},
    "GluesToTornLine": {"emp.writer_after_torn_line", "emp.writer_after_killed_writer", "emp.file_every_line_form"},
    "BreaksLockOnTimeout": {"emp.writer_waits_for_lock", "emp.writer_keeps_out_of_held_lock"},
    # its own wait (1.5 s) outlasts writer_waits_for_lock's hold: only a hold past the writer's wait shows it
    "GivesUpAndBreaksLock": {"emp.writer_keeps_out_of_held_lock", "emp.writer_concurrent_no_loss"},
    # only a fresh lock in front of a missing file (its initialise) reaches it
    "InitializeBreaksAnyLock": {"emp.writer_lock_every_content"},
    # only appends handed no id / no ts reach them
    "OwnIdsWithoutVariant": {"emp.writer_own_id_uuid4"},
    "OwnTsInSeconds": {"emp.writer_own_ts_millis"},
    # only a lock taken over while the writer holds it shows its release
    "ReleasesAnyLock": {"emp.writer_release_keeps_taken_lock"},
    "NeverCreatesLock": {"emp.writer_locks_around_write"},
    "Latin1Writer": {"emp.lines_utf8"},
    "RewritesFromCache": {"emp.writer_model_sequences"},
    "NoValidation": {"emp.writer_validates_before_writing", "emp.writer_appends_every_class"},
    "DropsNullMetaValues": {"emp.writer_appends_every_class", "emp.writer_updates_every_class"},
    "RewriteDropsIncompleteLines": {"emp.writer_deletes_every_class"},
    "LenientJson": {"emp.hostile_json_refused"},
    "ShortLineBuffer": {"emp.reader_long_content"},
    "WritesVersion2": {"emp.writer_version_1x"},
    "UpdateAsNewId": {"emp.writer_update_same_id"},
    "UpdateInPlace": {"emp.writer_update_same_id"},
    "AppendReserialises": {"emp.writer_append_keeps_foreign"},
    "ReplacesBadUtf8": {"emp.writer_append_keeps_foreign"},
    "RewriteReencodes": {"emp.writer_delete_keeps_foreign"},
    "MissingFileTruncates": {"emp.writer_missing_file_contention"},
    "CheckThenCreateLock": {"emp.writer_concurrent_no_loss"},
    "UpdateSkipsLock": {"emp.writer_locks_around_write", "emp.writer_waits_for_lock"},
    "LockLeftOnRefusal": {"emp.writer_lock_removed"},
    "TombstoneFinal": {"emp.reader_newer_after_tombstone"},
    "WholeFileDecode": {"emp.reader_corrupt_line_isolated", "emp.writer_delete_keeps_foreign"},
    "QueryFiltersRawLines": {"emp.query_time", "emp.query_tags", "emp.query_type", "emp.query_content"},
    "AcceptsAnyStringId": {"emp.id_uuid4", "emp.writer_validates_before_writing"},
    "StrictFileBeforeAppend": {"emp.writer_after_torn_line", "emp.writer_append_keeps_foreign"},
}

# caught only when run as a command the harness can kill mid-operation (emp.writer_killed_mid_write)
COMMAND_MUTANTS: dict[str, type] = {"RewritesInPlace": RewritesInPlace}
COMMAND_KILLS: dict[str, set[str]] = {"RewritesInPlace": {"emp.writer_killed_mid_write"},  # tests/test_emp_crash.py
                                      "UpdateInPlace": {"emp.writer_killed_mid_write"}}

# the failure branch each mutant is written to reach: (check id, failure title), all of which must fire
EXPECTED_TITLES: dict[str, set[tuple[str, str]]] = {
    "AppendReserialises": {("emp.writer_append_keeps_foreign", "an append changed or moved lines already in the file")},
    "GivesUpAndBreaksLock": {(check, "the app removed or replaced a fresh memory.jsonl.lock it did not own when it gave up")
                             for check in ("emp.writer_keeps_out_of_held_lock", "emp.writer_concurrent_no_loss")},
    "TakesContentlessLocks": {("emp.writer_concurrent_no_loss", "the app removed or replaced a fresh memory.jsonl.lock it did "
                                                               "not own")},
    "InitializeBreaksAnyLock": {("emp.writer_lock_every_content", f"file.lock:{held}, no memory.jsonl yet: the app removed or "
                                 "replaced memory.jsonl.lock while another app held it") for held in ("fresh_token", "fresh_empty", "fresh_pid")},
    "OwnIdsWithoutVariant": {("emp.writer_own_id_uuid4", "an id the writer picked is not an RFC 4122 UUID")},
    "OwnTsInSeconds": {("emp.writer_own_ts_millis", "a ts the writer stamped itself is not now in Unix milliseconds")},
    "ReleasesAnyLock": {("emp.writer_release_keeps_taken_lock", "the app removed memory.jsonl.lock after another app had "
                                                                "taken it over")},
    "BreaksLockOnTimeout": {("emp.writer_waits_for_lock", "the app removed or replaced memory.jsonl.lock while another app held it"),
                            ("emp.writer_waits_for_lock", "the app wrote while another app held memory.jsonl.lock")},
    "DropsNullMetaValues": {("emp.writer_appends_every_class", "a valid entry (entry.meta:null_value) was written valid, changed"),
                            ("emp.writer_updates_every_class", "an update to a valid value (entry.meta:null_value) was not "
                                                               "written as the entry with that field changed")},
    "RewriteDropsIncompleteLines": {("emp.writer_deletes_every_class",
                                     "a line no reader uses (entry.v:absent) was dropped or changed by deletes of other entries")},
    "CaseSensitiveSearch": {("emp.query_content", "query left out a matching entry")},
    "CheckThenCreateLock": {("emp.writer_concurrent_no_loss",
                             "under contention memory.jsonl was written while no memory.jsonl.lock existed")},
    "CorruptAborts": {("emp.reader_corrupt_line_isolated", "resolve was refused on a file with torn, non-JSON and non-UTF-8 "
                                                           "lines, though it works on the same file without it")},
    "ExactVersionOnly": {("emp.reader_unknown_ignored", "an entry with unknown fields, type or newer minor was not read")},
    "FileOrderWins": {("emp.reader_newest_ts_wins", "an older line written later won over the newer ts")},
    "FiltersIgnored": {("emp.query_tags", "query returned an entry that does not match"),
                       ("emp.query_time", "query returned an entry that does not match"),
                       ("emp.query_type", "query returned an entry that does not match")},
    "GluesToTornLine": {("emp.writer_after_torn_line", "after an append to a file ending in a torn line, an entry is unreadable"),
                        ("emp.writer_after_killed_writer", "after a killed writer's stale lock and torn line, an entry is unreadable")},
    "Latin1Writer": {("emp.lines_utf8", "line is not valid UTF-8")},
    "LenientJson": set(),  # the battery's titles count inputs; its check id is enough (EXPECTED_KILLS)
    "LockLeftBehind": {("emp.writer_lock_removed", f"memory.jsonl.lock is left behind after {what}")
                       for what in ("an append", "an update", "a delete")},
    "MissingFileTruncates": {("emp.writer_missing_file_contention", "apps starting on a missing file lost or damaged a first entry")},
    "NeverCreatesLock": {("emp.writer_locks_around_write", "append wrote memory.jsonl while no memory.jsonl.lock existed"),
                         ("emp.writer_locks_around_write", "delete wrote memory.jsonl while no memory.jsonl.lock existed")},
    "NewerMajorAccepted": {("emp.reader_newer_major_refused", "an entry of an unknown major version was read as if it were 1.x")},
    "NoLock": {("emp.writer_concurrent_no_loss", "under contention memory.jsonl was written while no memory.jsonl.lock existed"),
               ("emp.writer_keeps_out_of_held_lock", "the app wrote memory.jsonl while another app held a fresh memory.jsonl.lock"),
               ("emp.writer_waits_for_lock", "the app wrote while another app held memory.jsonl.lock")},
    "NoValidation": {("emp.writer_validates_before_writing", "an entry with content a number was written as given"),
                     ("emp.writer_validates_before_writing", "an entry with id not a UUID was written as given"),
                     ("emp.writer_validates_before_writing", "an entry with tags in upper case was written as given"),
                     ("emp.writer_validates_before_writing", "an entry with ts a string was written as given")},
    "ReplacesBadUtf8": {("emp.writer_append_keeps_foreign", "an append changed or moved lines already in the file")},
    "RewriteDropsForeign": {("emp.writer_delete_keeps_foreign", "a delete dropped, changed or reordered another app's line"),
                            ("emp.writer_concurrent_no_loss", "a delete lost a line another app wrote under its lock while "
                                                              "the delete waited (read before locking, rewritten after?)")},
    "RewriteReencodes": {("emp.writer_delete_keeps_foreign", "a delete dropped, changed or reordered another app's line")},
    "RewritesFromCache": {("emp.writer_model_sequences", "after a sequence of operations the file left the model")},
    "SecondsTimestamps": {("emp.writer_ts_millis", "an entry written now has a ts that is not now in Unix milliseconds")},
    "ShortLineBuffer": {("emp.reader_long_content", "an entry with long content was not read back whole")},
    "StaleTakeoverAnsweredRefused": {("emp.writer_stale_lock", "an append refused on a stale lock changed the file")},
    "TieKeepsBoth": {("emp.reader_equal_ts_tie", "one id with two equal-ts lines resolved to 2 entries")},
    "TombstoneByFileOrder": {("emp.reader_deleted_stays_deleted",
                              "an update older than the tombstone, written after it, brought the deleted entry back")},
    "TombstoneIgnored": {("emp.reader_tombstone_deletes", "an entry deleted by a tombstone line is still in the view")},
    "UpdateAsNewId": {("emp.writer_update_same_id", "the update was written as a new id instead of the same id")},
    "UpdateInPlace": {("emp.writer_update_same_id", "an update changed lines already in the file instead of appending"),
                      ("emp.writer_update_same_id", "the update's ts is not newer than the entry it updates")},
    "WritesVersion2": {("emp.writer_version_1x", "a 1.0 writer wrote a line of another major version")},
    "UpdateSkipsLock": {("emp.writer_locks_around_write", "update wrote memory.jsonl while no memory.jsonl.lock existed"),
                        ("emp.writer_waits_for_lock", "the app wrote while another app held memory.jsonl.lock")},
    "LockLeftOnRefusal": {("emp.writer_lock_removed", "memory.jsonl.lock is left behind after a refused update (an id nobody wrote)"),
                          ("emp.writer_lock_removed", "memory.jsonl.lock is left behind after a refused delete (an id nobody wrote)")},
    "TombstoneFinal": {("emp.reader_newer_after_tombstone", "a line newer than the tombstone did not take precedence: the id stays deleted")},
    "WholeFileDecode": {("emp.reader_corrupt_line_isolated", "resolve failed on a file with torn, non-JSON and non-UTF-8 lines, "
                                                             "though it works on the same file without it"),
                        ("emp.writer_delete_keeps_foreign", "delete failed on a file with a corrupt line and a line of invalid "
                                                            "UTF-8 (another app's), though it works on the same file without it")},
    "QueryFiltersRawLines": {(f"emp.query_{kind}", title) for kind in ("time", "tags", "type", "content") for title in (
        "query returned a superseded version: it filtered lines before resolving",
        "query returned a deleted entry: it filtered lines before resolving")},
    "StrictFileBeforeAppend": {
        ("emp.writer_after_torn_line", "append was refused on a file with a torn last line, though it works on the same "
                                       "file without it"),
        ("emp.writer_append_keeps_foreign", "append was refused on a file with another app's line of invalid UTF-8, "
                                            "though it works on the same file without it")},
    "AcceptsAnyStringId": {("emp.id_uuid4", "id must be a UUID"),
                           ("emp.writer_validates_before_writing", "an entry with id not a UUID was written as given")},
}


# checks killed by a test of their own (a mutant that only a real process shows), {check id: the test}
KILLED_ELSEWHERE = {"emp.writer_killed_mid_write": "tests/test_emp_crash.py (RewritesInPlace and UpdateInPlace, run as commands)"}
