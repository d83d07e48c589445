"""MemoryAI's part in portability (harness/portability/formats.py): its mapping table, translator and witness,
its sample documents, and its export and import by the suite's operation names (`export`, `import_bundle`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memconform.core.suite import Later
from memconform.kit.fixtures_loader import fixture_root
from memconform.portability.formats import Endpoint, Portable, refused
from memconform.suites.memoryai import format as memoryai

from . import translator, witness

# §3.8: a consumer whose model differs drops embeddings, which is no loss of the translation's
DROP_EMBEDDINGS = ("When the consumer's local `embedding_model` differs from the manifest's, the consumer SHOULD drop "
                   "embeddings (use `null`) and re-embed lazily on next recall.")


STRATEGIES = "memconform.suites.memoryai.portability.strategies"  # imported when a property asks: hypothesis


def samples() -> list[Path]:
    return sorted((fixture_root() / "memoryai" / "valid").glob("*.json"))


def export(end: Endpoint) -> Any:
    return end.ctx.target.call("export", {"scope": "full"}).accepted_json(dict, "memoryai export")


def import_(end: Endpoint, doc: Any) -> None:
    refused(end, end.ctx.target.call("import_bundle", doc))


def portable() -> Portable:
    return Portable(
        name="memoryai", mapping=Path(__file__).with_name("mapping.json"), read=translator.read,
        write=translator.write, detect=memoryai.detect, samples=samples, seed="full_bundle_all_sections.json",
        export=export, import_=import_, witness=witness.WITNESS, documents=Later(f"{STRATEGIES}:documents"),
        edge=Later(f"{STRATEGIES}:edge"), order=1,
        # consumers assign their own chunk ids and skip by content_hash (§3.8): records are matched by text
        match_by_text=True, not_compared=frozenset({"id"}),
        sanctioned={"embedding": DROP_EMBEDDINGS, "embedding_model": DROP_EMBEDDINGS},
        respellings={"type prefix": "MemoryAI's vendor prefix x_ for a type outside its ten"}, reading=translator.READING, one_pass=True,
        detect_by_shape=True)  # detect.py: the format member's value
