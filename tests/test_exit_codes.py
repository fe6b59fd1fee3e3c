"""README's exit-code table is `ExitCode`, and it quotes the harness-error limit the code uses."""

from __future__ import annotations

import re
from pathlib import Path

from aeh.errors import HARNESS_ERROR_LIMIT, ExitCode

README = Path(__file__).resolve().parents[1] / "README.md"


def _table_rows() -> list[str]:
    section = README.read_text(encoding="utf-8").split("### Exit codes", 1)[1]
    table = section.split("\n\n", 2)[1]
    return [line for line in table.splitlines() if re.match(r"\| \d+ \|", line)]


def test_the_readme_table_lists_every_exit_code_in_order() -> None:
    codes = [int(row.split("|")[1]) for row in _table_rows()]
    assert codes == [int(code) for code in ExitCode]


def test_the_readme_table_quotes_the_harness_error_limit() -> None:
    quoted = {m for row in _table_rows() for m in re.findall(r"harness errors above (\d+%)", row)}
    assert quoted == {f"{HARNESS_ERROR_LIMIT:.0%}"}
