"""EMP's constants and the forms of a line's fields: a leaf module the rule table and the block scan share."""

from __future__ import annotations

import functools
import re

SUITE = "emp"
SPEC = "Edge Memory Protocol v1.0"
VERSION = "1.0"
MAJOR = 1
LOCK_SUFFIX = ".lock"
FILE_NAME = "memory.jsonl"
REQUIRED = ("v", "id", "ts", "src", "content")
# A file check lists at most this many offending lines, then one failure saying how many more there
# are, so a million bad lines cost bounded memory (and the runner's cap of 200 failures is never hit).
REPORT_CAP = 199

VERSION_RE = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\Z", re.I)
UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z", re.I)
REVDOMAIN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(\.[A-Za-z0-9][A-Za-z0-9_-]*)+\Z")
ENCRYPTED_RE = re.compile(r"^encrypted:([A-Za-z0-9_-]+):([A-Za-z0-9+/]*={0,2})\Z")


@functools.lru_cache(maxsize=4096)  # the few src values of a file repeat on every line
def src_is_reverse_domain(src: str) -> bool:
    return REVDOMAIN_RE.match(src) is not None
