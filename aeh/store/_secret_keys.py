"""Fields that name a secret: their values are masked whatever their shape.

A value under `Authorization`, `X-Api-Key`, `password`, `client_secret`, `access_token`,
`Cookie` … has no shape to find (`Tq3Wm8…`, `hunter2hunter2`), but its key says what it is. The
name is compared case- and separator-insensitively (`X-Api-Key`, `x_api_key`, `XAPIKEY` are one
name): one of `SECRET_NAMES`, or a name ending in one of `SECRET_SUFFIXES` (`db_password`,
`openai_api_key`, `github_access_token`). Ordinary fields stay: `tokens_in`, `token_count`,
`max_tokens`, `password_policy`, `secret_count` do not end in a secret's name.

`redact_secret_json` does the same inside text that holds JSON (`"password": "…"`, also with
escaped quotes, as JSON inside a JSON string), keeping the key.
"""

from __future__ import annotations

import functools
import re

__all__ = ["SECRET_NAMES", "SECRET_SUFFIXES", "is_secret_key", "masked_already", "redact_secret_json"]

#: Normalised names (lower case, only letters and digits) whose values are secrets.
SECRET_NAMES = frozenset({
    "authorization", "proxyauthorization", "xapikey", "apikey", "apisecret", "password", "passwd", "pwd",
    "passphrase", "secret", "clientsecret", "token", "accesstoken", "refreshtoken", "idtoken", "authtoken",
    "xauthtoken", "sessiontoken", "bearertoken", "apitoken", "csrftoken", "xcsrftoken", "xamzsecuritytoken",
    "privatekey", "secretkey", "secretaccesskey", "cookie", "setcookie", "credentials", "credential",
    "sessionid", "xgoogapikey",
})
#: A name ending in one of these is a secret too (`db_password`, `openai_api_key`).
SECRET_SUFFIXES = ("password", "passwd", "passphrase", "secret", "apikey", "accesstoken", "refreshtoken",
                   "authtoken", "apitoken", "sessiontoken", "privatekey", "secretkey", "authorization",
                   "cookie")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")


@functools.lru_cache(maxsize=4096)
def is_secret_key(name: str) -> bool:
    """True when `name` names a secret (case and separators ignored)."""
    if len(name) > 64:
        return False
    key = _NOT_ALNUM.sub("", name.lower())
    return key in SECRET_NAMES or key.endswith(SECRET_SUFFIXES)


# A cheap test first: text with no word of a secret's name never pays for the JSON pattern.
_WORD_RE = re.compile(r"(?i)pass|secret|token|auth|api.?key|cookie|private|credential|pwd|session")

def _patterns(quote: str, value: str) -> tuple[re.Pattern[str], ...]:
    """`"key": value`, a header pair `["key", value]` and a header entry `"name": "key",
    "value": value`, with `quote` around strings; group 1 the key, 2 a string value, 3 a number."""
    key = quote + r'([^"\\\n]{1,64})' + quote
    val = r"(?:" + quote + "(" + value + r")" + quote + r"|(-?\d[\d.eE+\-]*))"
    name = quote + r"(?:name|key|header)" + quote
    return (re.compile(key + r"\s*:\s*" + val),
            re.compile(r"\[\s*" + key + r"\s*,\s*" + val + r"\s*\]"),
            re.compile(name + r"\s*:\s*" + key + r"\s*,\s*" + quote + "value" + quote + r"\s*:\s*" + val))


# In JSON text, and with escaped quotes (JSON inside a JSON string: an inner `\"` is `\\\"`).
_PLAIN = _patterns('"', r'(?:[^"\\]|\\.)*+')
_ESCAPED = _patterns(r'\\"', r'(?:[^"\\]|\\\\\\\\|\\\\\\"|\\\\[^"\\]|\\[^"\\])*+')
MASK = "[REDACTED:secret]"
#: A value a shape already masked: markers, with at most a scheme word before them (`Token …`).
_MASKED_RE = re.compile(r"(?:[A-Za-z]{1,20} +)?(?:\[REDACTED:[a-z_]+\])+")


def masked_already(value: str) -> bool:
    """True when nothing of `value` is left but markers (and a scheme word such as `Bearer`):
    the more telling marker a shape wrote (`[REDACTED:api_key]`) is kept."""
    return _MASKED_RE.fullmatch(value) is not None


def _mask(m: re.Match[str]) -> str:
    if not is_secret_key(m.group(1)):
        return m.group(0)
    value = 2 if m.group(2) is not None else 3
    if not m.group(value) or masked_already(m.group(value)):
        return m.group(0)
    start, end = m.start(value) - m.start(0), m.end(value) - m.start(0)
    text = m.group(0)
    quote = "" if value == 2 else ('\\"' if "\\" in text[:start] else '"')
    return text[:start] + quote + MASK + quote + text[end:]


def redact_secret_json(text: str) -> str:
    """`text` with the value of every secret-named JSON key (or header pair or entry) replaced by
    the marker, the key kept."""
    if '"' not in text or _WORD_RE.search(text) is None:
        return text
    for pattern in _PLAIN:
        text = pattern.sub(_mask, text)
    if '\\"' in text:
        for pattern in _ESCAPED:
            text = pattern.sub(_mask, text)
    return text
