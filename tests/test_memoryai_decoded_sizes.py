"""`decoded_sizes` judges all embeddings at once exactly as `decode_embedding` judges each one."""

from __future__ import annotations

import base64
import random

from memconform.suites.memoryai import format as mai
from memconform.suites.memoryai.format import bundle  # the module whose globals decoded_sizes reads


def _one_by_one(texts: list[str]) -> list[object]:
    out: list[object] = []
    for text in texts:
        try:
            out.append(len(mai.decode_embedding(text)))
        except ValueError as exc:
            out.append(str(exc))
    return out


def _text(rng: random.Random) -> str:
    good = base64.b64encode(rng.randbytes(rng.choice([0, 3, 6, 12, 1536, 4, 5]))).decode()
    pick = rng.random()
    if pick < 0.6:
        return good
    if pick < 0.7:
        return good[:-1]
    if pick < 0.8:
        at = rng.randrange(len(good) + 1)
        return good[:at] + rng.choice(["=", "!", "\n", " ", "-", "_", "é", "A"]) + good[at:]
    if pick < 0.9:
        return good + "===="
    return good.rstrip("=")


def test_all_at_once_equals_one_by_one() -> None:
    rng = random.Random(4)
    for _ in range(3000):
        texts = [_text(rng) for _ in range(rng.randrange(5))]
        got = [v if isinstance(v, int) else str(v) for v in mai.decoded_sizes(texts)]
        assert got == _one_by_one(texts), texts


def test_a_clean_set_is_judged_in_one_pass_without_decoding(monkeypatch) -> None:
    calls: list[int] = []
    real = mai.decode_embedding
    monkeypatch.setattr(bundle, "decode_embedding", lambda text: calls.append(1) or real(text))
    texts = [base64.b64encode(bytes(1536)).decode()] * 50
    assert mai.decoded_sizes(texts) == [1536] * 50 and calls == []


def test_one_character_outside_the_alphabet_at_any_place_is_judged_as_decoding_judges_it() -> None:
    """Lengths kept (a multiple of 4, no padding): only the alphabet pass can tell these apart."""
    good = base64.b64encode(bytes(range(48))).decode()
    for bad in ["!", "\n", " ", "-", "_", ".", "\x00", "\x7f", "é", "\u0100", "\U0001f600", "\ud800"]:
        for at in (0, 17, len(good) - 1):
            texts = [good, good[:at] + bad + good[at + 1:], good]
            got = [v if isinstance(v, int) else str(v) for v in mai.decoded_sizes(texts)]
            assert got == _one_by_one(texts) and isinstance(got[1], str), (bad, at)
