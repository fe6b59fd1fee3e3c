"""`aeh view` (Voila) and `aeh.view()` in JupyterLab, walked in Chromium over a store of several runs:
run index → run → failed attempt → trace → compare → trajectory diff, a screenshot at each step,
and no request off 127.0.0.1."""

from __future__ import annotations

import json
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect
from trace_checks import assert_trace_reads_as_conversation

from tests.browser.test_jupyterlab import _aeh, _clean_env, _free_port, _run_all_and_wait
from tests.process_support import stop_process

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(1200)]

TAU = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "tau-bench" / "gpt-4o-airline.json"
LOCAL = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:")


def _run_id(project: Path, env: dict[str, str], *args: str) -> str:
    before = set(_run_ids(project, env))
    _aeh(project, env, *args)
    (new,) = set(_run_ids(project, env)) - before
    return new


def _run_ids(project: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run([str(Path(sys.executable).parent / "aeh"), "runs"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str], dict[str, str]]]:
    """A project whose runs.db holds a mock run, a degraded mock run, a coding run and an imported run."""
    pytest.importorskip("voila")
    project = tmp_path_factory.mktemp("viewer-project")
    env = _clean_env(tmp_path_factory.mktemp("viewer-home"))
    runs = {
        "strong": _run_id(project, env, "run", "--suite", "smoke", "--adapter", "mock", "--attempts", "3",
                          "--seed", "1"),
        "degraded": _run_id(project, env, "run", "--suite", "smoke", "--adapter", "mock", "--model",
                            "mock-degraded", "--attempts", "3", "--seed", "2"),
        "coding": _run_id(project, env, "run", "--suite", "coding", "--adapter", "command", "--solver",
                          "reference", "--attempts", "1"),
    }
    if TAU.is_file():  # real recorded runs, when the shared data is there
        runs["imported"] = _run_id(project, env, "import", "tau-bench", str(TAU))
    yield project, env, runs


def _wait_http(url: str, server: subprocess.Popen[bytes], log: Path, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:  # it answers (Voila's /api/status redirects to a login: 403)
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"server did not start; see {log}")
            time.sleep(0.5)


def _tab(page, scope: str, name: str) -> None:
    page.locator(f"{scope} .widget-tab .lm-TabBar-tab", has_text=re.compile(rf"^{re.escape(name)}$")).click()


def _walk(page, scope: str, runs: dict[str, str], shots: Path, prefix: str) -> None:
    """The walk, inside `scope` (the page body for Voila, the notebook panel in JupyterLab)."""
    wait = 180_000
    page.locator(f"{scope} .aeh-open-run").first.wait_for(timeout=wait)
    index = page.locator(f"{scope} .aeh-grid").first.inner_text()
    for run_id in runs.values():
        assert run_id in index, f"run {run_id} missing from the run index"
    page.screenshot(path=str(shots / f"{prefix}-1-runs.png"), full_page=True)

    page.locator(f"{scope} .aeh-open-run", has_text=runs["degraded"]).click()  # → the run
    page.locator(f"{scope} .aeh-suite-rate").wait_for(timeout=wait)
    assert runs["degraded"] in page.locator(f"{scope} .aeh-view").first.inner_text()
    page.screenshot(path=str(shots / f"{prefix}-2-run.png"), full_page=True)

    _tab(page, scope, "attempts")  # → failed attempts
    page.locator(f"{scope} .widget-checkbox", has_text="failed only").locator("input").check()
    expect(page.locator(f"{scope} .aeh-open-attempt.aeh-passed")).to_have_count(0, timeout=wait)  # list redrawn
    failed = page.locator(f"{scope} .aeh-open-attempt.aeh-failed").first
    failed.wait_for(timeout=wait)
    label = failed.inner_text().strip()
    page.screenshot(path=str(shots / f"{prefix}-3-failed-attempts.png"), full_page=True)

    failed.click()  # → its trace
    page.locator(f"{scope} iframe.aeh-trace-frame").wait_for(timeout=wait)
    trace = page.frame_locator(f"{scope} iframe.aeh-trace-frame")  # the one trace page, in a frame
    trace.locator("h1").wait_for(timeout=wait)
    task, number = label.rsplit(" #", 1)  # the button shows the task's first 26 characters
    assert task in trace.locator("h1").inner_text() and trace.locator("h1").inner_text().endswith(f"attempt {number}")
    assert_trace_reads_as_conversation(trace)
    assert trace.locator("#aeh-graders").is_visible()
    page.screenshot(path=str(shots / f"{prefix}-4-trace.png"), full_page=True)

    _tab(page, scope, "run")  # → compare, B = this run, A = the strong run
    page.locator(f"{scope} .aeh-to-compare").click(timeout=wait)
    select_a = page.locator(f"{scope} .widget-dropdown", has_text="run A").locator("select")
    # the compare tab shows once the kernel has answered the click: on a loaded machine that is
    # longer than Playwright's 30 s default, so every step of the walk waits as long as the others
    select_a.wait_for(state="visible", timeout=wait)
    option = next(o for o in select_a.locator("option").all_inner_texts() if o.startswith(runs["strong"]))
    select_a.select_option(label=option, timeout=wait)
    page.locator(f"{scope} .aeh-compare-go").click(timeout=wait)
    verdict = page.locator(f"{scope} .aeh-compare-verdict")
    verdict.wait_for(timeout=wait)
    assert verdict.get_attribute("data-verdict") in ("regressed", "no regression", "cannot judge")
    assert "gate (dimensions" in page.locator(f"{scope} .aeh-gate-verdict").inner_text()
    page.screenshot(path=str(shots / f"{prefix}-5-compare.png"), full_page=True)

    page.locator(f"{scope} .aeh-open-diff").first.click()  # → trajectory diff
    diff = page.locator(f"{scope} .aeh-trajectory-diff")
    diff.wait_for(timeout=wait)
    assert page.locator(f"{scope} .aeh-diff-row").count() >= 1
    page.screenshot(path=str(shots / f"{prefix}-6-trajectory-diff.png"), full_page=True)


