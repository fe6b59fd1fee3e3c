"""Recorded and imported runs get the full treatment: table, compare, dimensions, trace HTML, browser, report."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import aeh
from tests.commands.test_cli import run_cli as cli
from tests.examples_support import load_example


@pytest.fixture(scope="module")
def byo_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The recorded example and the OpenTelemetry example, each a stored toy_math run in one store."""
    pytest.importorskip("opentelemetry.sdk")
    tmp = tmp_path_factory.mktemp("byo")
    db = tmp / "runs.db"
    otel_agent, recorded_agent = load_example("otel_agent"), load_example("recorded_agent")
    with redirect_stdout(io.StringIO()):
        recorded = recorded_agent.main(["--out", str(tmp / "t.jsonl"), "--db", str(db)])
        imported = otel_agent.main(["--out", str(tmp / "t.otlp.json"), "--db", str(db)])
    return db, recorded, imported


def test_per_task_table_compare_and_dimensions(byo_runs: tuple[Path, str, str]) -> None:
    db, recorded, imported = byo_runs
    for run_id in (recorded, imported):
        table = aeh.load_run(run_id, db=db)
        assert table["n"].sum() > 0 and {"low", "high"} <= set(table.table.columns)
        dims = aeh.scores(run_id, db=db)
        assert {"tool_selection", "step_efficiency", "task_completion"} <= set(dims["dimension"])
    diff = aeh.compare(recorded, imported, db=db)
    tested = diff[diff["p_value"].notna() & (diff["task_id"] != "<suite>")]
    assert set(tested["task_id"]) == {"add_then_multiply", "split_the_bill"}  # the tasks both runs have
    only = diff.table.set_index("task_id").loc["average_to_two_decimals"]
    assert "only in run A" in only["note"] and not only["regressed"]


def test_trace_html_and_browser(byo_runs: tuple[Path, str, str], tmp_path: Path) -> None:
    db, recorded, imported = byo_runs
    for run_id, tool in ((recorded, "calculator"), (imported, "calculator")):
        out = tmp_path / f"{run_id}.html"
        code, _, err = cli("trace", "--run-id", run_id, "--task", "add_then_multiply", "--out", str(out),
                           "--db", str(db))
        assert code == 0, err
        assert f"tool:{tool}" in out.read_text()
        browser = aeh.TraceBrowser(run_id, db=db)
        browser.expand_all.click()
        names = {node.span.name for node in browser.nodes.values()}
        assert f"tool:{tool}" in names and "model:call" in names


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_report_renders_an_imported_run(byo_runs: tuple[Path, str, str], tmp_path: Path) -> None:
    db, _, imported = byo_runs
    out = tmp_path / "report.html"
    code, text, err = cli("report", "--run-id", imported, "--db", str(db), "--out", str(out))
    assert code == 0, err
    html = out.read_text()
    assert 'id="per-task-table"' in html and "add_then_multiply" in html and "Wilson 95%" in html
