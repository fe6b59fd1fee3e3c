"""docs/trajectory.md's calibration table is the stored gate_dimensions result: it cannot go stale."""

from __future__ import annotations

from pathlib import Path

import pytest

import aeh
from aeh.analysis import build_baseline, gate

ROOT = Path(__file__).resolve().parents[2]


def _rows(text: str, width: int) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(kind, suite, n) → (gate fired, per-task rules uncorrected) from a Markdown table of
    `width` columns (7 in RESULTS.md, 5 in the doc)."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == width and cells[0] in ("A/A", "power"):
            out[(cells[0], cells[1], cells[2])] = (cells[4], cells[6]) if width == 7 else (cells[3], cells[4])
    return out


def test_calibration_table_matches_the_stored_benchmark() -> None:
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    stored = _rows(results.split("<!-- gate_dimensions -->", 1)[1].split("<!-- /gate_dimensions -->", 1)[0], 7)
    doc = _rows((ROOT / "docs" / "trajectory.md").read_text(), 5)
    assert len(doc) >= 10
    for key, figure in doc.items():
        assert stored[key] == figure, key


def _percent(share: str) -> str:
    """"0.032 [0.023, 0.045]" → "3.2%"."""
    return f"{float(share.split()[0]) * 100:.1f}%"


def test_the_readme_gate_figures_are_the_docs_calibration_table() -> None:
    """Both README paragraphs on the gate quote the doc's A/A figures for core, and no other."""
    doc = _rows((ROOT / "docs" / "trajectory.md").read_text(), 5)
    readme = (ROOT / "README.md").read_text()
    for agent in ("mock-strong", "mock-degraded"):
        five, ten = (_percent(doc[("A/A", f"core (32), {agent}", n)][0]) for n in ("5", "10"))
        assert f"{five} / {ten} for {agent}" in readme or f"{five} / {ten} for the noisy {agent}" in readme, agent
    for stale in ("4.9%", "≈ 250", "1.4–1.8%"):
        assert stale not in readme, stale


@pytest.mark.slow
def test_the_count_of_per_task_checks_the_docs_quote_is_the_gates(tmp_path: Path) -> None:
    """README and docs say ≈ 220 task × dimension bands (+ one passing → failing test a task) on core:
    the gate's own family size over two mock-strong runs of core."""
    db = tmp_path / "runs.db"
    a = aeh.run("core", "mock", attempts=2, seed=1, db=db, model="mock-strong", progress=False)
    b = aeh.run("core", "mock", attempts=2, seed=2, db=db, model="mock-strong", progress=False)
    result = gate(build_baseline(a.run_id, db), b.run_id, db=db)
    tasks = len(aeh.load_suite("core").tasks())
    bands = result.family_size - tasks
    quoted = round(bands, -1)
    assert abs(bands - quoted) <= 5 and tasks == 32
    for doc in ("README.md", "docs/trajectory.md"):
        text = " ".join((ROOT / doc).read_text().split())
        assert f"≈ {quoted} task × dimension bands" in text, doc
    assert "32 passing → failing tests" in " ".join((ROOT / "README.md").read_text().split())
