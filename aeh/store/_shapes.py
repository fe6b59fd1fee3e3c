"""Secret shapes found by pattern: keys, tokens, private keys, webhook URLs, passwords in URLs.

Plain regular expressions, applied in order (most specific first), each guarded by a cheap
substring test so a span payload without, say, `-----BEGIN` never pays for the PEM pattern.
Timings per typical span payload are in `benchmarks/RESULTS.md`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["API_KEY", "EMAIL", "JWT", "PASSWORD", "PRIVATE_KEY", "WEBHOOK", "redact_shapes"]

API_KEY = "[REDACTED:api_key]"
EMAIL = "[REDACTED:email]"
JWT = "[REDACTED:jwt]"
PASSWORD = "[REDACTED:password]"
PRIVATE_KEY = "[REDACTED:private_key]"
WEBHOOK = "[REDACTED:webhook]"

# The whole block, BEGIN to END; a block clipped before its END (a trace excerpt) goes to the
# end of its base64 body. `\\` lets a body whose newlines were escaped (`\n` in JSON text) match.
_PEM_RE = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s\\:,\-]*)",
    re.DOTALL,
)
_WEBHOOK_RE = re.compile(r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+")
# header.payload.signature, each base64url; header and payload are JSON objects, so start `eyJ`.
_JWT_RE = re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")
# `scheme://user:password@host`: the password only, which may hold ! # % and other punctuation.
_DSN_RE = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@'\"<>]*:)([^\s/'\"<>]+)(@[A-Za-z0-9\[])")

# 40 base64-ish characters on their own: an AWS secret access key when its context says so.
_AWS_SECRET_RE = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_CONTEXT_RE = re.compile(r"(?i)aws|secret_?access|(?:AKIA|ASIA)[0-9A-Z]{16}")
_AWS_CONTEXT_CHARS = 80

# Boundaries keep us from cutting keys out of longer identifiers.
_API_KEY_RE = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"sk-ant-[A-Za-z0-9_\-]{20,}"  # Anthropic
    r"|sk-(?:proj-)?[A-Za-z0-9_\-]{20,}"  # OpenAI (legacy and project keys)
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"  # AWS access key id (long-lived, temporary)
    r"|gh[pousr]_[A-Za-z0-9]{36,}"  # GitHub classic tokens
    r"|github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained tokens
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"  # Google API key
    r")"
)
# `Bearer <token>`: 16+ token characters, so prose such as "bearer of bad news" survives.
_BEARER_RE = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*")
_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")


def _aws_secret(s: str) -> str:
    def one(m: re.Match[str]) -> str:
        token = m.group(0)
        # A git SHA or a hex digest is 40 characters too, but never mixed-case with digits.
        if not (any(c.isupper() for c in token) and any(c.islower() for c in token)
                and any(c.isdigit() for c in token)):
            return token
        before = s[max(0, m.start() - _AWS_CONTEXT_CHARS):m.start()]
        return API_KEY if _AWS_CONTEXT_RE.search(before) else token

    return _AWS_SECRET_RE.sub(one, s)


def _dsn(m: re.Match[str]) -> str:
    return f"{m.group(1)}{PASSWORD}{m.group(3)}"


def _bearer(m: re.Match[str]) -> str:
    return f"{m.group(1)} {API_KEY}"


# (cheap guard, substitution), in order. A guard is a substring every match must contain.
_STEPS: tuple[tuple[tuple[str, ...], Callable[[str], str]], ...] = (
    (("-----BEGIN",), lambda s: _PEM_RE.sub(PRIVATE_KEY, s)),
    (("hooks.slack.com",), lambda s: _WEBHOOK_RE.sub(WEBHOOK, s)),
    (("eyJ",), lambda s: _JWT_RE.sub(JWT, s)),
    (("://",), lambda s: _DSN_RE.sub(_dsn, s)),
    # Before the key ids: an AKIA id next to a secret key is the secret key's context.
    (("aws", "AWS", "Aws", "ecret", "ECRET", "AKIA", "ASIA"), _aws_secret),
    (("sk-", "AKIA", "ASIA", "gh", "github_pat_", "xox", "AIza"), lambda s: _API_KEY_RE.sub(API_KEY, s)),
    (("earer", "EARER"), lambda s: _BEARER_RE.sub(_bearer, s)),
    (("@",), lambda s: _EMAIL_RE.sub(EMAIL, s)),
)


def redact_shapes(s: str) -> str:
    """`s` with every secret shape above replaced by its `[REDACTED:<kind>]` marker."""
    for guards, step in _STEPS:
        if any(g in s for g in guards):
            s = step(s)
    return s
