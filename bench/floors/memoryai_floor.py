"""Rule-including floor for a MemoryAI bundle: the straightforward Python (orjson) checking every rule of
the MemoryAI spec's §3, §5 Level 1 and §6 that `memconform validate` judges on a bundle, as it judges them.
Exit 0 when memconform would say valid, 1 when it would say invalid (tests/test_bench_floors.py holds
the two to the same answer on valid bundles and on each planted fault).

What decides the exit code (memconform's MUST and Level 1 clause checks): format and version (§3.1); the
manifest's scope, embedding_model and embedding_dim (§3.1); each chunk an object with string content and
memory_type, the ChunkRecord's types (id, content_hash hex, embedding_model, tags, importance, is_pinned,
decay_score, the ISO-8601 times, metadata), its zone, tier and 0..1 ranges (§3.2); the EdgeRecord's and
EntityRecord's fields (§3.3, §3.4); each embedding null or strict base64 of whole float32 values, as many
as manifest.embedding_dim (§3.5); the checksum under any of the four readings of §3.6 that
suites/memoryai/errata.md E1 accepts (literal UTF-8 or ASCII escapes, Python's or JSON.stringify's
numbers), hex of either case; accurate manifest.counts (§5); no credential- or audit-named field with a
value and no token-shaped string anywhere but the chunks' embeddings (§6). Also checked, as warnings that
leave the exit code alone (SHOULD and MAY rules): content_hash (as written or NFC, errata E2), the
memory_type vocabulary (§3.7) and the optional envelope fields' shapes (§3).

What is a date-time and what is a credential is read from memconform's shared rule definitions
(memconform.kit.shared_rules: the spec's date reading, the key words and the token shapes); everything else
is this file's own. The JSON parse is orjson's (duplicate keys and the strict reader's other bounds are
memconform's own, beyond the spec's rules). The literal checksum is written by orjson, each float it
writes otherwise than Python's json (magnitude below 1e-4) put in as a fragment of repr; the other
readings are tried only when that digest is not the one claimed.

    python bench/floors/memoryai_floor.py FILE
"""

import binascii
import hashlib
import json
import re
import sys
import unicodedata

import orjson
from memconform.kit.shared_rules import SECRET_VALUE, audit_key, parse_datetime, secret_key

FORMAT = "memoryai-bundle"
SECTIONS = ("chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents")
SCOPES = ("full", "dna_only", "since")
ZONES = ("standard", "important", "critical", "ephemeral")
TIERS = ("hot", "warm", "cold")
CORE_TYPES = ("fact", "episodic", "goal", "error", "preference", "decision", "identity", "pitfall", "procedure",
              "life_event")
HEX64 = re.compile(r"[0-9a-fA-F]{64}")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
EMPTY = (None, "", [], {}, False, 0)  # a credential-named field holding one of these holds nothing


def iso(value):
    return parse_datetime(value, "memoryai") is not None


def integer(value):
    return type(value) is int  # orjson gives int, bool, float: a bool is no integer


def number(value):
    return type(value) is int or type(value) is float


def chunk_problems(chunk, dim):
    """The blocking problems of one chunk (§3.2, §3.5)."""
    if type(chunk) is not dict:
        return 1
    get = chunk.get
    bad = type(get("content")) is not str or type(get("memory_type")) is not str
    if "id" in chunk and not integer(chunk["id"]):
        bad = True
    if "content_hash" in chunk and not (type(chunk["content_hash"]) is str and HEX64.fullmatch(chunk["content_hash"])):
        bad = True
    if "embedding_model" in chunk and type(chunk["embedding_model"]) is not str:
        bad = True
    if "tags" in chunk and not (type(chunk["tags"]) is list and all(type(t) is str for t in chunk["tags"])):
        bad = True
    if "is_pinned" in chunk and type(chunk["is_pinned"]) is not bool:
        bad = True
    if "metadata" in chunk and type(chunk["metadata"]) is not dict:
        bad = True
    for name in ("created_at", "accessed_at"):
        if name in chunk and not iso(chunk[name]):
            bad = True
    if "valid_until" in chunk and chunk["valid_until"] is not None and not iso(chunk["valid_until"]):
        bad = True
    if "zone" in chunk and chunk["zone"] not in ZONES:
        bad = True
    if "tier" in chunk and chunk["tier"] not in TIERS:
        bad = True
    for name in ("importance", "decay_score"):
        if name in chunk:
            value = chunk[name]
            if not number(value) or not 0 <= value <= 1:
                bad = True
    embedding = get("embedding")
    if embedding is not None:
        if type(embedding) is not str:
            return 1
        try:
            size = len(binascii.a2b_base64(embedding, strict_mode=True))
        except (binascii.Error, ValueError):
            return 1
        if size % 4 or not integer(dim) or size != 4 * dim:
            bad = True
    return int(bad)


