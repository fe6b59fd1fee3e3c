"""An Inspect log imported into the store shows in the viewer: listed, its failed attempt's trace
with the model call's input messages, and its comparison with a second import refused for the
log's harness errors."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

import aeh  # noqa: E402
from aeh.importers import import_inspect_logs  # noqa: E402
from aeh.viewer import TABS  # noqa: E402
from tests.importers.inspect_logs import PROMPTS, build_log, write_log  # noqa: E402


def test_an_imported_inspect_run_walks_through_the_viewer(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    first = import_inspect_logs([write_log(build_log(), tmp_path, "eval", "one")], db=db)
    second = import_inspect_logs([write_log(build_log(), tmp_path, "json", "two")], db=db)
    v = aeh.view(db)
    assert {first, second} <= set(v.runs.buttons)
    v.runs.buttons[first].click()
    assert v.current_run == first and "inspect:arith" in v.run.header.value
    v.attempts.failed_only.value = True
    key = next(k for k in v.attempts.buttons if k[0] == "b")  # sample b's partial-credit epoch
    v.attempts.buttons[key].click()
    assert v.tabs.selected_index == TABS.index("trace")
    assert v.document is not None and v.document["head"]["prompt"] == PROMPTS["b"]
    v.open_compare_button.click()
    v.compare.run_a.value = second
    v.compare.go.click()
    # sample c errs in every epoch: 2 of 6 attempts are harness errors, so the viewer shows the
    # refusal with its reason, as `aeh compare` does, never a verdict
    assert v.compare.result is not None and v.compare.result.verdict.status == "cannot judge"
    assert "CANNOT JUDGE" in v.compare.verdicts.value and "harness errors" in v.compare.verdicts.value
