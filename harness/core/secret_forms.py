"""The forms a secret takes on its way through a target: url-encoded, JSON-escaped, cut in two.

`SecretForms(secret).mask(text, mask)` replaces, in `text`:
- the secret whole, each character in any of its encodings (literal, %XX in either hex case, `+`
  for a space, \\uXXXX in either case, `\\/`, a JSON escape), mixed freely: one regular
  expression per secret, one alternation per character, so matching is linear in the text;
- every run of MIN_RUN or more consecutive characters of the secret (a fragment a cut buffer or an
  echo left at its edge), literal or in one of the encoded forms of the whole secret (url-encoded
  in either hex case, with `+` or `%20` for a space, JSON-escaped with or without `\\/`, every
  character as \\u00XX).
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote, quote_plus

MIN_RUN = 12  # shorter runs of a key are ordinary text (and no longer a usable key)


def _char_pattern(ch: str) -> str:
    code = ord(ch)
    forms = [re.escape(ch)]
    utf8 = ch.encode("utf-8")
    forms.append("".join(f"%(?i:{b:02x})" for b in utf8))
    # one backslash, or several: an escape inside a string that was escaped again (repr, JSON in JSON)
    if code < 0x10000:
        forms.append(rf"\\+u(?i:{code:04x})")
    if ch == " ":
        forms.append(r"\+")
    if ch in '/"\\':
        forms.append(r"\\+" + re.escape(ch))
    return "(?:" + "|".join(forms) + ")"


def encoded_forms(secret: str) -> list[str]:
    """The secret in each encoding it may be met in, whole (the literal form first)."""
    json_escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    every_char = "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in secret)
    forms = [
        secret,
        quote(secret, safe=""), quote_plus(secret, safe=""),
        json_escaped, json_escaped.replace("/", "\\/"),
        json.dumps(secret)[1:-1],  # non-ASCII as \\uXXXX
        every_char, every_char.upper().replace("\\U", "\\u"),
    ]
    forms += [_lower_hex(f) for f in forms[1:3]]
    forms += [f.replace("\\", "\\\\") for f in forms if "\\" in f]  # escaped again (repr, JSON in JSON)
    return list(dict.fromkeys(f for f in forms if f))


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


class SecretForms:
    """Everything that must not survive of one secret, compiled once."""

    def __init__(self, secret: str, min_run: int = MIN_RUN) -> None:
        self.secret = secret
        self.whole = re.compile("".join(_char_pattern(c) for c in secret)) if secret else None
        self.forms = encoded_forms(secret)
        self.runs = [_Runs(form, min_run) for form in self.forms] if len(secret) >= min_run else []
        # without an escape character in the text, an encoded form cannot be there (the literal one is
        # masked by the caller and by the runs): the regular expression is then not run at all
        self.escapes = "%\\+" if " " in secret else "%\\"

    def mask(self, text: str, mask: str) -> str:
        if self.whole is not None and any(c in text for c in self.escapes) and self.whole.search(text):
            text = self.whole.sub(mask.replace("\\", "\\\\"), text)
        escaped = any(c in text for c in "%\\+")
        for runs in self.runs:
            # a run of an encoded form without its escape characters is a run of the literal form
            if (runs.form is not self.forms[0] and not escaped) or not runs.may_be_in(text):
                continue
            form, windows = runs.form, runs.windows
            for _ in range(len(text) + 1):  # each round masks at least one run
                hit = next((w for w in windows if w in text), None)
                if hit is None:
                    break
                text = _mask_run(text, form, hit, mask)
        return text


class _Runs:
    """The runs of `size` characters of one form, with a cheap test that none can be in a text: a run
    of `size` >= 2q characters holds at least one of the form's q-grams at an offset divisible by q."""

    def __init__(self, form: str, size: int) -> None:
        self.form = form
        self.windows = list(dict.fromkeys(form[i:i + size] for i in range(len(form) - size + 1)))
        q = max(1, size // 2)
        self.grams = list(dict.fromkeys(form[i:i + q] for i in range(0, len(form) - q + 1, q)))

    def may_be_in(self, text: str) -> bool:
        return any(g in text for g in self.grams)


def _mask_run(text: str, form: str, window: str, mask: str) -> str:
    """Mask the longest run of `form` around the first occurrence of `window` in `text`."""
    at = text.find(window)
    offset = form.find(window)
    start, end = at, at + len(window)
    f_start, f_end = offset, offset + len(window)
    while f_end < len(form) and end < len(text) and text[end] == form[f_end]:
        end += 1
        f_end += 1
    while f_start > 0 and start > 0 and text[start - 1] == form[f_start - 1]:
        start -= 1
        f_start -= 1
    return text[:start] + mask + text[end:]
