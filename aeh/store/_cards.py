"""Payment-card numbers: only digits that look like a card to a person, not every Luhn-valid run.

A number is a card when all of these hold:

- its leading digits are the IIN range of a real network, with that network's length;
- it passes the Luhn checksum;
- it is grouped like a printed card (4-4-4-4, 4-4-4-4-3, Amex 4-6-5, Diners 4-6-4, one
  separator kind throughout), or it is one contiguous run with card context nearby — a word
  such as "card", "visa" or "cc" in the text around it, or a dict key such as `card_number`.

Luhn alone redacts one random number in ten that has a card prefix: order numbers, EAN-13
codes and grouped amounts in correct answers became `[REDACTED:card]`. A contiguous 16-digit
order number and a Visa test number are the same digits, so context decides.
"""

from __future__ import annotations

import re

__all__ = ["CARD", "CARD_CONTEXT_RE", "is_card_number", "luhn_valid", "redact_cards"]

CARD = "[REDACTED:card]"

# (IIN prefix pattern, allowed lengths). Maestro (50, 56-58, 6x) is left out: its IINs and
# 12-19 lengths overlap most long numbers, and it is rarely typed out in agent text.
_NETWORKS: tuple[tuple[re.Pattern[str], frozenset[int]], ...] = (
    (re.compile(r"4"), frozenset({13, 16, 19})),  # Visa
    (re.compile(r"5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)"), frozenset({16})),  # Mastercard
    (re.compile(r"3[47]"), frozenset({15})),  # American Express
    (re.compile(r"6011|64[4-9]|65"), frozenset({16, 19})),  # Discover
    (re.compile(r"30[0-5]|3[689]"), frozenset({14, 16})),  # Diners Club
    (re.compile(r"35(?:2[89]|[3-8]\d)"), frozenset({16, 19})),  # JCB
    (re.compile(r"62"), frozenset({16, 19})),  # UnionPay
)

# Printed groupings by total length.
_GROUPINGS = {
    (4, 4, 4, 4), (4, 4, 4, 4, 3), (4, 6, 5), (4, 6, 4), (4, 4, 4, 1), (4, 4, 4, 2), (4, 4, 4, 3),
}

#: Words that make a contiguous digit run a card (looked for near the run, or in a dict key).
CARD_CONTEXT_RE = re.compile(
    r"(?i)(?:card|visa|master\s?card|amex|american\s?express|discover|diners|jcb|unionpay|credit|debit"
    r"|\bcc\b|\bcc_?num|\bpan\b|cardholder)"
)
_CONTEXT_CHARS = 32

# A run of digits with single space/dash separators, not touching other digits.
# Decimals ("1 234 567.89") are amounts: a run touching `.5`/`,5` on either side is left alone.
# Thirteen digits at least (the shortest card), so the many short numbers in text cost nothing.
# The first `\d` comes before the look-behinds so the scan skips non-digits quickly.
_DIGIT_RUN_RE = re.compile(r"\d(?<!\d\d)(?<!\d[.,]\d)(?:[ \-]?\d){12,}(?!\d|[.,]\d)")
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


def is_card_number(digits: str) -> bool:
    """A real network's IIN and length, and Luhn-valid (grouping and context are checked apart)."""
    n = len(digits)
    if n < 13 or n > 19:
        return False
    return any(n in lengths and prefix.match(digits) for prefix, lengths in _NETWORKS) and luhn_valid(digits)


def _has_context(text: str, start: int, end: int) -> bool:
    window = text[max(0, start - _CONTEXT_CHARS):start] + " " + text[end:end + _CONTEXT_CHARS]
    return CARD_CONTEXT_RE.search(window) is not None


def _redact_run(run: str, context: bool) -> str:
    """Redact card numbers inside one digit run such as `555-1234 4111 1111 1111 1111`.

    The run may join a card with neighbouring numbers, so windows of consecutive groups are
    tried, leftmost and longest first; a window counts when it is grouped like a card.
    """
    parts = _GROUP_SPLIT_RE.split(run)  # groups at even indexes, separators at odd
    groups, seps = parts[0::2], parts[1::2]
    if len(groups) == 1:
        return CARD if context and is_card_number(run) else run
    out: list[str] = []
    i = 0
    while i < len(groups):
        match_end = -1
        for j in range(i + 1, min(len(groups), i + 5)):
            window = groups[i:j + 1]
            if (tuple(len(g) for g in window) in _GROUPINGS and len(set(seps[i:j])) == 1
                    and is_card_number("".join(window))):
                match_end = j
        if match_end >= 0:
            out.append(CARD)
            i = match_end + 1
        else:
            out.append(groups[i])
            i += 1
        if i < len(groups):
            out.append(seps[i - 1])
    return "".join(out)


def redact_cards(text: str, context: bool = False) -> str:
    """`text` with card numbers replaced; `context=True` when the caller knows the text is about a card."""
    def one(m: re.Match[str]) -> str:
        return _redact_run(m.group(0), context or _has_context(text, m.start(), m.end()))

    return _DIGIT_RUN_RE.sub(one, text)
