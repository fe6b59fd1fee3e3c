"""Recovery inside one stored run: by injected fault kind, with n and Wilson intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import aeh
from aeh.analysis import recovery_by_fault
from aeh.store import Store

# a faulty smoke run with injected timeouts and a rendered report
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("faulty") / "runs.db"
    # injected timeouts hang 0.05 s, not the tools' own timeout: the counts are the same, the run ~1 s
    table = aeh.run("smoke", attempts=6, seed=3, db=db, fault_profile={"mode": "uniform", "rate": 0.4, "timeout_s": 0.05})
    return db, table.run_id


def test_counts_match_the_stored_tool_calls(faulty_run: tuple[Path, str]) -> None:
    db, run_id = faulty_run
    frame = recovery_by_fault(run_id, db).set_index("injected")
    with Store(db) as store:
        stored = store.attempts_frame(run_id)
    hit = [any(c["injected_fault"] for c in json.loads(tc)) for tc in stored["tool_calls"]]
    assert frame.loc["any", "n"] == sum(hit) > 0
    assert frame.loc["none", "n"] == len(hit) - sum(hit)
    assert frame.loc["any", "n"] + frame.loc["none", "n"] == 30
    row = frame.loc["any"]
    assert row.low <= row.success_rate <= row.high
    assert "uniform mode" in recovery_by_fault(run_id, db).attrs["title"]


def test_report_shows_recovery_section_for_a_faulty_run(faulty_run: tuple[Path, str], tmp_path: Path) -> None:
    from aeh.report import render_run_report

    db, run_id = faulty_run
    html = render_run_report(run_id, tmp_path / "r.html", db=db).read_text()
    assert "Recovery under injected faults (uniform mode)" in html
