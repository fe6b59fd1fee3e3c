"""URL slugs for article titles.

``slugify(text)`` turns a title into a lowercase ASCII slug: letters and
digits are kept, every other run of characters becomes one separator, and
the slug never starts or ends with a separator. Accented and other
compatibility characters are reduced to their plain ASCII letters first
("Crème" -> "creme", "ﬁle" -> "file", full-width "１２" -> "12"), and case
is folded the Unicode way ("Straße" -> "strasse"). Characters with no ASCII
equivalent (for example CJK) are dropped.

``max_length`` cuts the slug to at most that many characters without
leaving a trailing separator. ``separator`` defaults to ``-``.
"""

from __future__ import annotations

import re
import unicodedata

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def slugify(text: str, max_length: int | None = None, separator: str = "-") -> str:
    if not separator:
        raise ValueError("separator must be a non-empty string")
    slug = _NOT_ALNUM.sub(separator, _fold(text)).strip(separator)
    if max_length is not None:
        if max_length < 1:
            raise ValueError("max_length must be at least 1")
        slug = slug[:max_length].rstrip(separator)
    return slug


def unique_slug(text: str, taken: set[str], max_length: int | None = None) -> str:
    """Return a slug for ``text`` not in ``taken``, adding -2, -3, ... if needed."""
    base = slugify(text, max_length=max_length) or "untitled"
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"-{n}"
        stem = (
            base if max_length is None else base[: max_length - len(suffix)].rstrip("-")
        )
        candidate, n = stem + suffix, n + 1
    return candidate
