"""What every spec's format shares: one date-time parser, one list of what a credential looks like,
`is_int` and `now_iso`. Suites import these; none keeps a private copy.

Date-times: one parser, `parse_datetime(value, reading)`, with one documented reading per spec
(`READINGS`; the errata file of each spec says why), and `is_datetime(value, reading)`, whether a
string is one under a reading:

    spec      syntax       zone      the spec's words
    omp       rfc3339      utc       "ISO 8601 UTC timestamp" (suites/omp/errata.md O6): Z or +00:00, "T" and "Z"
                                     upper case as ISO 8601 writes them
    omp-sent  iso8601      optional  the instant a timestamp a client sent names, in whatever form (O53)
    memorizz  iso8601      utc       "Export timestamp in UTC" (suites/memorizz/errata.md): a zero UTC offset
    memoryai  iso8601      optional  "<ISO-8601 datetime>"
    amps      rfc3339      required  JSON Schema `"format": "date-time"` = RFC 3339 §5.6
    amps      ajv-formats  required  `AJV_DATE_TIME`, what the AMPS suite's schema validation uses: the same
    (schema)                         format as the spec's reference validator, ajv + ajv-formats 3, reads it
                                     (suites/amps/errata.md A13: the published validator's reading)

    rfc3339   YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm), ASCII digits only; "T" and "Z" in either
              case (RFC 3339 §5.6 NOTE); no space separator, no week or ordinal dates; a leap second
              (:60) is read as :59 of the same minute, so it orders; fractions past microseconds are cut.
    iso8601   every ISO 8601 date or date-time Python reads (calendar, week and ordinal dates, basic
              or extended form, "T" or another one-character separator), "Z" in either case.
    ajv-formats  ajv-formats 3 `date-time` (src/formats.ts, `getDateTime(strictTimeZone=true)`): the
              string splits on one "T", "t" or JavaScript whitespace (JavaScript's set, not Python's) into
              a full-date, a real calendar day, and hh:mm:ss[.fraction] with a zone "Z"/"z", +hh, +hhmm or
              +hh:mm (hours <= 23, minutes <= 59); ASCII digits, whole-string anchors, no length cap;
              seconds below 60, or 60 to below 61 when the time is 23:59 in UTC (a leap second, read as
              :59 with no fraction); fractions are rounded to microseconds. A few strings it accepts
              name no instant Python holds (year 0000, the leap second "23:60:60+00:01"): for those
              `is_datetime` is true and `parse_datetime` None.
    required  an offset must be written; optional: no offset is read as UTC;
    utc       the offset must be zero, written Z or +00:00 (not -00:00: RFC 3339 §4.3 "unknown
              local offset").
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, TypeGuard


def is_int(value: Any) -> TypeGuard[int]:
    """A JSON integer: an int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def now_iso(offset_s: float = 0) -> str:
    """The current UTC time (plus offset_s seconds) as RFC 3339 with whole seconds and "Z"."""
    return (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=offset_s)).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- date-times ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reading:
    """A reading of the date-time rule: its syntax and what it says of the zone."""

    syntax: str  # "rfc3339" | "iso8601" | "ajv-formats"
    zone: str  # "required" | "optional" | "utc"
    upper: bool = False  # rfc3339: "T" and "Z" in upper case only


READINGS: dict[str, Reading] = {
    "amps": Reading("rfc3339", "required"),
    "omp": Reading("rfc3339", "utc", upper=True),
    # the instant a client's OMP timestamp names, whatever form it was sent in (suites/omp/errata.md O53):
    # a server may store it as that instant; the form it then writes is judged by "omp"
    "omp-sent": Reading("iso8601", "optional"),
    "memorizz": Reading("iso8601", "utc"),
    "memoryai": Reading("iso8601", "optional"),
}

AJV_DATE_TIME = Reading("ajv-formats", "required")

_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})?")
_ZERO_OFFSETS = ("Z", "z", "+00:00")


def parse_datetime(value: Any, reading: Reading | str) -> dt.datetime | None:
    """The instant a date-time string names under one reading (or a spec's name), else None.

    The result is always timezone-aware; with zone "optional", a string without offset is UTC."""
    if isinstance(reading, str):
        reading = READINGS[reading]
    if reading.syntax == "ajv-formats":
        fields = _ajv_fields(value, reading.zone)
        return None if fields is None else _ajv_instant(*fields)
    if not isinstance(value, str) or len(value) > 64:
        return None
    if reading.syntax == "rfc3339":
        if reading.upper and ("t" in value or "z" in value):
            return None
        when, offset = _rfc3339(value)
    else:
        when, offset = _iso8601(value)
    if when is None:
        return None
    if offset is None:
        return None if reading.zone in ("required", "utc") else when.replace(tzinfo=dt.UTC)
    if reading.zone == "utc" and (offset not in _ZERO_OFFSETS or when.utcoffset() != dt.timedelta(0)):
        return None
    return when