def chunk_warnings(chunk):
    """content_hash as written or NFC (§3.2, a SHOULD), the memory_type vocabulary (§3.7, a MAY)."""
    if type(chunk) is not dict:
        return 0
    found = 0
    content, claimed = chunk.get("content"), chunk.get("content_hash")
    if type(content) is str and type(claimed) is str:
        claimed = claimed.lower()
        if hashlib.sha256(content.encode("utf-8")).hexdigest() != claimed:
            normal = unicodedata.normalize("NFC", content)
            found += normal == content or hashlib.sha256(normal.encode("utf-8")).hexdigest() != claimed
    kind = chunk.get("memory_type")
    found += type(kind) is str and kind not in CORE_TYPES and not kind.startswith("x_")
    return found


EDGE_TYPES = {"chunk_a": integer, "chunk_b": integer, "edge_type": lambda v: type(v) is str, "weight": number,
              "co_activation_count": integer, "created_at": iso, "updated_at": iso}


def edge_problems(edge):
    if type(edge) is not dict:
        return 1
    return int(any(name in edge and not ok(edge[name]) for name, ok in EDGE_TYPES.items())
               or any(name not in edge for name in ("chunk_a", "chunk_b", "edge_type")))


def entity_problems(entity):
    if type(entity) is not dict or type(entity.get("name")) is not str:
        return 1
    return int(("frequency" in entity and not integer(entity["frequency"]))
               or ("is_dna" in entity and type(entity["is_dna"]) is not bool)
               or any(name in entity and not iso(entity[name]) for name in ("first_seen", "last_seen")))


def credentials_and_fragments(doc):
    """§6: credential-named fields with a value and token-shaped strings, everywhere but the chunks'
    embeddings (and a "chunks" that is no array, which memconform reads no record of). The same walk puts
    each float orjson writes otherwise than json.dumps (0 < |x| < 1e-4) in as a fragment of its repr, so
    orjson's text is the literal reading's. Returns (credentials found, the floats replaced: (container, key,
    float) each)."""
    judged = {}  # key -> is it a credential or audit name (a bundle repeats its keys)
    found = 0
    replaced = []
    stack = [(doc, "bundle")]  # (container, how it is read: "bundle", "chunks", "chunk", "scan", "skip")
    while stack:
        node, how = stack.pop()
        is_dict = type(node) is dict
        for key, value in node.items() if is_dict else enumerate(node):
            kind = type(value)
            if how == "bundle" and key == "chunks":
                inner = "chunks" if kind is list else "skip"
            elif how == "chunks":
                inner = "chunk" if kind is dict else "scan"
            elif how == "skip" or (how == "chunk" and key == "embedding"):
                inner = "skip"
            else:
                inner = "scan"
            if kind is dict or kind is list:
                if inner == "scan" and type(key) is str and credential(judged, key) and value not in EMPTY:
                    found += 1
                    inner = "skip"  # reported whole, as memconform does: not walked for more
                stack.append((value, inner))
                continue
            if kind is float and 0 < abs(value) < 1e-4:
                node[key] = orjson.Fragment(repr(value).encode())
                replaced.append((node, key, value))
            if inner != "scan":
                continue
            if type(key) is str and credential(judged, key) and value not in EMPTY:
                found += 1
            elif kind is str and len(value) < 100_000 and SECRET_VALUE.search(value):
                found += 1
    return found, replaced


def credential(judged, key):
    seen = judged.get(key)
    if seen is None:
        seen = judged[key] = secret_key(key) or audit_key(key)
    return seen


