"""harness/portability/errata.md: every sentence it quotes is verbatim in the specs, and its generated part (every
directed pair) is what `memconform portability --errata` writes today."""

from __future__ import annotations

import re
from pathlib import Path

from memconform.portability.errata import BEGIN, generated

ROOT = Path(__file__).resolve().parents[1]
ERRATA = ROOT / "harness" / "portability" / "errata.md"
SPECS = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "fixtures" / "specs").glob("*.md") if p.name != "README.md")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _quotes() -> list[str]:
    """The quoted sentences: "…" in the findings' block quotes, “…” in the generated list."""
    text = ERRATA.read_text(encoding="utf-8")
    found = [m.replace('\\"', '"') for line in text.splitlines() if line.startswith("> ")
             for m in re.findall(r'"((?:[^"\\]|\\.)*)"', line)]
    return found + re.findall(r"“(.*?)” \(", text)


def test_every_quote_is_verbatim_in_a_spec():
    quotes = _quotes()
    assert len(quotes) > 60
    spec = _flat(SPECS)
    assert [q for q in quotes if _flat(q) not in spec] == []


def test_generated_part_is_current():
    text = ERRATA.read_text(encoding="utf-8")
    assert BEGIN in text
    assert text.split(BEGIN)[1].strip() == generated().split(BEGIN)[1].strip(), \
        "regenerate: memconform portability --errata harness/portability/errata.md"


def test_every_pair_has_a_section():
    text = ERRATA.read_text(encoding="utf-8")
    assert len(re.findall(r"^### \w+ → \w+$", text, flags=re.M)) == 20
