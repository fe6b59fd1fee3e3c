"""Long span attributes are stored compressed and read back as the text and values written."""

from __future__ import annotations

import json
import random
import sqlite3
import string
import zlib
from pathlib import Path
from typing import Any

import pytest

from aeh.errors import StoreError
from aeh.store import Store
from aeh.store._packed import PACK_AT, pack, unpack

LONG = {"gen_ai.input.messages": [{"role": "user", "content": "Which capital comes first? " * 40}],
        "note": "naïve café ☕"}


def _raw(db: Path) -> list[tuple[str, Any]]:
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT span_id, attributes FROM spans ORDER BY span_id").fetchall()
    conn.close()
    return found


def _stored(store: Store, make_run: Any, make_attempt: Any, make_spans: Any) -> list[Any]:
    store.create_run(make_run())
    spans = make_spans(n=3)
    spans[1] = spans[1].model_copy(update={"attributes": LONG})
    store.write_attempt(make_attempt(), spans)
    return spans


def test_long_attributes_are_a_zlib_blob_and_short_ones_text(file_store: Store, db_path: Path, make_run: Any,
                                                               make_attempt: Any, make_spans: Any) -> None:
    _stored(file_store, make_run, make_attempt, make_spans)
    raw = dict(_raw(db_path))
    long_value = raw["t1-0-1"]
    assert isinstance(long_value, bytes)
    assert json.loads(zlib.decompress(long_value).decode()) == LONG  # readable outside aeh, as documented
    assert len(long_value) < len(json.dumps(LONG, ensure_ascii=False).encode()) / 3
    assert all(isinstance(v, str) for k, v in raw.items() if k != "t1-0-1")


def test_every_reader_gives_back_the_attributes_written(file_store: Store, make_run: Any, make_attempt: Any,
                                                        make_spans: Any) -> None:
    written = _stored(file_store, make_run, make_attempt, make_spans)
    records = file_store.attempt_spans("run-0001", "t1", 0)
    assert [s.attributes for s in records] == [s.attributes for s in written]
    frame = file_store.spans_frame("run-0001")
    assert [json.loads(a) for a in frame["attributes"]] == [s.attributes for s in written]
    assert file_store.spans_frame("run-0001", columns=["span_id", "attributes"])["attributes"].dtype.is_(
        frame["attributes"].dtype)


def test_a_read_only_store_reads_packed_attributes(db_path: Path, make_run: Any, make_attempt: Any,
                                                   make_spans: Any) -> None:
    with Store(db_path) as store:
        written = _stored(store, make_run, make_attempt, make_spans)
    with Store(db_path, read_only=True) as store:
        assert store.attempt_spans("run-0001", "t1", 0)[1].attributes == written[1].attributes
        assert json.loads(store.spans_frame("run-0001")["attributes"][1]) == LONG


@pytest.mark.parametrize("text", ["", "{}", "x" * (PACK_AT - 1), "é" * (PACK_AT // 2 - 1)])
def test_text_under_the_threshold_stays_text(text: str) -> None:
    assert pack(text) == text


@pytest.mark.parametrize("text", ["a" * PACK_AT, json.dumps(LONG, ensure_ascii=False), "☕" * 200])
def test_pack_round_trips(text: str) -> None:
    packed = pack(text)
    assert isinstance(packed, bytes) and unpack(packed) == text


def test_random_text_round_trips_and_is_never_stored_longer() -> None:
    rng = random.Random(0)
    for size in (100, 600, 3000):
        for alphabet in (string.printable, "".join(map(chr, range(0x4E00, 0x4E00 + 5000)))):
            text = "".join(rng.choice(alphabet) for _ in range(size))
            stored = pack(text)
            assert unpack(stored) == text
            assert len(stored if isinstance(stored, bytes) else stored.encode()) <= len(text.encode())


def test_an_aeh_that_predates_packing_refuses_the_store(db_path: Path) -> None:
    Store(db_path).close()
    from aeh.store import _migrations

    older = _migrations.schema.copy(5)
    with sqlite3.connect(db_path, isolation_level=None) as conn, pytest.raises(StoreError, match="upgrade aeh"):
        older.apply(conn)
