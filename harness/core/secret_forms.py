"""The forms a secret takes on its way through a target: url-encoded, JSON-escaped, base64, cut in two.

`SecretForms(secret).mask(text, mask)` replaces, in `text`:
- the secret whole, each character in any of its encodings (literal, %XX in either hex case, `+`
  for a space, \\uXXXX in either case, `\\/`, a JSON escape, an HTML character reference), mixed
  freely: one regular expression per secret, one alternation per character, so matching is linear
  in the text;
- every run of MIN_RUN or more consecutive characters of the secret (a fragment a cut buffer or an
  echo left at its edge), literal, or with its characters escaped in any of those forms, one form
  throughout (url-encoded, JSON-escaped, every character as \\u00XX) or mixed character by
  character (an encoder that escapes only some characters, part %XX-encoded, part \\u-escaped):
  the text is decoded (each escape to its character; only where a run is then found, again,
  remembering where each character came from), runs of the secret are found in the decoded text by
  one alternation of its MIN_RUN-character windows, and the text they came from is masked; linear
  in the text. For a secret holding a backslash or a control character, whose JSON escapes the
  decoding does not read, runs of each encoded form of the whole secret are masked too;
- the secret base64-encoded, standard and url-safe alphabets, padded or not, and at each of the
  three alignments it can have inside a larger base64 stream (the base64 of prefix+secret for a
  prefix of 0, 1 or 2 bytes: the characters that depend on the secret's bytes alone), whole and in
  runs of MIN_RUN or more of its characters.
"""

from __future__ import annotations

import base64
import bisect
import functools
import json
import re
from urllib.parse import quote, quote_plus

MIN_RUN = 12  # shorter runs of a key are ordinary text (and no longer a usable key)
# a base64 form shorter than this is ordinary text too: a 1-character key's inner alignment is one
# letter, which would otherwise be masked in every word (the key itself is still masked whatever its length)
MIN_BASE64_FORM = 8


def _char_pattern(ch: str, first: bool = False) -> str:
    """`ch` in any of its forms. The first character of a match enters a run of backslashes only at
    its first one: with the runs read possessively, no backslash is read more than a bounded number
    of times, whatever the text."""
    code = ord(ch)
    forms = [re.escape(ch)]
    utf8 = ch.encode("utf-8")
    forms.append("".join(f"%(?i:{b:02x})" for b in utf8))
    # one backslash, or several: an escape inside a string that was escaped again (repr, JSON in JSON)
    backslashes = r"(?<!\\)\\++" if first else r"\\++"
    if code < 0x10000:
        forms.append(backslashes + f"u(?i:{code:04x})")
    if ch == " ":
        forms.append(r"\+")
    if ch in '/"\\':
        forms.append(backslashes + re.escape(ch))
    forms.append(f"&#(?:0*{code}|[xX]0*(?i:{code:x}));")  # an HTML character reference
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