def is_datetime(value: Any, reading: Reading | str) -> bool:
    """Is a value a date-time string under a reading? Under ajv-formats also when Python cannot hold
    the instant it names (the module docstring); under the others, when `parse_datetime` reads it."""
    if isinstance(reading, str):
        reading = READINGS[reading]
    if reading.syntax == "ajv-formats":
        return _ajv_fields(value, reading.zone) is not None
    return parse_datetime(value, reading) is not None


def _rfc3339(value: str) -> tuple[dt.datetime | None, str | None]:
    m = _RFC3339.fullmatch(value)
    if m is None:
        return None, None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction, offset = m.group(7), m.group(8)
    micros = int((fraction[1:] + "000000")[:6]) if fraction else 0
    try:
        tz = None
        if offset is not None:
            if offset in ("Z", "z"):
                tz = dt.UTC
            else:
                hours, minutes = int(offset[1:3]), int(offset[4:6])
                if hours > 23 or minutes > 59:
                    return None, None
                sign = -1 if offset[0] == "-" else 1
                tz = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
        when = dt.datetime(year, month, day, hour, minute, min(second, 59), micros, tzinfo=tz)
    except ValueError:  # month 13, February 30, hour 24 ...
        return None, None
    if second > 60:
        return None, None
    return when, offset


def _iso8601(value: str) -> tuple[dt.datetime | None, str | None]:
    if not value.isascii():
        return None, None
    text = value[:-1] + "+00:00" if value[-1:] in ("Z", "z") else value
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None, None
    if when.tzinfo is None:
        return when, None
    offset = "Z" if text is not value else value[-6:]
    return when, offset


# ajv-formats 3 `date-time`, ported from its src/formats.ts (`date`, `getTime(strictTimeZone)`, `getDateTime`).
# JavaScript's \s (String.prototype.split(/t|\s/i)): Python's \s differs (U+FEFF, U+001C-U+001F)
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_AJV_SEPARATOR = re.compile(f"[tT{_JS_SPACE}]")
_AJV_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", re.ASCII)
_AJV_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)(z|([+-])([0-9]{2})(?::?([0-9]{2}))?)?",
                       re.ASCII | re.IGNORECASE)
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_AjvDay = tuple[int, int, int]  # year, month, day
_AjvClock = tuple[int, int, float, int]  # hour, minute, second, zone offset in minutes


def _ajv_fields(value: Any, zone: str) -> tuple[_AjvDay, _AjvClock] | None:
    """The date and time ajv-formats reads in a string, or None when it refuses it."""
    if not isinstance(value, str):
        return None
    parts = _AJV_SEPARATOR.split(value)
    if len(parts) != 2:
        return None
    day, clock = _ajv_date(parts[0]), _ajv_time(parts[1], zone)
    return None if day is None or clock is None else (day, clock)


def _ajv_date(text: str) -> _AjvDay | None:
    m = _AJV_DATE.fullmatch(text)
    if not m:
        return None
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)  # Gregorian (calendar imports locale: ~1 ms)
    if not (1 <= month <= 12 and 1 <= day <= (29 if month == 2 and leap else _DAYS[month])):
        return None
    return year, month, day


def _ajv_time(text: str, zone: str) -> _AjvClock | None:
    m = _AJV_TIME.fullmatch(text)
    if not m or (not m[4] and zone != "optional"):
        return None  # ajv-formats 3: the zone is required (2.x let it be absent: errata A13)
    if zone == "utc" and m[4] not in _ZERO_OFFSETS:
        return None
    hour, minute, second = int(m[1]), int(m[2]), float(m[3])
    sign = -1 if m[5] == "-" else 1
    tz_h, tz_m = int(m[6] or 0), int(m[7] or 0)
    if tz_h > 23 or tz_m > 59:
        return None
    offset = sign * (tz_h * 60 + tz_m)
    if hour <= 23 and minute <= 59 and second < 60:
        return hour, minute, second, offset
    utc_min = minute - tz_m * sign  # a leap second: 23:59:60 once the offset is taken off
    utc_hour = hour - tz_h * sign - (1 if utc_min < 0 else 0)
    if utc_hour in (23, -1) and utc_min in (59, -1) and second < 61:
        return hour, minute, second, offset
    return None


