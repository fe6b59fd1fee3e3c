"""A stored run as canonical rows, and their digest: what "the same seed stores the same results" compares.

Everything a seeded run decides is kept: each attempt's columns, verdicts, dimension scores and
every span with its attributes (decompressed, key order as stored). What only the clock or the
random generator of ids decides is replaced: span ids become their position in the attempt
(`#3`), wherever they appear (parents, root span, tool calls, attribute references); timestamps
and durations are dropped (a timing that is only stored when not zero, too); the run id is left out.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from aeh.store._packed import unpack

#: Attempt columns measured by the clock.
_TIMED_COLUMNS = frozenset({"latency_s", "agent_s", "queue_s", "grading_s"})
_HEX_ID = re.compile(r"\b[0-9a-f]{16}\b")


def _timed_key(key: str) -> bool:
    """Durations in seconds: the attempt's timed columns, a tool's latency, aeh's own timings."""
    return key in _TIMED_COLUMNS or (key.startswith("aeh.") and key.endswith("_s"))


def _normal(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _normal(v, ids) for k, v in value.items() if not _timed_key(k)}
    if isinstance(value, list):
        return [_normal(v, ids) for v in value]
    if isinstance(value, str):
        return _HEX_ID.sub(lambda m: ids.get(m.group(0), m.group(0)), value)
    return value


def _rows(conn: sqlite3.Connection, sql: str, *params: Any) -> list[dict[str, Any]]:
    cur = conn.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def canonical_rows(db: str | Path, run_id: str) -> list[str]:
    """One JSON line per stored row of the run (attempts in task and attempt order, each
    followed by its spans in start order, its verdicts and its dimension scores)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        lines: list[str] = []
        for attempt in _rows(conn, "SELECT * FROM attempts WHERE run_id = ? ORDER BY task_id, attempt", run_id):
            key = (run_id, attempt["task_id"], attempt["attempt"])
            where = "run_id = ? AND task_id = ? AND attempt = ?"
            spans = _rows(conn, f"SELECT * FROM spans WHERE {where} ORDER BY start_ts, rowid", *key)
            ids = {s["span_id"]: f"#{i}" for i, s in enumerate(spans)}
            for column in ("tool_calls", "invariant_results"):
                attempt[column] = json.loads(attempt[column])
            lines.append(_line("attempt", attempt, ids))
            for span in spans:
                span["attributes"] = json.loads(unpack(span["attributes"]))
                span.pop("start_ts"), span.pop("end_ts")
                lines.append(_line("span", span, ids))
            for verdict in _rows(conn, f"SELECT * FROM grader_results WHERE {where} ORDER BY rowid", *key):
                verdict["evidence"] = json.loads(verdict["evidence"])
                lines.append(_line("verdict", verdict, ids))
            for score in _rows(conn, f"SELECT * FROM dimension_scores WHERE {where} ORDER BY dimension", *key):
                score["evidence"] = json.loads(score["evidence"])
                lines.append(_line("score", score, ids))
        return lines
    finally:
        conn.close()


def _line(kind: str, row: dict[str, Any], ids: dict[str, str]) -> str:
    row = {k: v for k, v in row.items() if k != "run_id"}
    return json.dumps([kind, _normal(row, ids)], ensure_ascii=False, separators=(",", ":"))


def digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


#: The fixed run the digest test stores: the core suite's tool loops on the mock, seeded faults
#: (errors, retries, fault spans), a configured secret that its data holds, verdicts of every tier
#: and dimension scores.
FIXED_RUN: dict[str, Any] = {"suite": "core", "adapter": "mock", "attempts": 1, "seed": 41, "fault_rate": 0.2,
                             "secrets": ["priya"]}
EXPECTED = Path(__file__).with_name("stored_digest.json")


def fixed_run_digests(db: Path, **options: Any) -> dict[str, str]:
    """The digest of the fixed run stored in `db`, whole (`"run"`) and per attempt (`task/attempt`);
    `options` change how it runs, never what it stores (e.g. `workers=2`)."""
    import aeh

    run_id = aeh.run(**FIXED_RUN, **options, db=db).run_id
    lines = canonical_rows(db, run_id)
    per_attempt: dict[str, list[str]] = {}
    current = ""
    for line in lines:
        kind, row = json.loads(line)
        if kind == "attempt":
            current = f"{row['task_id']}/{row['attempt']}"
        per_attempt.setdefault(current, []).append(line)
    return {"run": digest(lines), **{key: digest(group) for key, group in per_attempt.items()}}


if __name__ == "__main__":  # python -m tests.engine.stored_digest: record the expected digests anew
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = fixed_run_digests(Path(tmp) / "digest.db")
    EXPECTED.write_text(json.dumps(found, indent=1) + "\n")
    print(f"wrote {EXPECTED}: {found['run']}")
