"""First contact: right after the README's install, `jupyter lab notebooks/` runs every notebook.

papermill alone cannot catch a wrong store path: it sets the kernel's working directory. Here
JupyterLab is started as the README says, from the project folder with `notebooks/` as its root,
so it starts each kernel in `notebooks/`, one level below the runs.db README command 1 made.

The project is a git repository holding this checkout's tracked files. Its `notebooks/` are the
shipped notebooks themselves, in git: each is run, saved from JupyterLab's File menu, and the file
must stay byte for byte what git holds (`git status` clean) — the environment's Jupyter Server
loads aeh's save hook (`aeh notebooks hook`, part of the README's install of the jupyter extra).
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.report import NOTEBOOKS, notebooks_dir
from aeh.report._stored_form import hook_config_path
from tests.process_support import stop_process, wait_until_answering

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


ROOT = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=aeh", "-c", "user.email=aeh@localhost", *args], cwd=repo,
                          capture_output=True, text=True, check=True, timeout=120)
    return done.stdout


def _repository_like_this_checkout(project: Path) -> None:
    """This checkout's tracked files (as they are now, links kept) committed in a fresh repository."""
    for name in _git(ROOT, "ls-files", "-z").split("\0"):
        source = ROOT / name
        if name and (source.is_file() or source.is_symlink()):
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, project / name, follow_symlinks=False)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "the checkout")


def _shipped() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(notebooks_dir().glob("*.ipynb"))}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """JupyterLab started as the README says (`jupyter lab notebooks/` in the project folder) after
    README command 1's run, in a repository like this checkout."""
    if shutil.which("git") is None:
        pytest.skip("needs git to check that running the notebooks leaves the repository clean")
    if not hook_config_path().is_file():
        pytest.fail(f"{hook_config_path()} is missing: this environment's JupyterLab would save the shipped "
                    "notebooks with their outputs — run `aeh notebooks hook` (the README's jupyter install does)")
    project = tmp_path_factory.mktemp("project")
    _repository_like_this_checkout(project)
    env = _clean_env(tmp_path_factory.mktemp("jupyter-home"))
    _aeh(project, env, "run", "--suite", "smoke", "--adapter", "mock", "--attempts", "5", "--seed", "1")
    assert (project / "runs.db").is_file()
    assert _git(project, "status", "--porcelain") == ""  # runs.db is ignored

    port, token = _free_port(), secrets.token_hex(16)
    log = (project.parent / "jupyterlab.log").open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("jupyter")), "lab", "notebooks/", "--no-browser", "--allow-root",
         "--ip", "127.0.0.1", "--port", str(port), f"--IdentityProvider.token={token}",
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        if not wait_until_answering(f"{base}/api/status?token={token}", server):
            pytest.fail(f"JupyterLab did not start; see {log.name}")
        yield f"{base}/lab/tree/{{name}}.ipynb?reset&token={token}", project, env
    finally:
        stop_process(server)
        log.close()
    assert "aeh.report | extension was successfully loaded" in Path(log.name).read_text()


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


def _save_and_wait(page, saved: Path) -> None:
    """Save from JupyterLab's File menu and wait until the server has written the file."""
    before = saved.stat().st_mtime_ns
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^File$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Save Notebook$")).click()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if saved.stat().st_mtime_ns != before and page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").count() == 0:
            return
        time.sleep(0.5)
    raise AssertionError(f"{saved} was not saved")


