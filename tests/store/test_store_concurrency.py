"""Concurrent writers: threads sharing one Store, and separate Stores on one file."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from aeh.store import Store, registered_migrations


def test_threads_sharing_one_store(file_store: Store, db_path: Path, make_run: Any,
                                   make_attempt: Any, make_spans: Any) -> None:  # fmt: skip
    file_store.create_run(make_run())
    errors: list[BaseException] = []

    def writer(task: str) -> None:
        try:
            for k in range(25):
                file_store.write_attempt(make_attempt(task_id=task, attempt=k),
                                         make_spans(task_id=task, attempt=k))  # fmt: skip
                file_store.attempts_frame("run-0001")  # interleave reads with the writes
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(f"t{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    frame = file_store.attempts_frame("run-0001")
    assert frame.height == 150 and frame.select("task_id", "attempt").is_unique().all()
    assert file_store.spans_frame("run-0001").height == 450
    assert file_store.grader_frame("run-0001").height == 300
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_separate_stores_on_one_file(db_path: Path, make_run: Any, make_attempt: Any,
                                     make_spans: Any) -> None:  # fmt: skip
    with Store(db_path) as s:
        s.create_run(make_run())
    errors: list[BaseException] = []

    def writer(task: str) -> None:
        try:
            with Store(db_path) as own:
                for k in range(20):
                    own.write_attempt(make_attempt(task_id=task, attempt=k),
                                      make_spans(task_id=task, attempt=k))  # fmt: skip
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Store(db_path) as s:
        assert s.attempts_frame("run-0001").height == 80
        assert s.spans_frame("run-0001").height == 240


def test_many_stores_opening_a_fresh_file_at_once(db_path: Path) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def opener() -> None:
        try:
            barrier.wait()
            Store(db_path).close()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    conn = sqlite3.connect(db_path)
    expected = [(m.version,) for m in registered_migrations()]
    assert conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall() == expected
