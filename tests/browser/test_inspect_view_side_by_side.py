"""aeh beside `inspect view` on one of Inspect AI's own logs, in Chromium: the same sample's
transcript in both, screenshots of both, and the times (benchmarks/inspect_view.py measures them
over several runs for RESULTS.md; this test runs each once and checks what a user sees)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import inspect_view  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600),
              pytest.mark.filterwarnings("ignore:Exception ignored in.*MemoryObjectReceiveStream"
                                         ":pytest.PytestUnraisableExceptionWarning")]


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real Inspect `eval()` (10 samples × 2 epochs, a tool call each), written by Inspect offline
    (in its own process: Inspect runs its own event loop, Playwright's is running here)."""
    folder = tmp_path_factory.mktemp("inspect") / "logs"
    done = subprocess.run([sys.executable, inspect_view.__file__, "--make-log", str(folder), "--samples", "10",
                           "--epochs", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(done.stdout.strip().splitlines()[-1])


def test_inspect_view_and_aeh_open_the_same_log(browser, log: Path, artifacts: Path, tmp_path: Path) -> None:
    theirs = inspect_view.inspect_view_once(browser, log.parent, artifacts)
    ours = inspect_view.aeh_once(browser, log, tmp_path, artifacts)
    # Each waited for the first sample's input on its first page and, after a click, for the model's
    # final message in the transcript; neither page asked for anything beyond its own origin.
    assert theirs["refused requests"] == 0 and ours["refused requests"] == 0
    for name in ("inspect-view-samples", "inspect-view-transcript", "aeh-report-inspect-log",
                 "aeh-report-inspect-transcript"):
        shot = artifacts / f"{name}.png"
        assert shot.stat().st_size > 10_000, name  # a painted page, not a blank one
    assert ours["report bytes"] < 1_500_000
    (artifacts / "inspect-view-side-by-side.json").write_text(json.dumps({"inspect view": theirs, "aeh": ours},
                                                                         indent=2))
    print(json.dumps({"inspect view": theirs, "aeh": ours}, indent=2))
