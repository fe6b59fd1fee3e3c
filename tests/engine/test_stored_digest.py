"""The same seed stores the same results: a fixed mock run's stored rows against their recorded digest.

Every change to how attempts are run, recorded or written (a faster writer, lazier imports, fewer
copies) must leave this digest as it is. A change that is meant to store something else records
it anew with `python -m tests.engine.stored_digest` and says so in its commit.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.engine.stored_digest import EXPECTED, canonical_rows, digest, fixed_run_digests


@pytest.mark.slow
def test_the_fixed_run_stores_the_recorded_rows(tmp_path: Path) -> None:
    expected = json.loads(EXPECTED.read_text())
    found = fixed_run_digests(tmp_path / "digest.db")
    changed = sorted(k for k in expected.keys() | found.keys() if k != "run" and expected.get(k) != found.get(k))
    assert found["run"] == expected["run"], (
        f"the stored rows of the fixed run changed, in attempts {changed} (all of them: {len(expected) - 1}); "
        "if that is meant, record them anew: python -m tests.engine.stored_digest")


def test_the_digest_sees_a_changed_verdict_and_ignores_the_clock(tmp_path: Path) -> None:
    import aeh

    db = tmp_path / "small.db"
    run_id = aeh.run("toy_math", adapter="mock", attempts=1, seed=3, db=db).run_id
    before = canonical_rows(db, run_id)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE spans SET start_ts = start_ts + 5, end_ts = end_ts + 5")
        conn.execute("UPDATE attempts SET latency_s = latency_s * 2, agent_s = 9")
        (root,) = conn.execute("SELECT root_span_id FROM attempts ORDER BY task_id LIMIT 1").fetchone()
        new_id = "f" * 16  # another random id for the same span: its references follow it
        conn.execute("UPDATE spans SET span_id = replace(span_id, ?1, ?2), "
                     "parent_span_id = replace(parent_span_id, ?1, ?2)", (root, new_id))
        conn.execute("UPDATE attempts SET root_span_id = ?2 WHERE root_span_id = ?1", (root, new_id))
    assert canonical_rows(db, run_id) == before  # ids and times are not results
    with conn:
        conn.execute("UPDATE grader_results SET passed = 1 - passed WHERE rowid = (SELECT min(rowid) FROM grader_results)")
    conn.close()
    assert digest(canonical_rows(db, run_id)) != digest(before)
