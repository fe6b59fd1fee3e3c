"""The two-level regression gate: a suite-wide collapse fails `aeh compare` even when no single
task is significant, and the text, the frame's attrs and the HTML report say the same thing."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

import aeh
from aeh.analysis import SUITE_ROW
from aeh.cli import main as cli_main
from aeh.commands.compare import format_comparison
from aeh.report import views
from aeh.stats import TaskCounts, per_task_mde, regression_gate
from aeh.store import Store


@pytest.fixture(scope="module")
def smoke_collapse(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """(db, strong, degraded): smoke, 5 attempts; the degraded seed drops the suite 0.96 → 0.52
    without any single task reaching significance after BH."""
    db = str(tmp_path_factory.mktemp("collapse") / "runs.db")
    for model, seed in (("mock-strong", "1"), ("mock-degraded", "9")):
        assert cli_main(["run", "--suite", "smoke", "--model", model, "--attempts", "5", "--seed", seed,
                         "--db", db, "--log-level", "silent"]) == 0
    index = aeh.runs(db)
    strong = index.loc[index.model == "mock-strong", "run_id"].iloc[0]
    degraded = index.loc[index.model == "mock-degraded", "run_id"].iloc[0]
    return db, strong, degraded


def test_cli_fails_a_suite_collapse_no_single_task_shows(smoke_collapse, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    db, strong, degraded = smoke_collapse
    assert cli_main(["compare", strong, degraded, "--db", db]) == 1
    out = capsys.readouterr().out
    assert "VERDICT: REGRESSED at the suite level" in out
    assert "task level: no task regressed significantly" in out
    assert "suite level: REGRESSED" in out and "95% CI" in out and "95.0% CI" not in out
    assert "per task, this design can only detect drops of ≥" in out and "at n = 5" in out
    frame = aeh.compare(strong, degraded, db=db)
    v = frame.verdict
    assert v.regressed and v.suite_level and v.task_level == [] and frame.regressed_tasks == []
    suite = frame.table.set_index("task_id").loc[SUITE_ROW]
    assert suite.regressed and suite.delta_high < 0


def _html_heading(frame) -> str:  # type: ignore[no-untyped-def]
    html = views.compare_header(frame).data
    start = html.index("<div id='verdict'")
    return html[start:html.index("</div>", start)]


@pytest.mark.parametrize("which", ["collapse", "self", "reverse"])
def test_text_attrs_and_html_say_the_same(smoke_collapse, which: str) -> None:  # type: ignore[no-untyped-def]
    db, strong, degraded = smoke_collapse
    a, b = {"collapse": (strong, degraded), "self": (strong, strong), "reverse": (degraded, strong)}[which]
    frame = aeh.compare(a, b, db=db)
    v = frame.verdict
    text = format_comparison(frame)
    verdict_lines = [line for line in text.splitlines() if line.startswith("VERDICT: ")]
    assert verdict_lines == [f"VERDICT: {v.headline}"]
    html = _html_heading(frame)
    assert f"Verdict: {v.headline}" in html
    assert f"data-regressed='{str(v.regressed).lower()}'" in html
    for reason in v.reasons:
        assert reason in text and views.escape(reason) in html
    # the columns carry the same decision as attrs
    suite = frame.table.set_index("task_id").loc[SUITE_ROW]
    tasks = frame.table[frame.table.task_id != SUITE_ROW]
    assert bool(suite.regressed) == v.suite_level
    assert tasks.loc[tasks.regressed, "task_id"].tolist() == v.task_level
    assert v.regressed == (v.suite_level or bool(v.task_level))
    assert v.regressed == (which == "collapse")


def test_per_task_newcombe_intervals_come_from_the_api(smoke_collapse) -> None:  # type: ignore[no-untyped-def]
    db, strong, degraded = smoke_collapse
    frame = aeh.compare(strong, degraded, db=db)
    tasks = frame.table[frame.table.task_id != SUITE_ROW]
    for r in tasks.itertuples():
        low, high = confint_proportions_2indep(r.k_b, r.n_b, r.k_a, r.n_a, method="newcomb", compare="diff")
        assert (r.delta_low, r.delta_high) == pytest.approx((low, high))
        assert r.delta_low <= r.delta <= r.delta_high
    # the report shows exactly those numbers
    table = views.compare_table(frame).data
    first = tasks.iloc[0]
    assert f"[{first.delta_low:+.2f}, {first.delta_high:+.2f}]" in table


def test_suite_row_uses_the_shared_tasks_and_says_what_it_dropped(store: Store, build) -> None:  # type: ignore[no-untyped-def]
    build.run(store, "A", {"x": [True] * 4, "y": [True, False] * 2, "onlyA": [False] * 4, "errB": [True] * 4})
    build.run(store, "B", {"x": [True] * 4, "y": [False] * 4, "onlyB": [True] * 4, "errB": [None] * 4})
    frame = aeh.compare("A", "B", db=store)
    suite = frame.table.set_index("task_id").loc[SUITE_ROW]
    # paired over x and y only: A (1 + 0.5)/2, B (1 + 0)/2 — not each run's own suite rate
    assert suite.rate_a == pytest.approx(0.75) and suite.rate_b == pytest.approx(0.5)
    assert suite.delta == pytest.approx(suite.rate_b - suite.rate_a)
    assert suite.n_a == 2
    note = "3 tasks dropped: only in A (1), only in B (1), no valid attempts (1)"
    assert note in suite.note and frame.suite_dropped_note == note
    assert frame.suite_dropped == {"only_in_a": ["onlyA"], "only_in_b": ["onlyB"],
                                            "no_valid_attempts": ["errB"]}
    assert frame.suite_a.rate != pytest.approx(suite.rate_a)  # kept, but not printed as the suite line
    # errB's harness errors refuse the comparison: the text names the dropped tasks, no paired delta
    assert frame.verdict.cannot_judge
    text = format_comparison(frame)
    assert f"tasks: {note}" in text and "paired delta" not in text


def test_underpowered_design_says_its_mde_and_leaves_the_suite_to_decide(tmp_path: Path) -> None:
    rows = [TaskCounts(f"t{i}", 5, 5, 3, 5) for i in range(32)]
    verdict = regression_gate(rows)
    assert not verdict.task_level and verdict.suite_level and verdict.regressed
    mde = per_task_mde(rows)
    assert mde is not None and not mde.lone_task_flaggable and math.isnan(mde.drop)
    assert mde.text.startswith("per task, this design cannot detect any drop at n = 5")


def test_gate_levels_on_hand_counts() -> None:
    same = [TaskCounts(f"t{i}", 4, 5, 4, 5) for i in range(5)]
    assert not regression_gate(same).regressed
    one_big = [TaskCounts("drop", 20, 20, 0, 20)] + [TaskCounts(f"t{i}", 10, 20, 10, 20) for i in range(30)]
    v = regression_gate(one_big)
    assert v.task_level == ("drop",) and not v.suite_level and v.regressed
    assert v.headline.startswith("REGRESSED at the task level")
    lone = regression_gate([TaskCounts("only", 5, 5, 0, 5)])
    assert lone.task_level == ("only",) and not lone.suite_level
    assert "suite level: not tested" in lone.reasons[1]
    mde = per_task_mde([TaskCounts("a", 9, 10, 9, 10)])
    assert mde is not None and mde.drop == pytest.approx(aeh.stats.minimum_detectable_drop(0.9, 10))


def test_html_report_is_rendered_at_the_cli_fdr(smoke_collapse, monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import aeh.report

    db, strong, degraded = smoke_collapse
    seen: dict = {}

    def fake_render(run_a, run_b, out, db=None, **kw):  # type: ignore[no-untyped-def]
        seen.update(kw)
        return Path(out)

    monkeypatch.setattr(aeh.report, "render_compare_report", fake_render)
    code = cli_main(["compare", strong, degraded, "--db", db, "--fdr", "0.1", "--html", str(tmp_path / "c.html")])
    assert code == 1 and seen == {"fdr": 0.1, "allow_unfinished": False, "overlap": False}
