"""MemoRizz's part in portability (harness/portability/formats.py): its mapping table, translator and witness,
its sample documents, its archive size limit, and its export and import by the suite's operation names
(`export`, `import_archive` in restore mode)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memconform.core.suite import Later
from memconform.kit.fixtures_loader import fixture_root
from memconform.portability.formats import Endpoint, Portable, refused
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import options

from . import translator, witness

STRATEGIES = "memconform.suites.memorizz.portability.strategies"  # imported when a property asks: hypothesis


def samples() -> list[Path]:
    return sorted((fixture_root() / "memorizz" / "valid").glob("*.json"))


def export(end: Endpoint) -> Any:
    return end.ctx.target.call("export", {}).accepted_json(dict, "memorizz export")


def import_(end: Endpoint, doc: Any) -> None:
    refused(end, end.ctx.target.call("import_archive", {"archive": doc, "mode": "restore", "conflict": "error"}))


def size_limit() -> tuple[str, int]:
    """The archive size limit: the suite's max_bytes option as declared in its table (options.py; 50 MiB by
    default)."""
    name = options.OPTIONS["max_bytes"].default
    return name, memorizz.SIZES.get(name, 50 * memorizz.MIB)


def native_id(key: str) -> str:
    """A record's id from the key an archive names it by: `<store>/<id>` (an id is unique within its store)."""
    return key.split("/", 1)[1] if "/" in key else key


def portable() -> Portable:
    return Portable(
        name="memorizz", mapping=Path(__file__).with_name("mapping.json"), read=translator.read,
        write=translator.write, detect=memorizz.detect, samples=samples, seed="every-store.json", export=export,
        import_=import_, witness=witness.WITNESS, documents=Later(f"{STRATEGIES}:documents"), edge=Later(f"{STRATEGIES}:edge"), order=3,
        native_id=native_id, size_limit=size_limit,
        sanctioned={"embedding": "Embeddings are excluded by default and discarded on standard import"},
        respellings={"id in key": "a MemoRizz id is unique within its store: written <store>/<id>",
                     "id as key": "written as a MemoRizz id: the part before / is the store"},
        reading=translator.READING, one_pass=True, detect_by_shape=True)  # detect.py: the format member's value
