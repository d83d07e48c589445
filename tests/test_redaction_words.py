"""The redactor masks secret values, never the spec's words: "Bearer token authentication" stays, a bearer
credential nobody named is masked."""

from __future__ import annotations

import pytest
from memconform.core.redact import Redactor


@pytest.mark.parametrize("prose", ["Implements Bearer token authentication", "uses a Bearer token.",
                                   "send a bearer Token, then", "Bearer authentication (RFC 6750)"])
def test_the_words_after_bearer_in_prose_stay(prose: str) -> None:
    assert Redactor([]).text(prose) == prose


@pytest.mark.parametrize("credential", ["sk-live-4f9a2c1b77", "abcDEF", "tok_123", "YOUR_API_KEY", "a" * 17,
                                        "eyJhbGciOiJIUzI1NiJ9.e30.x", "<key>"])
def test_a_bearer_credential_nobody_named_is_masked(credential: str) -> None:
    masked = Redactor([]).text(f"Authorization: Bearer {credential} sent")
    assert credential not in masked and masked == "Authorization: Bearer *** sent"


@pytest.mark.parametrize("header", ["Authorization: Bearer zzz and", '{"authorization": "Bearer token"}',
                                    "AUTHORIZATION=Bearer secret"])
def test_in_an_authorization_header_whatever_follows_bearer_is_masked(header: str) -> None:
    masked = Redactor([]).text(header)
    assert "Bearer ***" in masked and not any(w in masked for w in ("zzz", "token", "secret"))


def test_a_known_secret_that_is_a_word_is_masked_wherever_it_is() -> None:
    """The prose rule is about unknown credentials only: a key the run knows is masked even when it is a word."""
    assert Redactor(["token"]).text("Implements Bearer token authentication") == "Implements Bearer *** authentication"


def test_the_variable_naming_the_key_stays() -> None:
    text = 'curl -H "Authorization: Bearer $MEMCONFORM_API_KEY" http://127.0.0.1:1/'
    assert Redactor([]).text(text) == text
