"""A real browser opens the report and a trace from disk: no network, the table is there, nodes expand."""

from __future__ import annotations

import pytest
from trace_checks import assert_trace_reads_as_conversation

from aeh.report import render_run_report, render_trace_html
from aeh.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]


def _offline_page(browser):
    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    fetched: list[str] = []

    def block(route):
        fetched.append(route.request.url)
        route.abort()

    page.route("http*://**", block)  # anything off the file system would be a bug
    return page, fetched


def test_report_and_trace_in_chromium(browser, mock_db, tmp_path, artifacts):
    db, _, run_b = mock_db
    report = render_run_report(run_b, tmp_path / "report.html", db=db)
    trace = render_trace_html(run_b, "add_then_multiply", 0, tmp_path / "trace.html", db=db)

    page, fetched = _offline_page(browser)
    page.goto(report.as_uri())
    table = page.locator("#per-task-table")
    table.wait_for()
    assert table.locator("tbody tr").count() == 3
    assert "add_then_multiply" in table.inner_text()
    assert page.locator("figure.aeh-bars").count() >= 5  # the charts, as HTML bars
    assert page.locator("#rate-bars .aeh-track i.dot").count() == 3  # one dot per task
    page.screenshot(path=str(artifacts / "report.png"), full_page=False)

    page.goto(trace.as_uri())
    with Store(db) as store:
        answer = store.attempt_record(run_b, "add_then_multiply", 0).final_output
    assert_trace_reads_as_conversation(page, answer=answer)
    spans = page.locator("#aeh-spans")
    assert not spans.locator(".span").first.is_visible()  # the span tree is folded under the conversation
    spans.locator(":scope > summary").click()
    assert spans.locator(".span[data-category='model']").first.is_visible()
    page.screenshot(path=str(artifacts / "trace.png"), full_page=True)
    assert fetched == []
    page.close()


def test_dimensions_in_the_report_and_cited_steps_in_the_trace(browser, tmp_path, artifacts):
    import aeh

    db = tmp_path / "runs.db"
    run_id = aeh.run("smoke", model="mock-loopy", attempts=2, seed=5, db=db, progress=False).run_id
    frame = aeh.scores(run_id, db=db)
    loop = frame[(frame["dimension"] == "loop_detection") & (frame["score"] < 1)].iloc[0]
    report = render_run_report(run_id, tmp_path / "report.html", db=db)
    trace = render_trace_html(run_id, loop["task_id"], int(loop["attempt"]), tmp_path / "trace.html", db=db)

    page, fetched = _offline_page(browser)
    page.goto(report.as_uri())
    table = page.locator("#dimension-table")
    table.wait_for()
    assert "loop_detection" in table.inner_text() and loop["task_id"] in table.inner_text()
    page.goto(trace.as_uri())
    cited = page.locator(".call.cited .mark.cited").first
    cited.wait_for(state="visible")
    assert "loop_detection" in cited.inner_text()
    turns = page.locator("#aeh-conversation .turn")
    page.locator("#aeh-only-marked").check()  # the filter keeps cited steps in view, hides the rest
    assert cited.is_visible() and not turns.first.is_visible()
    page.screenshot(path=str(artifacts / "trace-cited.png"), full_page=True)
    assert fetched == []
    page.close()


class _LongPromptSuite:
    """toy_math with one task whose prompt is longer than a message preview."""

    name = "toy_math_long"

    def __init__(self) -> None:
        from aeh.suite.loader import load_suite

        self._base = load_suite("toy_math")
        task = next(t for t in self._base.tasks() if t.id == "add_then_multiply")
        background = " ".join(f"Shelf {i} is empty." for i in range(80))
        self._task = task.model_copy(update={"prompt": f"{background} {task.prompt}"})

    def tasks(self):
        return [self._task]

    def tool_registry(self):
        return self._base.tool_registry()

    def invariants(self):
        return self._base.invariants()

    def golden_traces(self):
        return self._base.golden_traces()


def test_a_model_span_shows_its_input_messages_in_the_trace(browser, tmp_path, artifacts):
    import aeh

    db = tmp_path / "runs.db"
    run_id = aeh.run(_LongPromptSuite(), adapter="mock", attempts=1, seed=3, db=db, progress=False).run_id
    trace = render_trace_html(run_id, "add_then_multiply", 0, tmp_path / "trace.html", db=db)
    page, fetched = _offline_page(browser)
    page.goto(trace.as_uri())
    assert_trace_reads_as_conversation(page, answer="126")
    prompt = page.locator("#aeh-head td[data-field='prompt']")
    assert "Shelf 0 is empty." in prompt.inner_text()
    assert "How many boxes" not in prompt.locator("pre").first.inner_text()  # the long prompt: its start…
    prompt.locator("details > summary").click()
    assert "How many boxes" in prompt.inner_text()  # …the rest one click away
    turns = page.locator("#aeh-conversation .turn")
    assert turns.filter(has_text="Shelf 0 is empty.").count() == 1  # sent three times, shown once
    call = page.locator("#aeh-conversation .turn.assistant .call").first
    assert "calculator" in call.locator(".sig").inner_text() and "126" in call.locator(".result").inner_text()
    assert "126" in turns.last.inner_text()  # the answer it gave
    model = turns.last
    model.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "trace-model-input.png"), full_page=True)
    assert fetched == []
    page.close()
