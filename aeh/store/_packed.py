"""Span attributes of 512 bytes or more are stored zlib-compressed (a BLOB); shorter ones as text.

A model span's attributes (its input messages, output, tool definitions) are most of a store's
bytes, and JSON compresses to a fifth or less of its size; a short span compresses poorly, so
it stays readable text. Readers never see the difference: every read of `spans.attributes`
goes through `ATTRIBUTES_SQL`, which calls `aeh_unpack` (registered on each store connection)
only for BLOB values. The schema marks the format (migration 6), so an aeh that predates it
refuses such a store ("upgrade aeh") instead of misreading its spans.

To read a store with the `sqlite3` shell, decompress in Python:
`zlib.decompress(value).decode()` for a BLOB value, the value itself otherwise.
"""

from __future__ import annotations

import sqlite3
import zlib

__all__ = ["ATTRIBUTES_SQL", "PACK_AT", "pack", "pack_bytes", "packed_span_attributes", "register_unpack", "unpack"]

PACK_AT = 512
"""Encoded size in bytes from which attributes are compressed."""

# zlib's default level with a 4 KiB window and a smaller hash table: for values of 1–8 KB the
# same size within 1% as `zlib.compress`, at a quarter of its CPU (~25 µs for 1 KB here), most of
# which is setting up the default 256 KiB of state per call.
_LEVEL, _WBITS, _MEM_LEVEL = 6, 12, 6

ATTRIBUTES_SQL = "CASE WHEN typeof(attributes) = 'blob' THEN aeh_unpack(attributes) ELSE attributes END"
"""The `attributes` column as text, in a SELECT of a store connection."""


def pack(text: str) -> str | bytes:
    """`text` as stored: its zlib-compressed UTF-8 when that is shorter and it is long enough."""
    if len(text) < PACK_AT // 4:  # fewer than PACK_AT bytes whatever the characters: no encode needed
        return text
    raw = text.encode()
    if len(raw) < PACK_AT:
        return text
    packed = _deflate(raw)
    return packed if len(packed) < len(raw) else text


def pack_bytes(raw: bytes) -> str | bytes:
    """`pack(raw.decode())` from the UTF-8 bytes the JSON encoder wrote: no decode and re-encode
    of a value that is compressed."""
    if len(raw) < PACK_AT:
        return raw.decode()
    packed = _deflate(raw)
    return packed if len(packed) < len(raw) else raw.decode()


def _deflate(raw: bytes) -> bytes:
    deflate = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL)
    return deflate.compress(raw) + deflate.flush()


def unpack(value: str | bytes) -> str:
    """The text of a stored value (`pack`'s inverse)."""
    return value if isinstance(value, str) else zlib.decompress(value).decode()


def register_unpack(conn: sqlite3.Connection) -> None:
    """Make `aeh_unpack(x)` callable in this connection's SQL (`ATTRIBUTES_SQL` needs it)."""
    conn.create_function("aeh_unpack", 1, unpack, deterministic=True)


def packed_span_attributes(conn: sqlite3.Connection) -> None:
    """span attributes of 512 bytes or more stored zlib-compressed (no table changes)."""
