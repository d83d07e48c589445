"""The schema's `date-time` and `uri` formats as ajv-formats 3 (full mode) defines them.

The AMPS spec validates with ajv + ajv-formats (its "Reference implementation"), so an export that
validator accepts is accepted here, and one it refuses is refused (errata A13 lists where that
differs from a strict reading of RFC 3339 / RFC 3986, and why we follow ajv-formats there).

date-time (ajv-formats 3 `getDateTime(strictTimeZone=true)`): the string splits on one "T", "t" or
JavaScript whitespace into a full-date (a real calendar day) and a time hh:mm:ss[.frac] with a
required zone "Z"/"z" or +hh, +hhmm, +hh:mm (hours <= 23, minutes <= 59); seconds below 60, or 60
to below 61 when the time is 23:59 in UTC (a leap second).
uri: an RFC 3986 URI (scheme, hier-part, query, fragment; ASCII only, percent-encoding), with ajv's
two liberties: "scheme:/" may introduce an authority like "//", and no path-empty form.
"""

from __future__ import annotations

import datetime as dt
import re

# JavaScript's \s (String.prototype.split(/t|\s/i)): Python's \s differs (U+FEFF, U+001C-U+001F)
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_SEPARATOR = re.compile(f"[tT{_JS_SPACE}]")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", re.ASCII)
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)(z|([+-])([0-9]{2})(?::?([0-9]{2}))?)?",
                   re.ASCII | re.IGNORECASE)
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _date_parts(text: str) -> tuple[int, int, int] | None:
    m = _DATE.fullmatch(text)
    if not m:
        return None
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    if not (1 <= month <= 12 and 1 <= day <= (29 if month == 2 and _leap(year) else _DAYS[month])):
        return None
    return year, month, day


def _time_parts(text: str) -> tuple[int, int, float, int] | None:
    """(hour, minute, second, zone offset in minutes) of a time with a zone, or None."""
    m = _TIME.fullmatch(text)
    if not m or not m[4]:
        return None  # ajv-formats 3: the zone is required (2.x let it be absent: errata A13)
    hour, minute, second = int(m[1]), int(m[2]), float(m[3])
    sign = -1 if m[5] == "-" else 1
    tz_h, tz_m = int(m[6] or 0), int(m[7] or 0)
    if tz_h > 23 or tz_m > 59:
        return None
    offset = sign * (tz_h * 60 + tz_m)
    if hour <= 23 and minute <= 59 and second < 60:
        return hour, minute, second, offset
    utc_min = minute - tz_m * sign
    utc_hour = hour - tz_h * sign - (1 if utc_min < 0 else 0)
    if utc_hour in (23, -1) and utc_min in (59, -1) and second < 61:
        return hour, minute, second, offset
    return None


def is_date_time(value: object) -> bool:
    """ajv-formats 3 `date-time`; a non-string is not this format's business (the `type` keyword's)."""
    if not isinstance(value, str):
        return True
    parts = _SEPARATOR.split(value)
    return len(parts) == 2 and _date_parts(parts[0]) is not None and _time_parts(parts[1]) is not None


def parse_date_time(value: object) -> dt.datetime | None:
    """The instant a date-time names (a leap second as :59), or None when it is not one."""
    if not isinstance(value, str):
        return None
    parts = _SEPARATOR.split(value)
    if len(parts) != 2:
        return None
    day, clock = _date_parts(parts[0]), _time_parts(parts[1])
    if day is None or clock is None:
        return None
    hour, minute, second, offset = clock
    whole = min(int(second), 59)
    micro = 0 if second >= 60 else round((second - int(second)) * 1_000_000)
    try:
        when = dt.datetime(*day, hour, minute, whole, min(micro, 999_999), tzinfo=dt.timezone(dt.timedelta(minutes=offset)))
    except ValueError:
        return None
    return when


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
