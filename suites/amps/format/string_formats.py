"""The schema's `date-time` and `uri` formats as ajv-formats 3 (full mode) defines them.

The AMPS spec validates with ajv + ajv-formats (its "Reference implementation"), so an export that
validator accepts is accepted here, and one it refuses is refused (errata A13 lists where that
differs from a strict reading of RFC 3339 / RFC 3986, and why we follow ajv-formats there).

date-time: the shared parser's `ajv-formats` reading (harness/kit/shared_rules.py, `AJV_DATE_TIME`, described
in its module docstring).
uri: an RFC 3986 URI (scheme, hier-part, query, fragment; ASCII only, percent-encoding), with ajv's
two liberties: "scheme:/" may introduce an authority like "//", and no path-empty form.
"""

from __future__ import annotations

import datetime as dt
import functools
import re

from memconform.kit.shared_rules import AJV_DATE_TIME, is_datetime, parse_datetime


def is_date_time(value: object) -> bool:
    """ajv-formats 3 `date-time`; a non-string is not this format's business (the `type` keyword's)."""
    return not isinstance(value, str) or _read_date_time(value)[0]


def parse_date_time(value: object) -> dt.datetime | None:
    """The instant an ajv-formats date-time names (a leap second as :59), or None when it is not one."""
    return _read_date_time(value)[1] if isinstance(value, str) else None


def _read_date_time(value: str) -> tuple[bool, dt.datetime | None]:
    """(is a date-time, its instant): jsonschema-rs's format callback and the rule scan ask about the same
    values, so short strings (every date-time is) are read once each; a long one is never kept."""
    return _read_short(value) if len(value) <= 64 else _read(value)


def _read(value: str) -> tuple[bool, dt.datetime | None]:
    valid = is_datetime(value, AJV_DATE_TIME)
    return valid, parse_datetime(value, AJV_DATE_TIME) if valid else None


_read_short = functools.lru_cache(maxsize=1 << 16)(_read)

# The common shape of a date-time, every string of which ajv-formats accepts: "T", a day that exists
# in every year from 0001 (the 29th of February is left to the full reading), hours 00-23, minutes and seconds
# 00-59, a fraction of up to six digits, "Z" or an offset +hh:mm with hh <= 23. No "\n" can match.
PLAIN_DAY = r"(?!0000)[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
_PLAIN_CLOCK = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_PLAIN_DATE_TIME = rf"{PLAIN_DAY}T{_PLAIN_CLOCK}"
_PLAIN_ONE = re.compile(_PLAIN_DATE_TIME, re.ASCII)
_PLAIN_LINES = re.compile(rf"(?:{_PLAIN_DATE_TIME}\n)*{_PLAIN_DATE_TIME}", re.ASCII)

# The same common shape as a JSON Schema `pattern` (ECMA-262, anchored; no look-ahead, so the Rust
# validator runs it without backtracking): the year 0000 is left out by spelling the other years.
_YEAR = r"(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
_DAY_OF_ANY_YEAR = (r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)"
                    r"|(?:0[13578]|1[02])-31)")
PLAIN_DATE_TIME_PATTERN = rf"^{_YEAR}-{_DAY_OF_ANY_YEAR}T{_PLAIN_CLOCK}$"
# A plain web address, every string of which ajv-formats' `uri` accepts: http(s), a host of letters,
# digits, dots and hyphens, an optional port, a path of unreserved characters; no query, no fragment.
PLAIN_URI_PATTERN = r"^https?://[A-Za-z0-9.\-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~\-]*)*$"


def plain_date_times(values: set[str]) -> bool:
    """Is every string a date-time of the common shape? One match over all of them, joined by newlines
    (no string holds one: else the count of newlines differs). False means "look at each"."""
    if not values:
        return True
    joined = "\n".join(values)
    return joined.count("\n") == len(values) - 1 and _PLAIN_LINES.fullmatch(joined) is not None


def instant(value: object) -> dt.datetime | None:
    """parse_date_time, with the common shape read by the C parser (the same instant: at most six
    fraction digits, so no rounding differs)."""
    if isinstance(value, str) and _PLAIN_ONE.fullmatch(value):
        return dt.datetime.fromisoformat(value)
    return parse_date_time(value)


# ---- RFC 3986 URI, assembled from its grammar (Appendix A) -------------------------------------
_UNRESERVED = r"a-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9a-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_DEC_OCTET = r"(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"  # ajv's: leading zeros allowed
_IPV4 = rf"(?:{_DEC_OCTET}\.){{3}}{_DEC_OCTET}"
_H16 = r"[0-9a-f]{1,4}"
_LS32 = rf"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = "(?:" + "|".join([
    rf"(?:{_H16}:){{6}}{_LS32}",
    rf"::(?:{_H16}:){{5}}{_LS32}",
    rf"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
    rf"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
    rf"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
    rf"(?:(?:{_H16}:){{0,6}}{_H16})?::",
]) + ")"
_IPVFUTURE = rf"v[0-9a-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+"
_HOST = rf"(?:\[(?:{_IPV6}|{_IPVFUTURE})\]|{_IPV4}|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)"
_AUTHORITY = rf"(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?{_HOST}(?::[0-9]*)?"
_SEGMENT, _SEGMENT_NZ = rf"{_PCHAR}*", rf"{_PCHAR}+"
_HIER = (rf"(?:/?/{_AUTHORITY}(?:/{_SEGMENT})*"  # "//" authority (ajv: also a single "/")
         rf"|/(?:{_SEGMENT_NZ}(?:/{_SEGMENT})*)?"  # path-absolute
         rf"|{_SEGMENT_NZ}(?:/{_SEGMENT})*)")  # path-rootless
_URI = re.compile(rf"[a-z][a-z0-9+\-.]*:{_HIER}(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?",
                  re.ASCII | re.IGNORECASE)


def is_uri(value: object) -> bool:
    """ajv-formats 3 `uri`: a full URI with a scheme (a relative reference is not one)."""
    if not isinstance(value, str):
        return True
    return ("/" in value or ":" in value) and _URI.fullmatch(value) is not None