def _ajv_instant(day: _AjvDay, clock: _AjvClock) -> dt.datetime | None:
    """The instant (a leap second as :59 with no fraction), or None where Python holds none."""
    hour, minute, second, offset = clock
    whole = min(int(second), 59)
    micro = 0 if second >= 60 else round((second - int(second)) * 1_000_000)
    try:
        return dt.datetime(*day, hour, minute, whole, min(micro, 999_999),
                           tzinfo=dt.timezone(dt.timedelta(minutes=offset)))
    except ValueError:  # year 0000, or a leap second spelled 23:60:60+00:01
        return None


# ---- credentials ----------------------------------------------------------------------------------
# A field name is judged by its words (split on `_`, `-`, `.`, spaces and camelCase), so every spelling
# of a secret field is found (`openai_api_key`, `githubToken`, `session_cookie`) while counters such as
# `max_tokens` or `token_count` are not. A value is a credential when it has a well-known token's shape.

# words that name a secret on their own
SECRET_WORDS = frozenset({
    "password", "passwd", "passphrase", "pwd", "secret", "secrets", "credential", "credentials", "cookie", "cookies",
    "apikey", "apikeys", "authorization", "bearer", "jwt", "totp", "otp", "privatekey", "clientsecret",
    "accesstoken", "refreshtoken", "authtoken", "idtoken", "sessionid", "sessiontoken", "pat",
})
# the last word of a secret field name made of several words (github_token, api_key, private_key)
SECRET_TAILS = frozenset({"token", "key", "secret", "password", "cookie", "credential", "credentials"})
# first words that, followed by a tail, name a secret (api_key, private_key) and not e.g. sort_key
KEY_OWNERS = frozenset({"api", "private", "secret", "access", "signing", "encryption", "master", "license", "client",
                        "openai", "anthropic", "aws", "gcp", "azure", "stripe", "github", "gitlab", "slack", "ssh",
                        "session", "auth", "refresh", "bearer", "oauth", "personal", "bot", "service"})
# "<word> token" names a credential whatever service the word is (webhook_token, hf_token, user_token: the
# owners are open-ended), unless this word says it is a pager's cursor, a tokenizer's symbol or a limit
NOT_SECRET_TOKENS = frozenset({"page", "next", "prev", "previous", "cursor", "continuation", "pagination",
                               "eos", "bos", "pad", "unk", "sep", "cls", "mask", "stop", "start", "end", "special",
                               "max", "min"})
# words that name an audit log
AUDIT_WORDS = frozenset({"audit", "audits", "auditlog", "auditlogs", "audittrail"})
_LOG_WORDS = frozenset({"log", "logs", "trail", "trails"})
_ACCESS_LOGS = re.compile(r"^(access|login|security|admin)(log|logs|trail)$")
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")

SECRET_VALUE = re.compile(
    r"\b(sk-[A-Za-z0-9_-]{8,}|sk_live_[A-Za-z0-9]{8,}|rk_live_[A-Za-z0-9]{8,}|ghp_[A-Za-z0-9]{20,}|gho_[A-Za-z0-9]{20,}"
    r"|ghs_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|Bearer\s+[A-Za-z0-9._~+/-]{12,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"
    r")|-----BEGIN [A-Z ]*PRIVATE KEY-----")  # outside the \b group: no word boundary comes before a "-"
# every alternative of SECRET_VALUE starts with one of these literals (AKIA aside, which needs its
# 16-character tail): a text holding none of them cannot match, so a fast prefilter may skip it
VALUE_MARKERS = ("sk-", "sk_live_", "rk_live_", "ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "AIza", "xox",
                 "Bearer", "eyJ", "-----BEGIN ")


def key_words(key: str) -> list[str]:
    return [w.lower() for w in _WORD_SPLIT.split(key) if w]


def secret_key(key: str) -> bool:
    """Does a field name say it holds a secret (a password, an API key, a token, a cookie)?"""
    words = key_words(key)
    if not words:
        return False
    if "".join(words) in SECRET_WORDS or any(w in SECRET_WORDS for w in words):
        return True
    if words[-1] in SECRET_TAILS and (len(words) == 1 and words[0] != "key" or any(w in KEY_OWNERS for w in words[:-1])):
        return True
    if words[-1] == "token" and len(words) >= 2 and words[-2] not in NOT_SECRET_TOKENS:
        return True
    return len(words) >= 2 and "".join(words[-2:]) in SECRET_WORDS


def audit_key(key: str) -> bool:
    """Does a field name say it holds an audit or access log?"""
    words = key_words(key)
    joined = "".join(words)
    if joined in AUDIT_WORDS or _ACCESS_LOGS.match(joined) or any(w in AUDIT_WORDS for w in words):
        return True
    return len(words) >= 2 and words[-1] in _LOG_WORDS and words[-2] in ("access", "login", "security")


def secret_value(text: str) -> bool:
    """Does a string hold something shaped like a well-known secret token?"""
    return bool(SECRET_VALUE.search(text))
