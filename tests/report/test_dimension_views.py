"""Trajectory dimensions where users look: the notebook views, the trace HTML and the TraceBrowser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import aeh
from aeh.report import render_trace_html
from aeh.report._dimension_views import dimension_chart, dimension_table


@pytest.fixture(scope="module")
def loopy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A mock-loopy run and one looping attempt's (task, attempt)."""
    db = tmp_path_factory.mktemp("loopy") / "runs.db"
    table = aeh.run("smoke", adapter="mock", model="mock-loopy", attempts=3, seed=11, db=db, progress=False)
    run_id = str(table.run_id)
    frame = aeh.scores(run_id, db=db)
    looping = frame[(frame["dimension"] == "loop_detection") & (frame["score"] < 1.0)]
    assert len(looping), "mock-loopy should loop at least once"
    row = looping.iloc[0]
    return db, run_id, f"{row['task_id']}#{int(row['attempt'])}"


def test_dimension_table_lists_tasks_worst_first(loopy: tuple[Path, str, str]) -> None:
    db, run_id, _ = loopy
    frame = aeh.scores(run_id, db=db)
    html = dimension_table(frame).data
    overall = frame.tasks.query("dimension == 'overall'").sort_values("mean")["task_id"].tolist()
    positions = [html.index(f"<th>{t}</th>") for t in overall]
    assert positions == sorted(positions) and 'id="dimension-table"' in html
    assert "loop_detection" in html and "±" in html


def test_dimension_chart_draws_one_bar_per_dimension_with_spread(loopy: tuple[Path, str, str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    db, run_id, _ = loopy
    frame = aeh.scores(run_id, db=db)
    fig = dimension_chart(frame)
    ax = fig.axes[0]
    assert len(ax.patches) == len(frame.suite)
    assert any("loop_detection" in t.get_text() for t in ax.get_yticklabels())
    plt.close(fig)


def test_trace_html_and_browser_mark_the_cited_steps(loopy: tuple[Path, str, str], tmp_path: Path) -> None:
    db, run_id, key = loopy
    task, attempt = key.split("#")
    html = render_trace_html(run_id, task, int(attempt), tmp_path / "t.html", db=db).read_text()
    doc = json.loads(html.split('id="aeh-trace-doc">', 1)[1].split("</script>", 1)[0])
    cited = [c for t in doc["turns"] for c in t.get("calls", []) if c.get("cited")]
    assert cited and any("loop_detection" in c["cited"] for c in cited)  # marked on the call itself
    assert doc["head"]["cited"] >= len(cited) and any("loop_detection" in s.get("cited", "") for s in doc["spans"])
    browser = aeh.TraceBrowser(run_id, db=db)
    browser.task_select.value = task
    browser.attempt_select.value = int(attempt)
    assert browser.cited and any("loop_detection" in v for v in browser.cited.values())
    browser.expand_all.click()
    cited_span = next(sid for sid, v in browser.cited.items() if "loop_detection" in v)
    assert "◆" in browser.node_buttons[cited_span].description
    browser.node_buttons[cited_span].click()
    assert "cited by trajectory dimensions" in browser.detail.value


def test_scores_are_stored_with_each_attempt_as_it_ends(tmp_path: Path) -> None:
    """An interrupted run keeps the scores of the attempts it finished (no end-of-run pass)."""
    from aeh.store import Store

    db = tmp_path / "runs.db"
    table = aeh.run("smoke", adapter="mock", model="mock-loopy", attempts=2, seed=3, db=db, progress=False)
    run_id = str(table.run_id)
    with Store(db) as store:
        stored = store.dimension_scores_frame(run_id)
        attempts = store.attempts_frame(run_id)
    scored = set(zip(stored["task_id"], stored["attempt"], strict=True))
    assert scored == set(zip(attempts["task_id"], attempts["attempt"], strict=True))  # every attempt
    assert {"loop_detection", "step_efficiency", "task_completion"} <= set(stored["dimension"])
    rescored = aeh.scores(run_id, db=db, rescore=True)
    again = stored.to_pandas().sort_values(["task_id", "attempt", "dimension"])["score"].tolist()
    assert rescored.table.sort_values(["task_id", "attempt", "dimension"])["score"].tolist() == again
    assert "dimension_scores" not in aeh.attempts(run_id, db=db).columns
