"""Reading a file the user hands in: a regular file of bounded size, text that is text, strict JSON.

Every reader of a user's file goes through here, so each hostile file is refused the same way:
a FIFO (would block forever), a device such as a symlink to /dev/zero (would be read until
memory runs out), a directory, a file over the size limit (judged by `stat`, before a byte is
read), gzip or other binary content (named for what it looks like), and JSON that Python's
`json` accepts but a harness must not: `NaN`/`Infinity` (not JSON, and not a count or a time),
duplicate keys (the second value silently won) and nesting deep enough to overflow the stack.

The size limit is `AEH_MAX_INPUT_BYTES` (default 16 MiB), the nesting limit
`AEH_MAX_JSON_DEPTH` (default 200 levels). Errors are `InputFileError` (an OSError: the file
cannot be used at all) and `InputJsonError` (a ValueError naming the field and line).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_MAX_INPUT_BYTES", "DEFAULT_MAX_JSON_DEPTH", "InputFileError", "InputJsonError",
           "binary_kind", "check_json_depth", "decode_input_text", "load_json_file", "loads_strict", "located",
           "max_input_bytes", "max_json_depth", "read_bytes_limited", "read_input_text", "read_text_limited",
           "strict_decoder", "unsafe_id"]

DEFAULT_MAX_INPUT_BYTES = 16 * 1024 * 1024
#: Real inputs nest fewer than 20 levels (an OTLP span attribute's value is about 8 deep).
DEFAULT_MAX_JSON_DEPTH = 200
_MAGIC = ((b"\x1f\x8b", "gzip-compressed data (decompress it first: gunzip FILE)"),
          (b"PK\x03\x04", "a zip archive (unpack it first)"),
          (b"BZh", "bzip2-compressed data (decompress it first: bunzip2 FILE)"),
          (b"\xfd7zXZ\x00", "xz-compressed data (decompress it first: unxz FILE)"),
          (b"\x28\xb5\x2f\xfd", "zstd-compressed data (decompress it first: unzstd FILE)"),
          (b"SQLite format 3\x00", "an SQLite database (pass it as --db, not as an input file)"))
_CONSTANT_RE = re.compile(r'(?:"((?:[^"\\]|\\.)*)"\s*:\s*|[\[,]\s*)(-?(?:NaN|Infinity))\b')


class InputFileError(OSError):
    """A path that is not a readable regular file of sane size, or content that is not text."""


class InputJsonError(ValueError):
    """JSON that parses in Python but is refused: NaN/Infinity, duplicate keys, absurd nesting."""

    def __init__(self, problem: str, *, field: str = "-", line: int | None = None, fix: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.field = field
        self.line = line
        self.fix = fix


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise InputFileError(f"{name}={raw!r} is not a positive integer; unset it or set, say, {name}={default}")
    return value


def max_input_bytes() -> int:
    """The size limit for an input file: `AEH_MAX_INPUT_BYTES`, 16 MiB by default."""
    return _env_int("AEH_MAX_INPUT_BYTES", DEFAULT_MAX_INPUT_BYTES)


def max_json_depth() -> int:
    """The nesting limit for input JSON: `AEH_MAX_JSON_DEPTH`, 200 levels by default."""
    return _env_int("AEH_MAX_JSON_DEPTH", DEFAULT_MAX_JSON_DEPTH)


def read_bytes_limited(path: str | Path, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file no bigger than `max_bytes`; InputFileError otherwise."""
    limit = max_input_bytes() if max_bytes is None else max_bytes
    info = os.stat(path)  # follows symlinks: a link to /dev/zero is judged by its target
    if stat.S_ISDIR(info.st_mode):
        raise InputFileError(f"{path} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) else "a device"
        raise InputFileError(f"{path} is not a regular file ({kind}); pass a file, not a pipe or device")
    if info.st_size > limit:
        raise InputFileError(f"{path} is {info.st_size:,} bytes; input files are limited to {limit:,} "
                             "(set AEH_MAX_INPUT_BYTES to raise the limit)")
    # O_NONBLOCK: should the path be swapped for a FIFO after the stat, open does not block.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputFileError(f"{path} grew past {limit:,} bytes while being read")
    return data


def unsafe_id(value: str) -> str | None:
    """Why `value` cannot name a run or a task that becomes part of a path, or None when it can.

    A run id is joined into the workspace folder's name and a task id into file names: `../x`,
    `a/b`, a NUL or a control character would reach outside the folder or break the path.
    """
    if not value or not value.strip():
        return "is empty"
    if len(value) > 200:
        return f"is {len(value)} characters long (at most 200)"
    bad = next((c for c in value if c in "/\\" or ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        return f"holds {bad!r}, which a file name cannot"
    if value.startswith("."):
        return "starts with '.'"
    return None


def binary_kind(data: bytes) -> str | None:
    """What binary content looks like ("gzip-compressed data …"), or None when it may be text."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    if b"\x00" in data[:8192]:
        return "binary data (it holds NUL bytes)"
    return None


def read_text_limited(path: str | Path, max_bytes: int | None = None) -> str:
    """UTF-8 text of a regular file; UnicodeDecodeError for binary content."""
    return read_bytes_limited(path, max_bytes).decode("utf-8")


def decode_input_text(path: str | Path, data: bytes) -> str:
    """`data` (read with `read_bytes_limited`) as UTF-8 text, refusing binary content by what it looks like."""
    kind = binary_kind(data)
    if kind is not None:
        raise InputFileError(f"{path} is not UTF-8 text: it looks like {kind}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{path} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x}); "
                             "save it as UTF-8") from None


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InputJsonError(f"duplicate key {key!r} (the later value would silently replace the earlier one)",
                                 field=key, fix="keep one of the two values")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise InputJsonError(f"{name} is not a JSON number", fix="write a finite number, or null when unknown")


class _Unfit:
    """A number parsed from the text that no field can hold: kept as why, refused with its path."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


#: What the store keeps (SQLite, orjson): signed 64-bit integers.
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


def _parse_int(text: str) -> int | _Unfit:
    """An integer bounded on its text, before any conversion (a 10**400 never becomes an int)."""
    digits = len(text) - (text[0] == "-")
    if digits < 19:
        return int(text)
    value = int(text) if digits == 19 else None
    if value is not None and _INT_MIN <= value <= _INT_MAX:
        return value
    return _Unfit(f"an integer of {digits} digits (at most a signed 64-bit integer, 19 digits)")


def _parse_float(text: str) -> float | _Unfit:
    value = float(text)
    return value if math.isfinite(value) else _Unfit(f"{text[:40]} is beyond a 64-bit float")


_HOOKS: dict[str, Any] = {"object_pairs_hook": _pairs, "parse_constant": _constant, "parse_int": _parse_int,
                          "parse_float": _parse_float}
#: Text that may hold a number `_parse_int` / `_parse_float` refused, or a lone surrogate escape:
#: only then is the parsed document walked.
_SUSPECT_RE = re.compile(r"[0-9]{19}|[eE]\+?[0-9]{3}|\\u[dD][89a-fA-F]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_NUMBER_FIX = "write a number that fits a 64-bit integer or float (or the value as a string)"
_SURROGATE_FIX = "write the character whole (both halves of a \\ud83d\\ude00 pair) or drop it"


def strict_decoder() -> json.JSONDecoder:
    """A decoder refusing duplicate keys and NaN/Infinity (for `raw_decode` of JSON streams);
    numbers no field can hold come back unfit, for `check_json_values` to name."""
    return json.JSONDecoder(**_HOOKS)


def suspect_values(text: str) -> bool:
    """True when `text` may hold a number too large or a lone surrogate: `check_json_values` it."""
    return _SUSPECT_RE.search(text) is not None


def check_json_values(doc: Any) -> None:
    """Refuse a parsed document holding a number no field can hold (an integer past 64 bits, a
    float past its range) or a lone surrogate (half a UTF-16 pair, which no UTF-8 sink can
    write): InputJsonError naming the field's path."""
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, _Unfit):
            raise InputJsonError(node.why, field=where or "-", fix=_NUMBER_FIX)
        if isinstance(node, str):
            if _SURROGATE_RE.search(node) is not None:
                raise InputJsonError("a lone surrogate (half of a UTF-16 pair) in the text", field=where or "-",
                                     fix=_SURROGATE_FIX)
        elif isinstance(node, dict):
            for key, value in node.items():
                path = f"{where}.{key}" if where else str(key)
                if _SURROGATE_RE.search(key) is not None:
                    raise InputJsonError("a lone surrogate (half of a UTF-16 pair) in a key", field=where or "-",
                                         fix=_SURROGATE_FIX)
                stack.append((value, path))
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{i}]") for i, v in reversed(list(enumerate(node))))


def _locate_constant(text: str, exc: InputJsonError) -> InputJsonError:
    """The same error, naming the field and line of the first NaN/Infinity outside a string."""
    for m in _CONSTANT_RE.finditer(text):
        if text.count('"', 0, m.start()) % 2 and m.group(1) is None:
            continue  # inside a string, roughly: an odd number of quotes before it
        line = text.count("\n", 0, m.start(2)) + 1
        return InputJsonError(f"{m.group(2)} is not a JSON number", field=m.group(1) or "-", line=line, fix=exc.fix)
    return exc


def located(text: str, exc: InputJsonError) -> InputJsonError:
    """`exc` with the line (and, for NaN/Infinity, the field) it is about in `text`."""
    if exc.field != "-":
        return InputJsonError(exc.problem, field=exc.field, line=_line_of_key(text, exc.field), fix=exc.fix)
    return _locate_constant(text, exc)


def _line_of_key(text: str, key: str) -> int | None:
    needle = json.dumps(key)
    first = text.find(needle)
    second = text.find(needle, first + 1) if first != -1 else -1
    return text.count("\n", 0, second) + 1 if second != -1 else None


def check_json_depth(doc: Any, limit: int | None = None) -> None:
    """Refuse a parsed document nested deeper than `limit` (InputJsonError naming where)."""
    limit = max_json_depth() if limit is None else limit
    stack: list[tuple[Any, int, str]] = [(doc, 1, "")]
    while stack:
        node, depth, where = stack.pop()
        if depth > limit:
            raise InputJsonError(f"nested more than {limit} levels deep (at {where[:80] or 'the top'}…)",
                                 field=where[:80] or "-", fix="flatten the document (set AEH_MAX_JSON_DEPTH "
                                 "to raise the limit)")
        if isinstance(node, dict):
            stack.extend((v, depth + 1, f"{where}.{k}" if where else str(k))
                         for k, v in node.items() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend((v, depth + 1, f"{where}[{i}]") for i, v in enumerate(node) if isinstance(v, dict | list))


def loads_strict(text: str, *, max_depth: int | None = None) -> Any:
    """`json.loads`, refusing NaN/Infinity, duplicate keys, nesting past `max_depth`, numbers no
    field can hold (bounded on their text, before conversion) and lone surrogates.

    Raises `json.JSONDecodeError` for text that is not JSON, `InputJsonError` for the rest.
    """
    limit = max_json_depth() if max_depth is None else max_depth
    try:
        doc = json.loads(text, **_HOOKS)
    except RecursionError:
        raise InputJsonError(f"nested too deeply to parse (more than {limit} levels)",
                             fix="flatten the document") from None
    except InputJsonError as exc:
        raise located(text, exc) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
        raise InputJsonError(f"unreadable number: {exc}", fix="write numbers of sane size") from None
    # Only a document with that many brackets can be that deep: the walk is skipped otherwise.
    if text.count("[") + text.count("{") > limit:
        check_json_depth(doc, limit)
    if suspect_values(text):
        check_json_values(doc)
    return doc


def load_json_file(path: str | Path, *, max_bytes: int | None = None,
                   max_depth: int | None = None) -> tuple[Any, bytes]:
    """The parsed JSON of a user's file and its raw bytes, read under every bound above."""
    data = read_bytes_limited(path, max_bytes)
    return loads_strict(decode_input_text(path, data), max_depth=max_depth), data


def read_input_text(path: str | Path, max_bytes: int | None = None) -> str:
    """UTF-8 text of a user's file (a BOM dropped), refusing binary content by what it looks like."""
    return decode_input_text(path, read_bytes_limited(path, max_bytes))