def _serve_and_walk(browser, command: list[str], cwd: Path, env: dict[str, str], log: Path, status_url: str,
                    page_url: str, scope: str, runs: dict[str, str], shots: Path, prefix: str,
                    goto: dict[str, object], before_walk: Callable[[object], None] | None = None) -> None:
    """Start `command`, wait for `status_url`, walk `page_url` in a fresh page, stop the server."""
    with log.open("w") as out:
        server = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_http(status_url, server, log)
            offsite: list[str] = []
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.on("request", lambda r: None if r.url.startswith(LOCAL) else offsite.append(r.url))
            try:
                page.goto(page_url, **goto)
                if before_walk is not None:
                    before_walk(page)
                _walk(page, scope, runs, shots, prefix)
            except Exception:
                # what the page showed when a step gave up, beside the server's log
                page.screenshot(path=str(shots / f"{prefix}-failed.png"), full_page=True)
                shutil.copy(log, shots / f"{prefix}-failed-server.log")
                raise
            finally:
                page.close()
            assert offsite == [], f"requests left 127.0.0.1: {offsite[:5]}"
        finally:
            stop_process(server)


def test_aeh_view_walk_in_voila(store, browser, artifacts: Path) -> None:
    project, env, runs = store
    db = project / "runs.db"
    before = db.read_bytes()
    port = _free_port()
    _serve_and_walk(browser, [str(Path(sys.executable).parent / "aeh"), "view", "--db", str(db), "--port",
                              str(port), "--no-browser"], project, env, project.parent / "aeh-view.log",
                    f"http://127.0.0.1:{port}/api/status", f"http://127.0.0.1:{port}/", "body", runs, artifacts,
                    "viewer-voila", {"wait_until": "commit", "timeout": 240_000})
    assert db.read_bytes() == before, "a viewing session changed the store"


def test_aeh_view_walk_in_jupyterlab(store, browser, artifacts: Path) -> None:
    project, env, runs = store
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": "view", "metadata": {},
                           "outputs": [], "source": ["import aeh\n", "aeh.view()"]}],
                "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                            "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    (project / "viewer.ipynb").write_text(json.dumps(notebook))
    port, token = _free_port(), secrets.token_hex(16)
    _serve_and_walk(
        browser,
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip", "127.0.0.1",
         "--port", str(port), f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={project}",
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        project, env, project.parent / "jupyterlab-viewer.log", f"http://127.0.0.1:{port}/api/status?token={token}",
        f"http://127.0.0.1:{port}/lab/tree/viewer.ipynb?reset&token={token}",
        ".jp-NotebookPanel:not(.lm-mod-hidden)", runs, artifacts, "viewer-jupyterlab", {},
        before_walk=_run_all_and_wait)
