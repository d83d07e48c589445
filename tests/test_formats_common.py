"""The shared helpers: one date-time parser with one reading per spec, one credential classifier."""

from __future__ import annotations

import datetime as dt

import pytest
from memconform.kit.shared_rules import (
    AJV_DATE_TIME,
    READINGS,
    audit_key,
    is_datetime,
    is_int,
    now_iso,
    parse_datetime,
    secret_key,
    secret_value,
)

UTC = dt.UTC

# value -> which specs' readings accept it (omp-sent: the instant a client's OMP timestamp names, O53, read as
# MemoryAI's ISO 8601 with an optional offset)
CASES = {
    "2026-01-01T00:00:00Z": {"amps", "omp", "memorizz", "memoryai", "omp-sent"},
    "2026-01-01t00:00:00z": {"amps", "memorizz", "memoryai", "omp-sent"},
    "2026-01-01T00:00:00.123456789+00:00": {"amps", "omp", "memorizz", "memoryai", "omp-sent"},
    "2026-01-01T02:00:00+02:00": {"amps", "memoryai", "omp-sent"},
    "2026-01-01T00:00:00-00:00": {"amps", "memoryai", "omp-sent"},
    "2026-01-01T00:00:00": {"memoryai", "omp-sent"},
    "2026-01-01 00:00:00Z": {"memorizz", "memoryai", "omp-sent"},
    "2026-W01-1T00:00:00Z": {"memorizz", "memoryai", "omp-sent"},
    "2026-12-31T23:59:60Z": {"amps", "omp"},
    "2026-13-01T00:00:00Z": set(),
    "2026-02-30T00:00:00Z": set(),
    "2026-01-01T00:00:00+24:00": set(),
    "２０２６-01-01T00:00:00Z": set(),
    "yesterday": set(),
}


@pytest.mark.parametrize("value", sorted(CASES))
def test_each_spec_reads_date_times_its_documented_way(value):
    accepted = {spec for spec in READINGS if parse_datetime(value, spec) is not None}
    assert accepted == CASES[value]


def test_instants_are_aware_and_equal_across_spellings():
    a = parse_datetime("2026-01-01T02:00:00+02:00", "amps")
    assert a == parse_datetime("2026-01-01T00:00:00Z", "omp") == dt.datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_datetime("2026-01-01T00:00:00", "memoryai") == dt.datetime(2026, 1, 1, tzinfo=UTC)
    leap = parse_datetime("2026-12-31T23:59:60.5Z", "amps")
    assert leap == dt.datetime(2026, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)
    assert parse_datetime(20260101, "amps") is None and parse_datetime("2026-01-01T00:00:00Z" * 10, "amps") is None


# AMPS schema validation's reading (suites/amps/errata.md A13): ajv-formats 3, not RFC 3339 to the letter
AJV_ACCEPTS = ["2026-01-01t00:00:00z", "2026-01-01 00:00:00+0100", "2026-01-01\u00a000:00:00Z",
               "2026-12-31T23:59:60Z", "2026-01-01T00:59:60+01:00", "2026-01-01T00:00:00+01",
               "2026-01-01T00:00:00.123456789Z"]
AJV_REFUSES = ["2026-01-01T00:00:00", "2026-02-30T00:00:00Z", "2026-01-01T00:00:00+24:00", "2026-01-01T12:00:60Z",
               "2026-01-01T00:00:00Z\n", "2026-01-01TT00:00:00Z", "２０２６-01-01T00:00:00Z", 20260101]


@pytest.mark.parametrize("value", AJV_ACCEPTS)
def test_ajv_formats_reading_accepts(value):
    assert is_datetime(value, AJV_DATE_TIME) and parse_datetime(value, AJV_DATE_TIME) is not None


@pytest.mark.parametrize("value", AJV_REFUSES)
def test_ajv_formats_reading_refuses(value):
    assert not is_datetime(value, AJV_DATE_TIME) and parse_datetime(value, AJV_DATE_TIME) is None


def test_ajv_formats_reading_against_the_amps_rfc3339_one():
    assert parse_datetime("2026-01-01 00:00:00+0100", AJV_DATE_TIME) == dt.datetime(2025, 12, 31, 23, tzinfo=UTC)
    assert parse_datetime("2026-01-01 00:00:00Z", "amps") is None and not is_datetime("2026-01-01 00:00:00Z", "amps")
    # a leap second orders as :59, its fraction dropped (the rfc3339 reading keeps it)
    assert parse_datetime("2026-12-31T23:59:60.5Z", AJV_DATE_TIME) == dt.datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)
    # accepted, but no instant Python can hold: a date-time to the schema, nothing to order
    for value in ("0000-01-01T00:00:00Z", "2026-01-01T23:60:60+00:01"):
        assert is_datetime(value, AJV_DATE_TIME) and parse_datetime(value, AJV_DATE_TIME) is None


def test_now_iso_and_is_int():
    assert parse_datetime(now_iso(), "omp") is not None and now_iso().endswith("Z")
    assert is_int(3) and is_int(-(10**40)) and not is_int(True) and not is_int(3.0)


@pytest.mark.parametrize("key,secret,audit", [
    ("api_key", True, False), ("openaiApiKey", True, False), ("githubToken", True, False),
    ("session_cookie", True, False), ("client_secret", True, False), ("password", True, False),
    ("max_tokens", False, False), ("token_count", False, False), ("sort_key", False, False), ("key", False, False),
    ("audit_log", False, True), ("accessLog", False, True), ("content", False, False),
    # any service's token is a credential; a pager's, a tokenizer's or a limit's is not
    ("webhook_token", True, False), ("foo_token", True, False), ("my-token", True, False), ("csrfToken", True, False),
    ("next_page_token", False, False), ("eos_token", False, False), ("max_token", False, False),
])
def test_credential_names(key, secret, audit):
    assert (secret_key(key), audit_key(key)) == (secret, audit)


def test_credential_values():
    assert secret_value("my key is sk-abcdefghijkl") and secret_value("AKIA" + "A" * 16)
    assert not secret_value("a plain sentence about keys and tokens")
