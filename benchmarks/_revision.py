"""aeh as of an earlier git revision, for benchmarks that measure it beside today's in one window."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def extract_revision(rev: str, where: Path) -> Path:
    """aeh as of git revision `rev`, byte-compiled, in `where` (put first on sys.path to run it)."""
    where.mkdir(parents=True)
    # aeh/_bundled links to the checkout's notebooks/ and suites/: they come along
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "aeh", "notebooks", "suites"], check=True,
                             capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(where / "aeh")], check=True,
                   stdout=subprocess.DEVNULL)
    return where
