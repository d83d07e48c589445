"""The secrets a target URL carries, and the target as every output names it (docs/bounds.md).

A key anywhere in the target URL (userinfo, a credential-named query parameter, a path segment shaped
like a known token) joins the run's secrets: masked in the report, the terminal, the reproduce lines
and the signed bundle.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from ..core.redact import Redactor


def url_secrets(target: str | None) -> list[str]:
    """The secrets a target URL carries: its userinfo (the password, or the user name when it is alone:
    a token), the value of every query (or fragment) parameter whose name says it is a credential or
    whose value has a well-known token's shape, every path segment with such a shape, and the segment
    after one whose name says it is a credential (`/api_key/VALUE`). They join the run's secrets:
    masked in every output and in the signed bundle."""
    from ..kit.shared_rules import secret_key, secret_value

    if not target or "://" not in target:
        return []
    try:
        parts = urlsplit(target)
        password, user = parts.password, parts.username
    except ValueError:
        return []
    found = [password] if password else [user] if user else []
    for name, value in [*parse_qsl(parts.query), *parse_qsl(parts.fragment)]:
        if value and (secret_key(name) or secret_value(value)):
            found.append(value)
    segments = [unquote(seg) for seg in parts.path.split("/")]
    for before, seg in zip(["", *segments], segments, strict=False):  # /sk-..., or /api_key/VALUE
        if seg and (secret_value(seg) or (before and secret_key(before))):
            found.append(seg)
    encoded = [s for s in (parts.password, parts.username) if s and s in found]  # as written, percent-encoded too
    raw_userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    return list(dict.fromkeys([*found, *encoded, *([raw_userinfo] if raw_userinfo else [])]))


def shown_target(target: str | None, redactor: Redactor) -> str | None:
    """The target as every output and the bundle show it: a URL's userinfo and secret query values
    masked whatever their length, then every secret of the run."""
    if not target:
        return target
    if "://" in target:
        try:
            parts = urlsplit(target)
            netloc = parts.netloc
            if "@" in netloc:
                netloc = "***@" + netloc.rpartition("@")[2]
            target = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
        except ValueError:
            pass
    return redactor.text(target)
