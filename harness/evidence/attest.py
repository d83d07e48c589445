"""Signed certification: the bundle as an in-toto Statement in a DSSE envelope, signed with Ed25519.

- The Statement (https://in-toto.io/Statement/v1) names its subject, the run's report.jsonl, by SHA-256,
  and carries the bundle (certify.py) as its predicate, of type PREDICATE_TYPE.
- The envelope (DSSE, https://github.com/secure-systems-lab/dsse) signs the Statement's exact bytes,
  through DSSE's pre-authentication encoding, with the vendor's Ed25519 key (`cryptography`).
- A key is named by its fingerprint, `SHA256:` and the hex SHA-256 of the raw 32-byte public key;
  the envelope's `keyid` is that fingerprint and the predicate carries the public key itself, so
  `verify` without `--key` can still say which key signed, and with `--key` insists on that key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..core.results import HarnessError

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://memconform.dev/attestation/certification/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
SUBJECT_NAME = "report.jsonl"


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed, so the type cannot be swapped."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise HarnessError(f"{what} is not a base64 string")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise HarnessError(f"{what} is not valid base64") from None


# --- keys -----------------------------------------------------------------------------------

def public_raw(public_key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


def fingerprint(public_key: Any) -> str:
    return "SHA256:" + hashlib.sha256(public_raw(public_key)).hexdigest()


def keygen(private_path: Path) -> tuple[Path, str]:
    """A new Ed25519 key: the private key (PKCS#8 PEM, mode 0600) and `<file>.pub` beside it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    public_path = private_path.with_name(private_path.name + ".pub")
    for path in (private_path, public_path):
        if path.exists():
            raise HarnessError(f"{path} exists: keygen never overwrites a key")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    private_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    public_path.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                          serialization.PublicFormat.SubjectPublicKeyInfo))
    return public_path, fingerprint(key.public_key())


def load_private(path: Path) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise HarnessError(f"cannot read the private key {path}: {exc} (make one with `memconform keygen`)") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise HarnessError(f"{path} is not an Ed25519 private key (make one with `memconform keygen`)")
    return key


def load_public(text: bytes, where: str) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(text)
    except (ValueError, TypeError) as exc:
        raise HarnessError(f"{where}: not a PEM public key: {exc}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise HarnessError(f"{where}: not an Ed25519 public key")
    return key


def public_pem(public_key: Any) -> str:
    from cryptography.hazmat.primitives import serialization

    return str(public_key.public_bytes(serialization.Encoding.PEM,
                                       serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii"))


# --- statement and envelope ------------------------------------------------------------------

def statement(report_text: str, predicate: dict[str, Any]) -> dict[str, Any]:
    return {"_type": STATEMENT_TYPE,
            "subject": [{"name": SUBJECT_NAME, "digest": {"sha256": hashlib.sha256(report_text.encode("utf-8")).hexdigest()}}],
            "predicateType": PREDICATE_TYPE, "predicate": predicate}


def sign(statement_doc: dict[str, Any], private_key: Any) -> dict[str, Any]:
    payload = json.dumps(statement_doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    sig = private_key.sign(pae(PAYLOAD_TYPE, payload))
    return {"payloadType": PAYLOAD_TYPE, "payload": _b64(payload),
            "signatures": [{"keyid": fingerprint(private_key.public_key()), "sig": _b64(sig)}]}


def is_envelope(doc: Any) -> bool:
    return isinstance(doc, dict) and "payload" in doc and "signatures" in doc


def open_envelope(envelope: dict[str, Any], trusted: Any | None) -> tuple[dict[str, Any], str, list[str]]:
    """(statement, the fingerprint of the key that signed, problems). `trusted`: the only key accepted;
    None: the key the predicate carries (the report then names it; who holds it is for the reader to know)."""
    from cryptography.exceptions import InvalidSignature

    problems: list[str] = []
    if envelope.get("payloadType") != PAYLOAD_TYPE:
        problems.append(f"payloadType {envelope.get('payloadType')!r}, not {PAYLOAD_TYPE!r}")
    payload = _unb64(envelope.get("payload"), "payload")
    from ..core.json_reader import STRICT, JsonRejected, read_json

    try:  # a member named twice: readers that keep the first and the last would see two statements
        doc = read_json(payload, STRICT)
    except JsonRejected as exc:
        if exc.kind == "duplicate":
            return {}, "", [*problems, f"the signed Statement names a member twice ({exc.message})"]
        raise HarnessError(f"the payload is not JSON: {exc.message}") from None
    if not isinstance(doc, dict) or doc.get("_type") != STATEMENT_TYPE or doc.get("predicateType") != PREDICATE_TYPE:
        raise HarnessError(f"the payload is not an in-toto Statement of type {PREDICATE_TYPE}")
    signer = (doc.get("predicate") or {}).get("signer") or {}
    key = trusted
    if key is None:
        key = load_public(str(signer.get("public_key", "")).encode("utf-8"), "the key inside the bundle")
    named = fingerprint(key)
    if signer.get("keyid") != named and trusted is None:
        problems.append(f"the bundle's signer keyid {signer.get('keyid')!r} is not its own key's fingerprint {named}")
    sigs = envelope.get("signatures")
    if not isinstance(sigs, list) or not sigs:
        return doc, named, [*problems, "the envelope has no signature"]
    good = False
    for s in sigs:
        if not isinstance(s, dict):
            continue
        try:
            key.verify(_unb64(s.get("sig"), "a signature"), pae(str(envelope.get("payloadType")), payload))
            good = True
        except (InvalidSignature, HarnessError):
            continue
    if not good:
        problems.append(f"no signature by key {named} over this payload: the bundle was changed or signed by another key")
    return doc, named, problems
