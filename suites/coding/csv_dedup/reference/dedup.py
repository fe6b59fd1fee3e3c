"""Remove duplicate records from a CSV export.

``dedupe_csv(text, key)`` takes the full text of a CSV file whose first
record is the header, and returns CSV text with later duplicates removed.
Two records are duplicates when all their key columns are equal after
trimming surrounding whitespace and ignoring case. The first occurrence
wins and keeps its original values; record order is preserved.

The input is ordinary RFC 4180 CSV: fields may be wrapped in double
quotes, and a quoted field may contain commas, line breaks and doubled
quotes (``""``). The output uses ``\\n`` line endings and quotes a field
only when it has to.
"""

from __future__ import annotations

import csv
import io


def _read(text: str) -> list[list[str]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    return [record for record in reader if record]


def _write(records: list[list[str]]) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerows(records)
    return buffer.getvalue()


def _normalize(value: str) -> str:
    return value.strip().casefold()


def dedupe_csv(text: str, key: str | list[str]) -> str:
    """Return ``text`` without records that repeat an earlier record's key.

    ``key`` is a column name or a list of column names. An unknown column
    raises ``ValueError``. Input with no records at all returns ``""``.
    """
    records = _read(text)
    if not records:
        return ""
    header, body = records[0], records[1:]
    columns = [key] if isinstance(key, str) else list(key)
    try:
        indexes = [header.index(column) for column in columns]
    except ValueError:
        raise ValueError(
            f"unknown key column in {columns!r}; header is {header!r}"
        ) from None

    seen: set[tuple[str, ...]] = set()
    kept = [header]
    for record in body:
        signature = tuple(
            _normalize(record[i]) if i < len(record) else "" for i in indexes
        )
        if signature in seen:
            continue
        seen.add(signature)
        kept.append(record)
    return _write(kept)
