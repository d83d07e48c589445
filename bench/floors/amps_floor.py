"""Rule-including floor for an AMPS export: orjson, the published schema in jsonschema-rs with the
date-time and uri formats checked in Rust, and the prose rules in straightforward Python (sources and
extractor of inferred/observed atoms, valid_to not before valid_from, references resolve). Exit 0/1.

    python bench/floors/amps_floor.py FILE SCHEMA
"""

import sys

import jsonschema_rs
import orjson


def main(path: str, schema_path: str) -> int:
    doc = orjson.loads(open(path, "rb").read())
    validator = jsonschema_rs.Draft202012Validator(orjson.loads(open(schema_path, "rb").read()), validate_formats=True)
    problems = not validator.is_valid(doc)
    artifact_ids = {a["artifact_id"] for a in doc["artifacts"]}
    atom_ids = {a["atom_id"] for a in doc["atoms"]}
    for atom in doc["atoms"]:
        prov = atom["provenance"]
        refs = prov.get("artifact_ids") or []
        if prov["derivation"] in ("inferred", "observed"):
            problems += not refs or (prov["derivation"] == "inferred" and not prov.get("extractor"))
        if atom.get("valid_to") is not None:
            problems += atom["valid_to"] < atom["valid_from"]  # the bench writes one UTC shape: strings order
        problems += any(r not in artifact_ids for r in refs)
    problems += any(r not in atom_ids for a in doc["artifacts"] for r in a.get("atom_ids", []))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
