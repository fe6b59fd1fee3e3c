"""First contact: after only `aeh run`, every notebook runs top to bottom in a real JupyterLab.

papermill alone cannot catch a wrong store path: it sets the kernel's working directory. Here
JupyterLab starts the kernel in `notebooks/`, one level below the runs.db the CLI made, exactly
as it does for a user who opened the project folder.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from aeh.report import NOTEBOOKS, notebooks_dir

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]

_CELL_TIMEOUT_S = 240
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the workspace may keep earlier notebooks open, hidden


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "AEH_DB"}
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        path = home / var.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    # Render every cell: with the default windowing, cells scrolled out of view have no DOM to check.
    settings = home / "jupyter_config_dir" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _aeh(project: Path, env: dict[str, str], *args: str) -> None:
    aeh_bin = Path(sys.executable).parent / "aeh"
    done = subprocess.run([str(aeh_bin), *args], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A JupyterLab server on loopback over a fresh project: runs.db (two CLI runs) and notebooks/."""
    project = tmp_path_factory.mktemp("project")
    env = _clean_env(tmp_path_factory.mktemp("jupyter-home"))
    for seed in ("1", "2"):  # two runs, so compare_runs has something to compare
        _aeh(project, env, "run", "--suite", "smoke", "--adapter", "mock", "--attempts", "2", "--seed", seed)
    assert (project / "runs.db").is_file()
    (project / "notebooks").mkdir()
    for name in NOTEBOOKS:
        shutil.copy(notebooks_dir() / f"{name}.ipynb", project / "notebooks" / f"{name}.ipynb")

    port, token = _free_port(), secrets.token_hex(16)
    log = (project.parent / "jupyterlab.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip", "127.0.0.1",
         "--port", str(port), f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={project}",
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start; see {log.name}")
                time.sleep(0.5)
        yield f"{base}/lab/tree/notebooks/{{name}}.ipynb?reset&token={token}", project
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _prompts(page) -> list[str]:
    return page.locator(PANEL + " .jp-CodeCell .jp-InputArea-prompt").all_inner_texts()


def _run_all_and_wait(page) -> None:
    page.locator(PANEL + " .jp-Cell").first.wait_for(timeout=60_000)
    # The kernel must be up, and the notebook the active widget, or "Run All Cells" does nothing.
    page.get_by_text(re.compile(r"Python 3 \(ipykernel\) \| Idle")).first.wait_for(timeout=120_000)
    for _ in range(3):
        page.locator(PANEL + " .jp-Cell .jp-InputPrompt").first.click()
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        try:
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt')]"
                ".some(e => /[*0-9]/.test(e.textContent))", timeout=20_000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: try the menu again
            continue
    deadline = time.monotonic() + _CELL_TIMEOUT_S
    settled = 0
    while time.monotonic() < deadline:
        texts = _prompts(page)
        busy = any("*" in t for t in texts) or not any(re.search(r"\d", t) for t in texts)
        idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count() > 0
        settled = settled + 1 if (idle and not busy) else 0
        if settled >= 3:  # idle on three polls in a row: nothing left queued
            return
        time.sleep(0.5)
    raise AssertionError(f"cells still running after {_CELL_TIMEOUT_S} s: {_prompts(page)}")


@pytest.mark.parametrize("name", ["run_suite", "compare_runs", "explore", "judge_agreement"])
def test_notebook_runs_all_cells_in_jupyterlab(name: str, lab: tuple[str, Path], browser, artifacts: Path) -> None:
    url, project = lab
    page = browser.new_page(viewport={"width": 1300, "height": 1600})
    offsite: list[str] = []
    page.on("request", lambda r: offsite.append(r.url)
            if not r.url.startswith(("http://127.0.0.1", "data:", "blob:", "ws://127.0.0.1")) else None)
    try:
        page.goto(url.format(name=name))
        try:
            _run_all_and_wait(page)
        finally:
            page.screenshot(path=str(artifacts / f"jupyterlab-{name}.png"), full_page=True)

        stderr = page.locator(PANEL + " .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        errors = [t for t in stderr.all_inner_texts() if "Traceback" in t or re.search(r"\w+(Error|Exception)\b", t)]
        assert not errors, f"{name}: error output in JupyterLab:\n" + "\n---\n".join(e[:2000] for e in errors)
        prompts = _prompts(page)
        assert all(re.search(r"\d", p) for p in prompts), f"{name}: not every cell ran: {prompts}"

        text = page.locator(PANEL + " .jp-Notebook").inner_text()
        assert f"store: {project / 'runs.db'}" in text, f"{name}: the store line is missing"
        if name != "run_suite":  # run_suite may name the store before it exists… it exists here
            assert "walking up" in text
        if name == "run_suite":  # aeh.run shows a progress bar in a kernel, as the CLI does on a terminal
            assert page.locator(f"{PANEL} .widget-hprogress").count() > 0
        if name == "compare_runs":
            assert page.locator("#compare-table, .compare-table, [id*='compare']").count() > 0
        if name == "explore":
            rows = page.locator(f"{PANEL} .aeh-tree-row")  # TraceBrowser's span rows
            rows.first.wait_for(timeout=30_000)
            assert rows.first.evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
            lefts = {round(rows.nth(i).bounding_box()["x"]) for i in range(rows.count())}
            assert len(lefts) >= 2, "span rows do not show their depth"
            rows.first.scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts / "jupyterlab-explore-tree.png"))
        assert offsite == [], f"requests left loopback: {offsite[:5]}"
    finally:
        page.close()
