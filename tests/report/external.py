"""Find references to anything outside the file: src/href attributes, JS/CSS imports, CSS url()."""

from __future__ import annotations

import re

_ATTR = re.compile(r"""(?<![\w-])(?:src|href|srcset|action|poster)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_JS_IMPORT = re.compile(r"""\bimport\s*(?:\(\s*|[\w*{}\s,]+from\s*)["']([^"']+)["']""")
_CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*["']?([^"')\s;]+)""", re.I)
_CSS_URL = re.compile(r"""url\(\s*["']?([^"')\s]+)""", re.I)
_COMMENT = re.compile(r"/\*.*?\*/|<!--.*?-->", re.S)


def _external(url: str) -> bool:
    u = url.strip().lower()
    if not u or u.startswith(("#", "data:", "about:blank", "javascript:void")):
        return False
    return True  # anything else (http, //host, file, relative path) would be fetched


def external_refs(html: str) -> list[str]:
    """Every reference the page would fetch. Comments are ignored (they fetch nothing)."""
    text = _COMMENT.sub("", html)
    found = [next(g for g in m.groups() if g is not None) for m in _ATTR.finditer(text)]
    found += [m.group(1) for m in _JS_IMPORT.finditer(text)]
    found += [m.group(1) for m in _CSS_IMPORT.finditer(text)]
    found += [m.group(1) for m in _CSS_URL.finditer(text)]
    return sorted({u for u in found if _external(u)})
