"""docs/trajectory.md's calibration table is the stored gate_dimensions result: it cannot go stale."""

from __future__ import annotations

from pathlib import Path

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
