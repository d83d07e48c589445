"""The credential check's fast prefilter never hides what the precise walk finds (a miss would be a false pass)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memconform.core.profile import Profile
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.suites.memoryai import credentials
from memconform.suites.memoryai.checks import document as dc

PIECES = st.sampled_from(["sk-", "sk_live_", "ghp_", "AKIA", "xoxb-", "xoxp-", "Bearer ", "Bearer\n", "api_key",
                          "ABCDEFGHIJKLMNOP0123456789abcdef", "-", "/", "+", "\n", "é", " ", "_", "\x00", "\""])
TEXTS = st.lists(PIECES, max_size=8).map("".join)
KEYS = st.sampled_from(["content", "note", "api_key", "Password", "audit_log", "token", "access-token", "x",
                        "openai_api_key", "githubToken", "session_cookie", "x_audit_log", "audit", "max_tokens"])


def walk(doc: dict[str, Any]) -> bool:
    """The precise walk alone, the rule the prefilter must never undercut."""
    return any(True for key, value in doc.items() for _ in credentials.scan(
        {key: [{k: v for k, v in c.items() if k != "embedding"} for c in value]} if key == "chunks" else {key: value}, "$"))


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.dictionaries(KEYS, TEXTS, max_size=3), max_size=3), st.dictionaries(KEYS, TEXTS, max_size=2),
       st.sampled_from(["QUtJQUFBQUFBQUFBQUFBQUFBQUE=", "xAKIAABCDEFGHIJKLMNOP12+/Bearer sk-abcdefgh12345"]))
def test_prefilter_agrees_with_the_walk(chunks: list[dict[str, str]], metadata: dict[str, str], embedding: str) -> None:
    # the second embedding is token-like noise: the walk skips embeddings, so it must not count
    doc = {"format": "memoryai-bundle", "chunks": [dict(c, embedding=embedding) for c in chunks],
           "agents": [{"metadata": metadata}]}
    ctx = Context(suite=get_suite("memoryai"), target=None, profile=Profile.named("ci"), document=doc)
    assert bool(list(dc.no_credentials_in_bundle(doc, ctx))) == walk(doc)


def test_token_after_newline_and_dash_is_found() -> None:
    for content in ("line\nsk-abcdefgh12345", "x-sk-abcdefgh12345", "(Bearer abcdefghijklmnop)"):
        doc = {"chunks": [{"content": content, "embedding": None}]}
        ctx = Context(suite=get_suite("memoryai"), target=None, profile=Profile.named("ci"), document=doc)
        assert list(dc.no_credentials_in_bundle(doc, ctx)), content


def findings(doc: dict[str, Any]) -> list[Any]:
    ctx = Context(suite=get_suite("memoryai"), target=None, profile=Profile.named("ci"), document=doc)
    return list(dc.no_credentials_in_bundle(doc, ctx))


@pytest.mark.parametrize("key", ["openai_api_key", "github_token", "githubToken", "session_cookie", "x_audit_log", "audit",
                                 "AWS_SECRET_ACCESS_KEY", "client_secret", "refresh-token", "auditTrail", "access_logs"])
def test_every_spelling_of_a_secret_field_is_found(key: str) -> None:
    assert findings({"chunks": [{"content": "x", "metadata": {key: "no-known-shape"}}]})
    assert findings({key: [{"who": "admin"}]})


@pytest.mark.parametrize("key", ["max_tokens", "token_count", "sort_key", "primary_key", "keywords", "secretary", "tokens"])
def test_counters_and_ordinary_keys_are_not_credentials(key: str) -> None:
    assert not findings({"chunks": [{"content": "x", "metadata": {key: "value 12"}}]})


@pytest.mark.parametrize("token", ["github_pat_11ABCDEFG0123456789_abcdefghij", "AIzaSyA1234567890abcdefghijklmnopqrstuv",
                                   "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig", "-----BEGIN RSA PRIVATE KEY-----",
                                   "sk-ant-api03-abcdefghijk", "glpat-abcdefghijklmnopqrstu"])
def test_well_known_token_shapes_are_found_in_text(token: str) -> None:
    assert findings({"chunks": [{"content": f"remember {token} please"}]})
