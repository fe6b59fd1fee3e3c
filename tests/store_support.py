"""What a store file holds, for tests that look past aeh's readers (secrets, raw rows)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aeh.store._packed import unpack


def raw_store_bytes(db: Path) -> bytes:
    """The bytes of the store file and its WAL, plus the text of every compressed span attribute.

    A secret scan of the raw file alone would not see inside a compressed value.
    """
    raw = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
    return raw + "\n".join(span_attributes(db)).encode()


def span_attributes(db: Path, where: str = "1") -> list[str]:
    """Every span's attributes text as stored (compressed ones decompressed), in start order."""
    conn = sqlite3.connect(db)
    try:
        found = conn.execute(f"SELECT attributes FROM spans WHERE {where} ORDER BY start_ts, rowid").fetchall()
    finally:
        conn.close()
    return [unpack(a) for (a,) in found]