def es_number(value):
    """A float as JSON.stringify writes it (shortest round trip digits, exponent past 1e21 or below 1e-6)."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + int(exponent or 0) - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    digits = digits.rstrip("0") or "0"
    if len(digits) <= point <= 21:
        return sign + digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    shown = digits if len(digits) == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{shown}e{'+' if point - 1 > 0 else '-'}{abs(point - 1)}"


def es_json(value, ascii_only, out):
    kind = type(value)
    if kind is dict:
        out.append("{")
        for i, key in enumerate(sorted(value, key=lambda k: k.encode("utf-16-be"))):  # JavaScript's key order
            out.append("," if i else "")
            out.append(json.dumps(key, ensure_ascii=ascii_only) + ":")
            es_json(value[key], ascii_only, out)
        out.append("}")
    elif kind is list:
        out.append("[")
        for i, item in enumerate(value):
            out.append("," if i else "")
            es_json(item, ascii_only, out)
        out.append("]")
    elif kind is float:
        out.append(es_number(value))
    else:
        out.append(json.dumps(value, ensure_ascii=ascii_only))


def checksum_ok(body, claimed, replaced):
    """§3.6 under the four readings of errata E1; the first, the usual one, by orjson (with the fragments of
    credentials_and_fragments), the others only when it is not the digest claimed (the floats put back)."""
    if hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest() == claimed:
        return True
    for node, key, value in replaced:
        node[key] = value
    ascii_text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    if hashlib.sha256(ascii_text.encode("utf-8")).hexdigest() == claimed:
        return True
    for ascii_only in (False, True):
        out = []
        es_json(body, ascii_only, out)
        if hashlib.sha256("".join(out).encode("utf-8")).hexdigest() == claimed:
            return True
    return False


def envelope_warnings(doc, manifest):
    """The optional fields' shapes (§3, SHOULD)."""
    shapes = ((doc, "generator", lambda v: type(v) is str and v.strip() != ""), (doc, "exported_at", iso),
              (manifest, "tenant_id", lambda v: v is None or (type(v) is str and UUID.fullmatch(v) is not None)),
              (manifest, "tenant_name", lambda v: v is None or type(v) is str),
              (manifest, "tenant_plan", lambda v: v is None or type(v) is str),
              (manifest, "since", lambda v: v is None or iso(v)),
              (manifest, "counts", lambda v: type(v) is dict and all(integer(n) and n >= 0 for n in v.values())))
    found = sum(name in node and not ok(node[name]) for node, name, ok in shapes)
    return found + sum(section in doc and type(doc[section]) is not list for section in SECTIONS)


def main(path):
    with open(path, "rb") as fh:
        try:
            doc = orjson.loads(fh.read())
        except orjson.JSONDecodeError:
            return 1
    if type(doc) is not dict:
        return 1
    problems = 0
    warnings = 0
    problems += doc.get("format") != FORMAT
    problems += not (integer(doc.get("version")) and doc["version"] == 1)  # §3.1 an integer >= 1; §7 this protocol is v1
    manifest = doc.get("manifest")
    if type(manifest) is not dict:
        return 1
    problems += not all(name in manifest for name in ("scope", "embedding_model", "embedding_dim"))
    problems += "scope" in manifest and manifest["scope"] not in SCOPES
    problems += "embedding_model" in manifest and type(manifest["embedding_model"]) is not str
    problems += "embedding_dim" in manifest and not (integer(manifest["embedding_dim"]) and manifest["embedding_dim"] >= 0)
    dim = manifest.get("embedding_dim")
    sections = {name: doc[name] if type(doc.get(name)) is list else [] for name in SECTIONS}
    for chunk in sections["chunks"]:
        problems += chunk_problems(chunk, dim)
        warnings += chunk_warnings(chunk)
    problems += sum(map(edge_problems, sections["memory_edges"]))
    problems += sum(map(entity_problems, sections["entities"]))
    counts = manifest.get("counts")
    if type(counts) is not dict:
        problems += 1
    else:
        problems += any(counts.get(name, 0 if not records else "<absent>") != len(records)
                        for name, records in sections.items())
    warnings += envelope_warnings(doc, manifest)
    credentials, replaced = credentials_and_fragments(doc)
    problems += credentials
    claimed = manifest.get("checksum")
    body = dict(doc, manifest={k: v for k, v in manifest.items() if k != "checksum"})
    problems += type(claimed) is not str or not checksum_ok(body, claimed.lower(), replaced)
    print(f"{'invalid' if problems else 'valid'} ({problems} problems, {warnings} warnings)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
