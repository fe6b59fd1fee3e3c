"""No function or method of aeh is more tangled than radon's rank D (cyclomatic complexity ≤ 30):
what `radon cc -s -n E aeh` would list fails here, each block named with its file, line and score."""

from __future__ import annotations

from pathlib import Path

import pytest
from radon.complexity import cc_rank, cc_visit

PACKAGE = Path(__file__).resolve().parent.parent / "aeh"

pytestmark = pytest.mark.slow


def _worse_than_d(source: str) -> list[tuple[int, str, int]]:
    return [(block.lineno, block.fullname, block.complexity) for block in cc_visit(source)
            if cc_rank(block.complexity) in ("E", "F")]


def test_no_block_of_aeh_is_worse_than_radon_rank_d() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 250  # the whole package was read
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line} {name} {rank}({score})"
                 for path in files
                 for line, name, score in _worse_than_d(path.read_text(encoding="utf-8"))
                 for rank in [cc_rank(score)]]
    assert offenders == [], "refactor these blocks below cyclomatic complexity 31:\n" + "\n".join(offenders)


def test_the_check_names_a_block_that_is_too_complex() -> None:
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(35))
    assert _worse_than_d(f"def tangled(x):\n{branches}    return -1\n") == [(1, "tangled", 36)]
