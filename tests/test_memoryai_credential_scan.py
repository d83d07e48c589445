"""The credential check's fast prefilter never hides what the precise walk finds (a miss would be a false pass)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from memconform.core.profile import Profile
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.suites.memoryai import document_checks as dc

PIECES = st.sampled_from(["sk-", "sk_live_", "ghp_", "AKIA", "xoxb-", "xoxp-", "Bearer ", "Bearer\n", "api_key",
                          "ABCDEFGHIJKLMNOP0123456789abcdef", "-", "/", "+", "\n", "é", " ", "_", "\x00", "\""])
TEXTS = st.lists(PIECES, max_size=8).map("".join)
KEYS = st.sampled_from(["content", "note", "api_key", "Password", "audit_log", "token", "access-token", "x"])


def walk(doc: dict[str, Any]) -> bool:
    """The precise walk alone, the rule the prefilter must never undercut."""
    return any(True for key, value in doc.items() for _ in dc._scan_credentials(
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
