"""Redaction applied before anything is stored: emails, card numbers, API keys, configured secrets.

Order matters: configured secrets first (they are the most specific and may look like an
email or key), then API-key shapes, then emails, then card numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["Redactor", "luhn_valid"]

EMAIL = "[REDACTED:email]"
CARD = "[REDACTED:card]"
SECRET = "[REDACTED:secret]"
API_KEY = "[REDACTED:api_key]"

_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")

# Boundaries keep us from cutting keys out of longer identifiers.
_API_KEY_RE = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"sk-ant-[A-Za-z0-9_\-]{20,}"  # Anthropic
    r"|sk-(?:proj-)?[A-Za-z0-9_\-]{20,}"  # OpenAI (legacy and project keys)
    r"|AKIA[0-9A-Z]{16}(?![0-9A-Za-z])"  # AWS access key id
    r"|gh[pousr]_[A-Za-z0-9]{36,}"  # GitHub tokens
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"  # Google API key
    r")"
)
# `Bearer <token>`: 16+ token characters, so prose such as "bearer of bad news" survives.
_BEARER_RE = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*")

# A run of digits with single space/dash separators, not touching other digits.
_DIGIT_RUN_RE = re.compile(r"(?<!\d)\d(?:[ \-]?\d)*(?!\d)")
_GROUP_SPLIT_RE = re.compile(r"([ \-])")


def luhn_valid(digits: str) -> bool:
    """True when `digits` (only 0-9) passes the Luhn checksum."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# Leading digits of the major card networks (Amex/Diners/JCB 3, Visa 4, Mastercard 5 and
# 2221-2720, Discover/UnionPay/Maestro 6). Without this, one in ten 13-digit millisecond
# timestamps (which start with 1) would pass Luhn and be redacted.
_CARD_PREFIX_RE = re.compile(r"[3-6]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)")


def _is_card(digits: str) -> bool:
    return (
        13 <= len(digits) <= 19
        and _CARD_PREFIX_RE.match(digits) is not None
        and luhn_valid(digits)
    )


def _redact_cards_in_run(run: str) -> str:
    """Redact card numbers inside one digit run such as `555-1234 4111 1111 1111 1111`.

    The run may join a card with neighbouring numbers, so try windows of consecutive digit
    groups, leftmost and longest first.
    """
    if "-" not in run and " " not in run:
        return CARD if _is_card(run) else run
    parts = _GROUP_SPLIT_RE.split(run)  # groups at even indexes, separators at odd
    groups = parts[0::2]
    out: list[str] = []
    i = 0
    while i < len(groups):
        match_end = -1
        digits = ""
        for j in range(i, len(groups)):
            digits += groups[j]
            if len(digits) > 19:
                break
            if _is_card(digits):
                match_end = j
        if match_end >= 0:
            out.append(CARD)
            i = match_end + 1
        else:
            out.append(groups[i])
            i += 1
        if i < len(groups):
            out.append(parts[2 * i - 1])
    return "".join(out)


class Redactor:
    """Replaces sensitive substrings with `[REDACTED:<kind>]` markers.

    `secrets` are exact substrings (replaced longest first). With `enabled=False` every method
    is the identity, for users who store only synthetic data and want raw traces.
    """

    def __init__(self, secrets: Sequence[str] = (), enabled: bool = True) -> None:
        self.enabled = enabled
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))
        self._secret_re = (
            re.compile("|".join(re.escape(s) for s in self.secrets)) if self.secrets else None
        )

    def redact_text(self, s: str) -> str:
        """Return `s` with every sensitive substring replaced."""
        if not self.enabled or not s:
            return s
        if self._secret_re is not None:
            s = self._secret_re.sub(SECRET, s)
        s = _API_KEY_RE.sub(API_KEY, s)
        s = _BEARER_RE.sub(lambda m: f"{m.group(1)} {API_KEY}", s)
        if "@" in s:
            s = _EMAIL_RE.sub(EMAIL, s)
        return _DIGIT_RUN_RE.sub(lambda m: _redact_cards_in_run(m.group(0)), s)

    def redact(self, obj: Any) -> Any:
        """Redact strings anywhere inside dict values, lists and tuples; keys stay as they are.

        Other values pass through, except an int that is itself a Luhn-valid card number: it
        becomes the marker string, because a tool returning a card as a number leaks it too.
        """
        if not self.enabled:
            return obj
        if isinstance(obj, str):
            return self.redact_text(obj)
        if isinstance(obj, dict):
            return {k: self.redact(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.redact(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.redact(v) for v in obj)
        if type(obj) is int and obj > 0 and _is_card(str(obj)):
            return CARD
        return obj

    def __repr__(self) -> str:
        return f"Redactor(secrets=<{len(self.secrets)}>, enabled={self.enabled})"