def _open_and_run_all(browser, url: str, name: str, artifacts: Path, shot: str) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1300, "height": 1600})
    offsite: list[str] = []
    page.on("request", lambda r: offsite.append(r.url)
            if not r.url.startswith(("http://127.0.0.1", "data:", "blob:", "ws://127.0.0.1")) else None)
    page.goto(url.format(name=name))
    try:
        _run_all_and_wait(page)
    finally:
        page.screenshot(path=str(artifacts / f"jupyterlab-{shot}.png"), full_page=True)
    stderr = page.locator(PANEL + " .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    errors = [t for t in stderr.all_inner_texts() if "Traceback" in t or re.search(r"\w+(Error|Exception)\b", t)]
    assert not errors, f"{name}: error output in JupyterLab:\n" + "\n---\n".join(e[:2000] for e in errors)
    prompts = _prompts(page)
    assert all(re.search(r"\d", p) for p in prompts), f"{name}: not every cell ran: {prompts}"
    return page, offsite


def _saved_unchanged(page, project: Path, name: str, shipped: dict[str, bytes]) -> None:
    """Saving the run notebook leaves it as git holds it."""
    _save_and_wait(page, project / "notebooks" / f"{name}.ipynb")
    assert _git(project, "status", "--porcelain") == "", f"{name}: running and saving it changed the repository"
    assert (project / "notebooks" / f"{name}.ipynb").read_bytes() == shipped[f"{name}.ipynb"]


def test_the_checkouts_notebooks_are_the_shipped_ones(lab: tuple[str, Path, dict[str, str]]) -> None:
    _, project, _ = lab
    assert sorted(p.stem for p in (project / "notebooks").glob("*.ipynb")) == sorted(NOTEBOOKS)
    assert {p.name: p.read_bytes() for p in (project / "notebooks").glob("*.ipynb")} == _shipped()


# In README order: what a user finds with README command 1's single smoke run in the store.
@pytest.mark.parametrize("name", ["run_suite", "explore", "judge_agreement", "compare_runs", "coding_matrix"])
def test_notebook_runs_all_cells_in_jupyterlab(name: str, lab: tuple[str, Path, dict[str, str]], browser,
                                               artifacts: Path) -> None:
    url, project, _ = lab
    shipped = _shipped()
    page, offsite = _open_and_run_all(browser, url, name, artifacts, name)
    try:
        text = page.locator(PANEL + " .jp-Notebook").inner_text()
        assert f"store: {project / 'runs.db'}" in text and "walking up" in text, f"{name}: the store line"
        newest = aeh.runs(project / "runs.db").run_id
        assert len(newest) == 1  # no notebook started a run of its own
        if name == "run_suite":  # no parameters: the newest stored run is reported, no run is started
            assert f"reporting run {newest.iloc[0]}" in text
            assert page.locator(f"{PANEL} #per-task-table").count() == 1
            assert page.locator(f"{PANEL} #pass-k-table .aeh-key").count() == 1
        if name == "compare_runs":  # one run: the notebook says what a comparison needs
            assert f"Comparing needs two runs; {project / 'runs.db'} holds one ({newest.iloc[0]})" in text
        if name == "coding_matrix":
            assert "No coding runs stored yet" in text
        if name == "judge_agreement":
            assert page.locator(f"{PANEL} #no-judge").count() == 1 and "κ is absent" in text
            assert "nan" not in page.locator(f"{PANEL} .jp-OutputArea").first.inner_text().lower()
        if name == "explore":
            assert page.locator(f"{PANEL} #rate-table table").count() == 1
            assert page.locator(f"{PANEL} #attempts-table tbody tr").count() == 25  # 5 tasks x 5 attempts
            rows = page.locator(f"{PANEL} .aeh-tree-row")  # TraceBrowser's span rows
            rows.first.wait_for(timeout=30_000)
            assert rows.first.evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
            lefts = {round(rows.nth(i).bounding_box()["x"]) for i in range(rows.count())}
            assert len(lefts) >= 2, "span rows do not show their depth"
            rows.first.scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts / "jupyterlab-explore-tree.png"))
        assert offsite == [], f"requests left loopback: {offsite[:5]}"
        _saved_unchanged(page, project, name, shipped)
    finally:
        page.close()


def test_compare_runs_compares_after_a_second_run(lab: tuple[str, Path, dict[str, str]], browser,
                                                  artifacts: Path) -> None:
    url, project, env = lab
    shipped = _shipped()
    _aeh(project, env, "run", "--suite", "smoke", "--adapter", "mock", "--attempts", "5", "--seed", "2")
    newest = aeh.runs(project / "runs.db").run_id
    page, offsite = _open_and_run_all(browser, url, "compare_runs", artifacts, "compare_runs-two-runs")
    try:
        text = page.locator(PANEL + " .jp-Notebook").inner_text()
        assert f"A {newest.iloc[1]}" in text and f"B {newest.iloc[0]}" in text
        assert page.locator(f"{PANEL} #compare-table table").count() == 1
        assert offsite == [], f"requests left loopback: {offsite[:5]}"
        _saved_unchanged(page, project, "compare_runs", shipped)
    finally:
        page.close()
