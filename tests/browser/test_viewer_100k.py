"""The viewer on a 100k-attempt store, timed in Chromium: `aeh view` announces its address only when
the page answers, then the first paint, each tab and page (run, its next page of tasks, attempts,
their next page, failed only, a trace, compare, a trajectory diff), and the kernels over 20 page
loads; and `aeh.view()` on the same store inside JupyterLab, timed the same way.

The store is `benchmarks/viewer_pages.py`'s (1,000 tasks × 100 attempts, 4 spans each, a stored
dimension score per attempt); building it takes a minute or two, so a path in $AEH_VIEWER_100K_DB
(e.g. one `viewer_pages.py --db PATH` built) is used instead when it exists. The figures, with the
load average, are printed and written to test-artifacts/viewer-100k.json (benchmarks/RESULTS.md
quotes a run). Wall times on a shared machine: each step is asserted within a loose bound (a hang
or a page that never draws fails), the figures say how fast.

"Visible" is checked in the page at every animation frame (`_shown`), not with a locator's
`wait_for`: Playwright re-checks a locator after 0, 20, 50, 100, 100 ms and then every 500 ms, so
a view drawn 0.3 s after a click read as ~0.8 s, and a first paint to the nearest 0.5 s.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.browser.test_jupyterlab import PANEL, _clean_env, _free_port, _prompts
from tests.browser.test_viewer_serving import _kernels, view_server
from tests.process_support import stop_process

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(2400)]

ROOT = Path(__file__).resolve().parents[2]
RUN = "bench-run"
ATTEMPTS = 100_000
#: A step slower than this fails the test (the targets are 2 s for the first paint, 0.5 s a tab;
#: this bound only catches a page that hangs on a loaded machine).
STEP_LIMIT_S = 20.0
FIGURES: dict[str, object] = {}


@pytest.fixture(scope="module")
def store_100k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("voila")
    given = os.environ.get("AEH_VIEWER_100K_DB")
    if given and Path(given).is_file():
        return Path(given)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from viewer_pages import build
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    db = tmp_path_factory.mktemp("viewer-100k") / "runs.db"
    FIGURES["store built in (s)"] = round(build(db, ATTEMPTS), 1)
    return db


#: In the page: every check holds: some element matching `sel` is visible (with `text` in it, or,
#: for an iframe, an element matching `inside` in its document), or with `none`, none is.
_SHOWN = """(checks) => checks.every(({sel, text, inside, none}) => {
  const shown = [...document.querySelectorAll(sel)].filter((e) => e.checkVisibility());
  if (none) return shown.length === 0;
  return shown.some((e) => inside ? !!(e.contentDocument && e.contentDocument.querySelector(inside))
                                  : !text || e.textContent.includes(text));
})"""


def _shown(page, *checks: dict[str, object], timeout: float = STEP_LIMIT_S * 3000) -> None:
    """Wait until every check holds (CSS selectors; `_SHOWN`), looking at every animation frame."""
    page.wait_for_function(_SHOWN, arg=list(checks), polling="raf", timeout=timeout)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _timed(name: str, action: Callable[[], object], shown: Callable[[], object]) -> float:
    t = time.monotonic()
    action()
    shown()
    took = round(time.monotonic() - t, 3)
    FIGURES[name] = took
    assert took < STEP_LIMIT_S, f"{name}: {took} s"
    return took


def _tab(page, scope: str, name: str) -> None:
    page.locator(f"{scope} .widget-tab .lm-TabBar-tab", has_text=re.compile(rf"^{re.escape(name)}$")).click()


def _walk(page, scope: str, prefix: str, shots: Path) -> None:
    """Each tab and page, from the run index: click, then wait until what it draws is visible."""
    visible = f"{scope} "

    def label(what: str, text: str) -> Callable[[], None]:
        return lambda: _shown(page, {"sel": f"{visible}.aeh-pager-{what} .aeh-pager-label", "text": text})

    def drawn(*selectors: str) -> Callable[[], None]:
        return lambda: _shown(page, *({"sel": f"{visible}{sel}"} for sel in selectors))

    _timed(f"{prefix}: run (its scorecard: summary and first 50 tasks)",
           lambda: page.locator(f"{visible}.aeh-open-run").first.click(), drawn(".aeh-suite-rate", ".aeh-open-task"))
    assert "100000 attempts" in page.locator(f"{visible}.aeh-suite-rate").inner_text()
    page.screenshot(path=str(shots / f"viewer-100k-{prefix}-run.png"), full_page=True)
    _timed(f"{prefix}: scorecard, next page of tasks",
           lambda: page.locator(f"{visible}.aeh-pager-tasks:visible .aeh-next").click(), label("tasks", "51–100"))
    _timed(f"{prefix}: attempts tab (first 50 attempts)", lambda: _tab(page, scope, "attempts"),
           drawn(".aeh-open-attempt"))
    _timed(f"{prefix}: attempts, next page",
           lambda: page.locator(f"{visible}.aeh-pager-attempts:visible .aeh-next").click(),
           label("attempts", "51–100 of 100,000"))
    _timed(f"{prefix}: attempts, failed only",
           lambda: page.locator(f"{visible}.widget-checkbox", has_text="failed only").locator("input").check(),
           lambda: _shown(page, {"sel": f"{visible}.aeh-open-attempt.aeh-failed"},
                          {"sel": f"{visible}.aeh-open-attempt.aeh-passed", "none": True}))
    page.screenshot(path=str(shots / f"viewer-100k-{prefix}-attempts.png"), full_page=True)
    _timed(f"{prefix}: trace", lambda: page.locator(f"{visible}.aeh-open-attempt").first.click(),
           lambda: _shown(page, {"sel": f"{visible}iframe.aeh-trace-frame", "inside": "h1"}))
    _tab(page, scope, "run")
    _timed(f"{prefix}: compare (run with itself; gate and drift on a click)",
           lambda: (page.locator(f"{visible}.aeh-to-compare").click(),
                    page.locator(f"{visible}.aeh-compare-go").click()),
           drawn(".aeh-compare-verdict", ".aeh-open-diff"))
    assert "not run yet" in page.locator(f"{visible}.aeh-gate-verdict").inner_text()
    page.screenshot(path=str(shots / f"viewer-100k-{prefix}-compare.png"), full_page=True)
    _timed(f"{prefix}: trajectory diff", lambda: page.locator(f"{visible}.aeh-open-diff").first.click(),
           drawn(".aeh-trajectory-diff"))


@pytest.fixture(scope="module")
def served(store_100k: Path) -> Iterator[tuple[subprocess.Popen[str], str, float, list[tuple[float, str]]]]:
    FIGURES["load average at the start"] = _load()
    with view_server(store_100k, _free_port(), "viewer-100k.log") as running:
        yield running


def test_voila_on_100k_attempts(browser, served, artifacts: Path) -> None:
    # `browser` first: Chromium is up before `aeh view` starts, as a user's browser is, so the
    # time from the announcement to the request is opening a tab, not launching Chromium
    server, url, started, lines = served
    announced_at = next(t for t, line in lines if "serving on" in line)
    FIGURES["voila: start to announcement (s)"] = round(announced_at - started, 2)
    assert not any(url in line for _, line in lines if "serving on" not in line)  # no address before it answers
    FIGURES["voila: load average at the announcement"] = _load()
    page = browser.new_page(viewport={"width": 1500, "height": 1100})  # a browser tab, opened (test overhead)
    t = time.monotonic()
    FIGURES["voila: announcement to the request (a new tab in a running Chromium; s)"] = round(t - announced_at, 3)
    page.goto(url, wait_until="commit", timeout=120_000)
    FIGURES["voila: request to first response (s)"] = round(time.monotonic() - t, 3)
    page.wait_for_load_state("load", timeout=120_000)  # the HTML and Voila's scripts
    FIGURES["voila: request to page loaded (HTML and scripts; s)"] = round(time.monotonic() - t, 3)
    _shown(page, {"sel": ".aeh-open-run"}, timeout=120_000)
    FIGURES["voila: request to first paint (s)"] = round(time.monotonic() - t, 3)
    painted = round(time.monotonic() - announced_at, 3)
    FIGURES["voila: first paint after the announcement (s)"] = painted
    assert painted < STEP_LIMIT_S
    page.screenshot(path=str(artifacts / "viewer-100k-voila-index.png"), full_page=True)
    _walk(page, "body", "voila", artifacts)
    page.close()

    counts, paints = [], []
    for _ in range(20):  # 20 page loads, each closed once it painted
        page = browser.new_page()
        t = time.monotonic()
        page.goto(url, wait_until="load", timeout=120_000)
        _shown(page, {"sel": ".aeh-open-run"}, timeout=120_000)
        paints.append(time.monotonic() - t)
        counts.append(_kernels(server.pid))
        page.close(run_before_unload=True)
    FIGURES["voila: 20 page loads, paint median (s)"] = round(sorted(paints)[10], 3)
    FIGURES["voila: kernels during 20 page loads (max)"] = max(counts)
    assert max(counts) <= 4  # aeh view's default cap
    deadline = time.monotonic() + 90
    while _kernels(server.pid) > 2 and time.monotonic() < deadline:
        time.sleep(1)
    FIGURES["voila: kernels after 20 page loads"] = _kernels(server.pid)
    assert FIGURES["voila: kernels after 20 page loads"] <= 2  # the pre-heated one, and one being refilled
    FIGURES["voila: load average at the end"] = _load()
    _write(artifacts)


def test_aeh_view_in_jupyterlab_on_100k_attempts(store_100k: Path, browser, artifacts: Path,
                                                  tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = _clean_env(tmp_path / "home")
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": "view", "metadata": {}, "outputs": [],
                           "source": ["import aeh\n", f"aeh.view({str(store_100k)!r})"]}],
                "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                            "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    (project / "viewer.ipynb").write_text(json.dumps(notebook))
    port, token = _free_port(), secrets.token_hex(16)
    log = tmp_path / "jupyterlab.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip", "127.0.0.1", "--port",
             str(port), f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={project}",
             "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            cwd=project, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            deadline = time.monotonic() + 180
            while True:  # the server answers once it is up
                try:
                    page.goto(f"http://127.0.0.1:{port}/lab/tree/viewer.ipynb?reset&token={token}", timeout=30_000)
                    break
                except Exception:  # noqa: BLE001 - playwright's Error: not up yet
                    assert time.monotonic() < deadline and server.poll() is None, log.read_text()[-3000:]
                    time.sleep(1)
            page.locator(PANEL + " .jp-Cell").first.wait_for(timeout=120_000)
            page.get_by_text(re.compile(r"Python 3 \(ipykernel\) \| Idle")).first.wait_for(timeout=120_000)
            FIGURES["jupyterlab: load average before the cell"] = _load()
            page.locator(PANEL + " .jp-Cell .jp-InputPrompt").first.click()
            t = time.monotonic()
            page.keyboard.press("Shift+Enter")  # run the cell: import aeh, aeh.view(store)
            _shown(page, {"sel": f"{PANEL} .aeh-open-run"}, timeout=180_000)
            FIGURES["jupyterlab: aeh.view() cell run to painted run index (s)"] = round(time.monotonic() - t, 3)
            # a run opened the moment the index paints (the kernel may still be importing what
            # compare needs, and the cell's reply may still be on its way); the cell's finished
            # prompt and the index's screenshot are checked after the walk
            _walk(page, PANEL, "jupyterlab", artifacts)
            assert any(re.search(r"\d", p) for p in _prompts(page))
            _tab(page, PANEL, "runs")
            _shown(page, {"sel": f"{PANEL} .aeh-open-run"})
            page.screenshot(path=str(artifacts / "viewer-100k-jupyterlab-index.png"), full_page=True)
            page.close()
        finally:
            stop_process(server)
    _write(artifacts)


def _write(artifacts: Path) -> None:
    print(json.dumps(FIGURES, indent=1))
    (artifacts / "viewer-100k.json").write_text(json.dumps(FIGURES, indent=1))
