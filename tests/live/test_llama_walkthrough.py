"""scripts/llama_walkthrough.sh in small against the real model, and the docs that quote its output.

The walkthrough (react vs single_shot on SmolLM2-135M, `aeh compare`, `aeh judge-agreement` with the
same model as the judge, `aeh report`) is committed as docs/llama_walkthrough.txt and quoted by
docs/adapters.md and the README: the quotes must be lines of that file, and the script must still run
the same commands, or the docs have rotted.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from llama_support import free_port, missing, serving_backend

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "llama_walkthrough.sh"
OUTPUT = ROOT / "docs" / "llama_walkthrough.txt"


def _commands(text: str) -> list[str]:
    """The aeh commands a walkthrough output shows, without the parts its size changes."""
    out = []
    for line in text.splitlines():
        if line.startswith("$ aeh "):
            line = re.sub(r" --attempts \d+", "", line)
            line = re.sub(r" --task \S+", "", line)
            line = re.sub(r" --out \S+", "", line)
            out.append(line)
    return out


def _quoted_blocks(doc: Path) -> list[list[str]]:
    """The fenced blocks of `doc` introduced by a line ending "From docs/llama_walkthrough.txt:"."""
    blocks, lines = [], doc.read_text().splitlines()
    for i, line in enumerate(lines):
        if line == "```" and i and lines[i - 1].endswith("From docs/llama_walkthrough.txt:"):
            end = lines.index("```", i + 1)
            blocks.append(lines[i + 1:end])
    return blocks


def test_the_docs_quote_the_committed_walkthrough_verbatim() -> None:
    recorded = OUTPUT.read_text().splitlines()
    blocks = _quoted_blocks(ROOT / "docs" / "adapters.md")
    assert blocks, "docs/adapters.md quotes no block of docs/llama_walkthrough.txt"
    for block in blocks:
        for line in block:
            assert line in recorded, line
    assert "docs/llama_walkthrough.txt" in (ROOT / "README.md").read_text()
    # The default walkthrough: both suites, both adapters, their comparison and both κ, and the report.
    commands = _commands(OUTPUT.read_text())
    for suite in ("toy_math", "smoke"):
        assert any(c.startswith(f"$ aeh run --suite {suite} --adapter react ") for c in commands)
        assert any(c.startswith(f"$ aeh run --suite {suite} --adapter single_shot ") for c in commands)
        assert f"$ aeh compare walk-{suite}-react walk-{suite}-single_shot" in commands
        assert f"$ aeh judge-agreement --run-id walk-{suite}-react" in commands
    assert any(c.startswith("$ aeh report --run-id walk-toy_math-react") for c in commands)


@pytest.mark.llama
@pytest.mark.local_http
@pytest.mark.slow
def test_the_walkthrough_runs_in_small(tmp_path: Path) -> None:
    why = missing()
    if why is not None:
        if os.environ.get("CI", "").lower() == "true" or os.environ.get("AEH_LLAMA_TESTS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    env = dict(os.environ, AEH_LLAMA_BACKEND=serving_backend(), SUITES="toy_math", ATTEMPTS="1", TASKS="add_then_multiply", REPORT="0",
               OUT=str(tmp_path), PORT=str(free_port()), PYTHON=sys.executable)
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=900)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    commands = _commands(out)
    # The same commands as the committed walkthrough's, for the suites this one ran.
    assert commands == [c for c in _commands(OUTPUT.read_text())
                        if "toy_math" in c and not c.startswith("$ aeh report")]
    runs = out.split("\n$ ")
    unjudged = set()  # runs whose one attempt gave no final output: nothing for the judge to read
    for adapter in ("react", "single_shot"):
        (block,) = [b for b in runs if b.startswith(f"aeh run --suite toy_math --adapter {adapter} ")]
        assert "[exit 0," in block and "harness errors 0/1" in block, block
        if "judge verdicts: 1 attempted" not in block:
            # On a loaded runner the 30 s budget can run out before the model answers (be), or the
            # model answers nothing (na): the verdict is then automatic, counted apart from the judge's.
            assert "judge verdicts: 0 attempted, 0 valid, 0 failed, 1 automatic" in block, block
            assert re.search(r"\b(be|na):1\b", block), block
            unjudged.add(f"walk-toy_math-{adapter}")
    (compare,) = [b for b in runs if b.startswith("aeh compare ")]
    assert "VERDICT: " in compare and re.search(r"\[exit [01],", compare), compare
    for block in (b for b in runs if b.startswith("aeh judge-agreement ")):
        assert "[exit 0," in block, block
        if block.split("--run-id ")[1].split()[0] in unjudged:
            assert "0 attempted" in block and "1 automatic" in block, block
            continue
        assert "judge verdicts: 1 attempted" in block, block
        # One shadow verdict: κ's "not enough data", or nothing to compare when it did not parse.
        assert ("rater: judge vs programmatic" in block and "κ: not enough data" in block) \
            or "no valid judge verdicts in this run" in block, block
    assert "# the server's own counters over the walkthrough:" in out
