"""Where the real recorded runs live (beside the clone, in ../shared/realdata)."""

from __future__ import annotations

from pathlib import Path

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"
TAU_FILE = REALDATA / "tau-bench" / "gpt-4o-airline.json"
TB_DIR = REALDATA / "terminal-bench"
OPUS, SONNET, GPT5 = "20250923_droid_claude-4-1-opus", "20250923_droid_claude-4-sonnet", "20250924_droid_gpt-5"


def tb_runs(submission: str) -> list[Path]:
    """The submission's run directories in attempt order (…_1 … _5)."""
    return sorted(p for p in (TB_DIR / submission).iterdir() if p.is_dir())


def tb_submissions() -> list[str]:
    """Every Terminal-Bench submission folder present (empty when the real data is absent)."""
    return sorted(p.name for p in TB_DIR.iterdir() if p.is_dir()) if TB_DIR.is_dir() else []
