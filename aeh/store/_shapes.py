"""Secret shapes found by pattern: keys, tokens, private keys, webhook URLs, passwords in URLs.

Plain regular expressions, applied in order (most specific first), each guarded by a cheap
substring test so a span payload without, say, `-----BEGIN` never pays for the PEM pattern.
Timings per typical span payload are in `benchmarks/RESULTS.md`.

The prefixed vendor keys (Stripe, GitLab, Hugging Face, npm, SendGrid) follow the rules of
gitleaks' `config/gitleaks.toml` (MIT licence, commit b58d3f1, 2026-07-22); docs/reliability.md
says why those few were taken over rather than the whole rule set.
"""

from __future__ import annotations

import base64
import binascii
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
_JWT_RE = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")
# `scheme://user:password@host`: the password only, which may hold ! # % and other punctuation.
# Anchored on the literal `://` so that text without a URL is skipped at memchr speed.
_DSN_RE = re.compile(r"(://[^\s:/@'\"<>]*:)([^\s/'\"<>]+)(@[A-Za-z0-9\[])")

# 40 base64-ish characters on their own: an AWS secret access key when its context says so.
_AWS_SECRET_RE = re.compile(r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+")
_AWS_CONTEXT_RE = re.compile(r"(?i)aws|secret_?access|(?:AKIA|ASIA)[0-9A-Z]{16}")
_AWS_CONTEXT_CHARS = 80

# Boundaries keep us from cutting keys out of longer identifiers.
_API_KEY_RE = re.compile(
    r"(?:"
    r"sk-ant-[A-Za-z0-9_\-]{20,}"  # Anthropic
    r"|sk-(?:proj-)?[A-Za-z0-9_\-]{20,}"  # OpenAI (legacy and project keys)
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"  # AWS access key id (long-lived, temporary)
    r"|gh[pousr]_[A-Za-z0-9]{36,}"  # GitHub classic tokens
    r"|github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained tokens
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|AIza[0-9A-Za-z_\-]{33,40}(?![0-9A-Za-z_\-])"  # Google API key (35, with a tolerance)
    r")"
)
# A pattern of its own, with its own guards: one alternation scanning a document costs in
# proportion to its branches, and most payloads hold none of these prefixes.
_VENDOR_KEY_RE = re.compile(
    r"(?:"
    r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}"  # Stripe secret and restricted keys
    r"|glpat-[A-Za-z0-9_\-]{20,}"  # GitLab personal access token
    # The vendor lengths (34, 34, 36) with a tolerance: a token a few characters longer or
    # shorter than the canonical format (a new format, a typo) is still caught.
    r"|hf_[A-Za-z0-9]{30,40}(?![A-Za-z0-9])"  # Hugging Face user access token
    r"|api_org_[A-Za-z0-9]{30,40}(?![A-Za-z0-9])"  # Hugging Face organisation token
    r"|npm_[A-Za-z0-9]{32,40}(?![A-Za-z0-9])"  # npm access token
    r"|SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"  # SendGrid API key
    r")"
)
# Values after a name that says "this is a key": Azure storage and Service Bus connection
# strings (`AccountKey=`, `SharedAccessKey=`), a SAS URL's `sig=`, and `X-Api-Key:` /
# `api-key:` headers (or `api_key=` settings). The name stays, so a reader sees what was there.
# `_QUOTE` lets the name be quoted, as in JSON or in JSON held in a string.
_QUOTE = r"[\\\"']{0,3}"
_NAMED_KEY_RE = re.compile(
    r"((?i:account|shared_?access)[Kk]ey="
    r"|(?i:(?:x-)?api[-_]?key)" + _QUOTE + r"\s*[:=]\s*" + _QUOTE +
    r"|(?<![A-Za-z0-9_])sig=)"
    r"([A-Za-z0-9+/%._~\-]{16,}={0,2})"
)
# `Authorization: <credential>` with no scheme, or a scheme that is not Bearer or Basic (their
# own steps run first): the credential is the value's last word. 16+ characters with a digit,
# so prose ("authorization: required for writes") survives.
_AUTHORIZATION_RE = re.compile(
    r"((?i:authorization)" + _QUOTE + r"\s*[:=]\s*" + _QUOTE + r"(?:[A-Za-z]{2,20} +)?)"
    r"(?=[A-Za-z0-9._~+/\-]*[0-9])([A-Za-z0-9._~+/\-]{16,}=*)"
)
# `Basic <base64 of user:password>`: only when the base64 decodes to text holding a colon, so
# "basic arithmetic" and other prose never match.
_BASIC_RE = re.compile(r"([Bb][Aa][Ss][Ii][Cc])\s+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
# `Bearer <token>`: 16+ token characters, so prose such as "bearer of bad news" survives.
_BEARER_RE = re.compile(r"([Bb][Ee][Aa][Rr][Ee][Rr])\s+[A-Za-z0-9._~+/\-]{16,}=*")
# Matched from the `@` outwards: scanning every word for a local part costs far more.
_EMAIL_LOCAL_RE = re.compile(r"[A-Za-z0-9._%+\-]{1,64}$")
_EMAIL_DOMAIN_RE = re.compile(r"@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _glued(s: str, start: int) -> bool:
    """True when `s[start]` continues a longer identifier. The `n` of an escaped `\\n` (text
    that holds JSON) does not count: a key on a new line is still a key."""
    return start > 0 and s[start - 1] in _TOKEN_CHARS and not (start > 1 and s[start - 2] == "\\")


def _bounded(pattern: re.Pattern[str], marker: str) -> Callable[[str], str]:
    """`pattern.sub(marker)`, skipping matches glued to a longer identifier (the check is done
    here, not as a leading look-behind, so the pattern keeps its fast literal prefix)."""
    def sub(s: str) -> str:
        def one(m: re.Match[str]) -> str:
            return m.group(0) if _glued(s, m.start()) else marker

        return pattern.sub(one, s)

    return sub


def _emails(s: str) -> str:
    out: list[str] = []
    done = 0
    at = s.find("@")
    while at != -1:
        local = _EMAIL_LOCAL_RE.search(s, max(done, at - 64), at)
        domain = _EMAIL_DOMAIN_RE.match(s, at)
        if local is not None and domain is not None:
            start = local.start()
            if start > 0 and s[start - 1] == "\\":  # `\\n` before the address: keep the escape whole
                start += 1
            out.append(s[done:start])
            out.append(EMAIL)
            done = domain.end()
        at = s.find("@", max(at + 1, done))
    out.append(s[done:])
    return "".join(out)


def _aws_secret(s: str) -> str:
    if _AWS_CONTEXT_RE.search(s) is None:
        return s

    def one(m: re.Match[str]) -> str:
        token, start = m.group(0), m.start()
        if start > 0 and s[start - 1] in _BASE64_CHARS and not (start > 1 and s[start - 2] == "\\"):
            return token  # the tail of a longer run
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


def _keep_name(m: re.Match[str]) -> str:
    return f"{m.group(1)}{API_KEY}"


def _basic(m: re.Match[str]) -> str:
    token = m.group(2)
    try:
        decoded = base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        return m.group(0)
    return f"{m.group(1)} {PASSWORD}" if b":" in decoded else m.group(0)


# (cheap guard, substitution), in order. A guard is a substring every match must contain.
_STEPS: tuple[tuple[tuple[str, ...], Callable[[str], str]], ...] = (
    (("-----BEGIN",), lambda s: _PEM_RE.sub(PRIVATE_KEY, s)),
    (("hooks.slack.com",), lambda s: _WEBHOOK_RE.sub(WEBHOOK, s)),
    (("eyJ",), _bounded(_JWT_RE, JWT)),
    (("://",), lambda s: _DSN_RE.sub(_dsn, s)),
    # Before any step that writes `[REDACTED:api_key]`: its `api_key` would wake this guard.
    (("ccountKey", "ccessKey", "ccountkey", "ccesskey", "CCOUNTKEY", "CCESSKEY", "sig=", "pi-key", "pi_key",
      "pi-Key", "pi_Key", "piKey", "pikey", "PI-KEY", "PI_KEY", "PIKEY"), lambda s: _NAMED_KEY_RE.sub(_keep_name, s)),
    # Basic before Authorization: its credential is a password, not a token.
    (("earer", "EARER"), lambda s: _BEARER_RE.sub(_bearer, s)),
    (("asic", "ASIC"), lambda s: _BASIC_RE.sub(_basic, s)),
    (("uthorization", "UTHORIZATION"), lambda s: _AUTHORIZATION_RE.sub(_keep_name, s)),
    # Before the key ids: an AKIA id next to a secret key is the secret key's context.
    (("aws", "AWS", "Aws", "ecret", "ECRET", "AKIA", "ASIA"), _aws_secret),
    (("sk-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza"),
     _bounded(_API_KEY_RE, API_KEY)),
    (("k_live_", "k_test_", "k_prod_", "glpat-", "hf_", "api_org_", "npm_", "SG."), _bounded(_VENDOR_KEY_RE, API_KEY)),
    (("@",), _emails),
)


def _trie(words: set[str]) -> str:
    """A regex matching any of `words`, branching one character at a time: Python's `re` tries
    every alternative of a flat `a|b|c…` at every position, and 50 guards made that the cost."""
    if "" in words:
        return ""  # a shorter guard already matched: its longer siblings add nothing
    first: dict[str, set[str]] = {}
    for word in words:
        first.setdefault(word[0], set()).add(word[1:])
    parts = [re.escape(c) + _trie(rest) for c, rest in sorted(first.items())]
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


# One search that every shape needs to hit: most strings (keys, short values) stop here.
_ANY_RE = re.compile(_trie({g for guards, _ in _STEPS for g in guards}))


def redact_shapes(s: str) -> str:
    """`s` with every secret shape above replaced by its `[REDACTED:<kind>]` marker."""
    if _ANY_RE.search(s) is None:
        return s
    for guards, step in _STEPS:
        if any(g in s for g in guards):
            s = step(s)
    return s
