"""Split a command line from our job-runner config into arguments.

Rules (a small, documented subset of POSIX shell quoting):

* Arguments are separated by unquoted whitespace (spaces, tabs, newlines).
* Outside quotes, a backslash makes the next character literal
  (``a\\ b`` is one argument ``a b``).
* Inside single quotes every character is literal, backslash included;
  the quote ends at the next ``'``.
* Inside double quotes a backslash escapes only ``"`` and ``\\``
  (``"a\\"b"`` -> ``a"b``, ``"C:\\\\"`` -> ``C:\\``); before any other
  character the backslash is kept as is (``"a\\nb"`` stays ``a\\nb``).
* Quoted and unquoted parts next to each other form one argument
  (``--name="My App"`` -> ``--name=My App``), and ``""`` or ``''`` on its
  own is an empty argument.
* An unterminated quote, or a backslash at the very end of the input,
  raises ``TokenizeError``.
"""

from __future__ import annotations

_DQ_ESCAPABLE = '"\\'


class TokenizeError(ValueError):
    """The input cannot be split into arguments."""


def tokenize(line: str) -> list[str]:
    tokens: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        prev = line[i - 1] if i > 0 else ""
        if quote == "'":
            if ch == "'":
                quote = None
            else:
                current.append(ch)
        elif quote == '"':
            if ch == '"' and prev != "\\":
                quote = None
            elif ch == "\\" and i + 1 < n and line[i + 1] in _DQ_ESCAPABLE:
                pass  # the escaped character is added on the next step
            else:
                current.append(ch)
        elif ch == "\\":
            if i + 1 < n:
                current.append(line[i + 1])
            i += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif ch.isspace():
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(ch)
        i += 1
    if quote is not None:
        raise TokenizeError(f"unterminated {quote} quote")
    if current:
        tokens.append("".join(current))
    return tokens


def join(args: list[str]) -> str:
    """Inverse of ``tokenize`` for the common case: quote arguments that need it."""
    out = []
    for arg in args:
        if arg and not any(c.isspace() or c in "'\"\\" for c in arg):
            out.append(arg)
        else:
            out.append("'" + arg.replace("'", "'\"'\"'") + "'")
    return " ".join(out)
