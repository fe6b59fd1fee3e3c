"""A real browser opens the report and a trace from disk: no network, the table is there, nodes expand."""

from __future__ import annotations

import pytest

from aeh.report import render_run_report, render_trace_html

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
    assert page.locator("img[src^='data:image/png;base64,']").count() >= 4
    page.screenshot(path=str(artifacts / "report.png"), full_page=False)

    page.goto(trace.as_uri())
    agent = page.locator("li.node[data-name='agent']").first
    children = agent.locator(":scope > ul > li.node").first
    assert not children.is_visible()  # collapsed below the root
    agent.locator(":scope > .row").click()
    assert "open" in agent.get_attribute("class")
    children.wait_for(state="visible")
    assert agent.locator(":scope > .detail").is_visible()
    agent.locator(":scope > .row").click()  # and closes again
    assert not children.is_visible()
    agent.locator(":scope > .row").click()
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
    page.locator("li.node[data-name='agent'] > .row").first.click()  # open the agent's steps
    cited = page.locator("li.cited > .row .cite").first
    cited.wait_for(state="visible")
    assert "loop_detection" in cited.inner_text()
    page.locator("#only-failures").check()  # the filter keeps cited steps in view
    assert cited.is_visible()
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
    page.locator("li.node[data-name='agent'] > .row").first.click()
    model = page.locator("li.node[data-category='model']").last
    model.locator(":scope > .row").click()
    sent = model.locator(".aeh-input")
    sent.wait_for(state="visible")
    assert "input · 3 messages" in sent.locator(":scope > summary").inner_text()
    earlier = sent.locator(".aeh-earlier")
    assert not earlier.locator(".aeh-user").is_visible()  # what the previous call sent is folded
    earlier.locator(":scope > summary").click()
    user = earlier.locator(".aeh-user")
    assert user.is_visible() and "Shelf 0 is empty." in user.inner_text()
    more = user.locator("details")  # the long prompt: its start, the rest one click away
    assert "How many boxes" not in user.locator(":scope > pre").inner_text()
    more.locator(":scope > summary").click()
    assert "How many boxes" in user.inner_text()
    assert model.locator(".aeh-tool").first.is_visible() and "126" in model.locator(".aeh-tool").first.inner_text()
    assert "126" in model.locator(".aeh-output").inner_text()  # the answer it gave
    model.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "trace-model-input.png"), full_page=True)
    assert fetched == []
    page.close()
