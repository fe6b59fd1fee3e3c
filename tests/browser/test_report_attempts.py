"""The report of a core run in Chromium: every attempt listed with its answer, a click opens its
trace, every chart is screenshotted, and the page asks for nothing beyond its own file."""

from __future__ import annotations

import pytest
from trace_checks import assert_trace_reads_as_conversation

import aeh
from aeh.report import render_run_report
from aeh.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def core_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("core-report")
    db = tmp / "runs.db"
    run_id = aeh.run("core", adapter="mock", model="mock-degraded", attempts=2, seed=3, db=db,
                     progress=False).run_id
    with Store(db) as store:
        frame = store.attempts_frame(run_id, ["task_id", "attempt", "success", "final_output", "error"])
    # the answer, or for an attempt without one the error that ended it
    attempts = {(t, a): (ok, out or (f"error: {err}" if err else "—")) for t, a, ok, out, err in frame.iter_rows()}
    return render_run_report(run_id, tmp / "report.html", db=db), attempts, tmp


def _rows_on_page(page) -> list[dict]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('#attempts-table tbody tr')).map(tr => {
        const cells = tr.querySelectorAll('td');
        const text = (cell) => { const full = cell.querySelector('.full'); return full ? full.textContent : cell.textContent; };
        return {task: cells[0].textContent, attempt: Number(cells[1].textContent), input: text(cells[2]),
                target: text(cells[3]), verdict: cells[4].textContent, answer: text(cells[6])};
    })""")


def test_core_report_lists_every_attempt_and_opens_its_trace(browser, core_report, artifacts):
    report, attempts, tmp = core_report
    page = browser.new_page(viewport={"width": 1200, "height": 1400})
    requested: list[str] = []

    def record(route):
        url = route.request.url
        if not url.startswith(("file:", "data:", "about:")):
            requested.append(url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", record)
    page.goto(report.as_uri())
    page.locator("#attempts-table tbody tr").first.wait_for()
    for i, chart in enumerate(page.locator("figure.aeh-bars").all()):
        chart.screenshot(path=str(tmp / f"chart-{i}.png"))  # each chart, looked at by a person
        if i < 6:
            chart.screenshot(path=str(artifacts / f"report-chart-{i}.png"))
        box = chart.locator(".aeh-track").first.bounding_box()
        assert box is not None and box["width"] >= 300 and box["height"] >= 14  # drawn, not collapsed
    assert len(list(tmp.glob("chart-*.png"))) >= 5
    latency = page.locator("#latency-bars .aeh-track i.dot")
    assert latency.count() == len(attempts)  # every attempt a dot

    seen = {}
    while True:
        for row in _rows_on_page(page):
            seen[(row["task"], row["attempt"])] = row
        if page.locator("#aeh-att-next").is_disabled():
            break
        page.locator("#aeh-att-next").click()
    assert set(seen) == set(attempts)  # every attempt, across the pages
    for key, row in seen.items():
        ok, answer = attempts[key]
        assert row["verdict"] == ("pass" if ok else "FAIL")
        assert row["answer"] == answer
        assert row["input"] not in ("", "—") and row["target"] not in ("", "—")  # what was asked, what is expected

    page.locator("#aeh-att-failed").check()
    failed = sorted(k for k, (ok, _) in attempts.items() if not ok)
    assert page.locator("#aeh-att-count").inner_text().startswith(f"{len(failed)} of {len(attempts)}")
    words = seen[failed[0]]["input"].split()
    page.locator("#aeh-att-search").fill(" ".join(words[:3]))  # the search reads the input column too
    assert page.locator("#attempts-table tbody tr").count() >= 1
    page.locator("#aeh-att-search").fill(failed[0][0])
    first = page.locator("#attempts-table tbody tr").first
    assert first.locator("td").first.inner_text() == failed[0][0]
    first.click()
    trace = page.frame_locator("#aeh-att-trace")  # decoded from the compressed data, drawn in the frame
    trace.locator("h1").wait_for()
    assert trace.locator("h1").inner_text() == f"Trace: {failed[0][0]}, attempt {failed[0][1]}"
    answer = attempts[failed[0]][1]
    assert_trace_reads_as_conversation(trace, answer=None if answer.startswith(("error:", "—")) else answer)
    page.screenshot(path=str(tmp / "attempt-trace.png"))
    page.screenshot(path=str(artifacts / "report-attempt-trace.png"))
    page.locator("#aeh-att-close").click()
    assert page.locator("#aeh-att-overlay").is_hidden()
    page.locator("#aeh-attempts").screenshot(path=str(tmp / "attempts.png"))
    assert requested == []
    page.close()