def base64_forms(secret: str) -> list[str]:
    """The secret's base64 in both alphabets: whole (padded and not), and at each alignment inside a
    larger stream the run of characters that depends on the secret's bytes alone (longest first)."""
    data = secret.encode("utf-8")
    forms: list[str] = []
    for prefix in range(3):
        encoded = base64.b64encode(b"\0" * prefix + data).decode("ascii")
        first = -(-8 * prefix // 6)  # the first character made of the secret's bits only
        last = (8 * (prefix + len(data))) // 6  # one past the last such character
        inner = encoded[first:last]
        whole = [encoded, encoded.rstrip("=")] if prefix == 0 else []
        for form in [*whole, inner]:
            forms += [form, form.translate(_URLSAFE)]
    return sorted(dict.fromkeys(f for f in forms if f), key=len, reverse=True)


_URLSAFE = str.maketrans("+/", "-_")


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


class SecretForms:
    """Everything that must not survive of one secret, compiled once."""

    def __init__(self, secret: str, min_run: int = MIN_RUN) -> None:
        self.secret = secret
        self.whole = re.compile("".join(_char_pattern(c, i == 0) for i, c in enumerate(secret))) if secret else None
        self.forms = encoded_forms(secret)
        self.base64 = [f for f in base64_forms(secret) if len(f) >= MIN_BASE64_FORM] if secret else []
        long_enough = len(secret) >= min_run
        # runs with their characters escaped are found by the decoding pass (_MixedRuns), which reads
        # every escape these forms use but two: a backslash escaped and a control character (\\n)
        by_form = self.forms if any(c == "\\" or c < " " for c in secret) else self.forms[:1]
        self.runs = [_Runs(form, min_run) for form in by_form] if long_enough else []
        self.base64_runs = [_Runs(form, min_run) for form in self.base64 if len(form) >= min_run] if long_enough else []
        self.mixed = _MixedRuns(secret, min_run) if long_enough else None
        # without an escape character in the text, an encoded form cannot be there (the literal one is
        # masked by the caller and by the runs): the regular expression is then not run at all
        self.escapes = "%\\+&" if " " in secret else "%\\&"

    def mask(self, text: str, mask: str) -> str:
        if self.whole is not None and any(c in text for c in self.escapes) and self.whole.search(text):
            text = self.whole.sub(mask.replace("\\", "\\\\"), text)
        for form in self.base64:  # whole, from MIN_BASE64_FORM characters (runs below only from MIN_RUN)
            if form in text:
                text = text.replace(form, mask)
        escaped = any(c in text for c in "%\\+&")
        for runs in self.runs + self.base64_runs:
            # a run of an encoded form without its escape characters is a run of the literal form
            if (runs.form in self.forms[1:] and not escaped) or not runs.may_be_in(text):
                continue
            spans = runs.spans(text)
            if spans:
                text = _mask_spans(text, spans, mask)
        if self.mixed is not None and any(c in text for c in "%\\+&"):
            text = self.mixed.mask(text, mask)
        return text


class _Runs:
    """The runs of `size` or more characters of one form, found in one pass: an alternation of the
    form's `size`-character windows, each hit grown to the longest run of the form there. With a
    cheap test that none can be in a text: a run of `size` >= 2q characters holds at least one of the
    form's q-grams at an offset divisible by q."""

    def __init__(self, form: str, size: int) -> None:
        self.form = form
        windows = dict.fromkeys(form[i:i + size] for i in range(len(form) - size + 1))
        self.windows = re.compile("|".join(re.escape(w) for w in windows))
        q = max(1, size // 2)
        self.grams = list(dict.fromkeys(form[i:i + q] for i in range(0, len(form) - q + 1, q)))

    def may_be_in(self, text: str) -> bool:
        return any(g in text for g in self.grams)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where runs of the form are in `text` (they may overlap: _mask_spans merges them)."""
        return [self._longest(text, m.start(), m.end()) for m in self.windows.finditer(text)]

    def _longest(self, text: str, start: int, end: int) -> tuple[int, int]:
        """The window at text[start:end] grown, both ways, to the longest run of the form there
        (at most the form's length: a text is read a bounded number of times)."""
        form = self.form
        offset = form.find(text[start:end])
        f_start, f_end = offset, offset + (end - start)
        while f_end < len(form) and end < len(text) and text[end] == form[f_end]:
            end += 1
            f_end += 1
        while f_start > 0 and start > 0 and text[start - 1] == form[f_start - 1]:
            start -= 1
            f_start -= 1
        return start, end


# one escaped character: %XX (a UTF-8 sequence of them for a character beyond ASCII), \\uXXXX or
# \\/ \\" behind one backslash or several (escaped again), an HTML character reference. A run of
# backslashes is entered only at its first one, so no text makes the search backtrack far.
_ESCAPE = re.compile(
    r"%[0-7][0-9A-Fa-f]|(?:%[CcDd][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f])"
    r"|%[Ee][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){2}|%[Ff][0-7](?:%[89ABab][0-9A-Fa-f]){3})"
    r"|(?<!\\)\\++(?:u[0-9A-Fa-f]{4}|[/\"])|&#(?:[0-9]{1,7}|[xX][0-9A-Fa-f]{1,6});"
)


@functools.lru_cache(maxsize=4096)
def _unescape(escape: str) -> str:
    """The character one _ESCAPE match stands for (the match itself when it stands for none)."""
    if escape[0] == "%":
        try:
            return bytes.fromhex(escape.replace("%", "")).decode("utf-8")
        except ValueError:
            return escape
    if escape[0] == "&":
        digits = escape[2:-1]
        code = int(digits[1:], 16) if digits[:1] in "xX" else int(digits)
        return chr(code) if code < 0x110000 else escape
    last = escape.lstrip("\\")
    return chr(int(last[1:], 16)) if last[0] == "u" else last


class _Decoded:
    """A text with every escape replaced by its character, and the way back to the text's positions."""

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self.starts: list[int] = []  # decoded position of each escape's character
        self.spans: list[tuple[int, int]] = []  # where that escape is in the text
        self.shifts: list[int] = []  # text position minus decoded position after each escape
        shift = 0
        pieces: list[str] = []
        at = 0
        for m in pattern.finditer(text):
            char = _unescaped(m)
            pieces += [text[at:m.start()], char]
            self.starts.append(m.start() - shift)
            self.spans.append((m.start(), m.end()))
            shift += (m.end() - m.start()) - len(char)
            self.shifts.append(shift)
            at = m.end()
        pieces.append(text[at:])
        self.text = "".join(pieces)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Where the decoded text[start:end] came from in the text."""
        return self._source(start)[0], self._source(end - 1)[1]

    def _source(self, pos: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.starts, pos) - 1
        if i >= 0 and pos == self.starts[i]:
            return self.spans[i]
        shift = self.shifts[i] if i >= 0 else 0
        return pos + shift, pos + shift + 1


_ESCAPE_PLUS = re.compile(_ESCAPE.pattern + r"|\+")


class _MixedRuns:
    """Runs of MIN_RUN or more characters of the secret, each character in any of its forms: runs of
    the secret in the text decoded, mapped back to the text they came from."""

    def __init__(self, secret: str, size: int) -> None:
        self.runs = _Runs(secret, size)
        # `+` stands for a space in url-encoded text, for itself elsewhere: decode it both ways when both occur
        self.plus = [True, False] if " " in secret and "+" in secret else [" " in secret]

    def mask(self, text: str, mask: str) -> str:
        for plus_is_space in self.plus if "+" in text else self.plus[:1]:
            pattern = _ESCAPE_PLUS if plus_is_space else _ESCAPE
            # most texts hold no run: decode without keeping the way back first, and only where a
            # run is found decode again, keeping it
            if self.runs.windows.search(pattern.sub(_unescaped, text)) is None:
                continue
            decoded = _Decoded(text, pattern)
            spans = [decoded.span(start, end) for start, end in self.runs.spans(decoded.text)]
            if spans:
                text = _mask_spans(text, spans, mask)
        return text


def _unescaped(m: re.Match[str]) -> str:
    return " " if m.group() == "+" else _unescape(m.group())


def _mask_spans(text: str, spans: list[tuple[int, int]], mask: str) -> str:
    """`text` with each span (merged where they overlap) replaced by one mask."""
    out: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if end <= at:
            continue
        start = max(start, at)
        if start > at or not out:
            out.append(text[at:start])
            out.append(mask)
        at = end
    out.append(text[at:])
    return "".join(out)
