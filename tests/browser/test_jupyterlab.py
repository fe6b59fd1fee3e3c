"""First contact: after only `aeh run`, every notebook runs top to bottom in a real JupyterLab.

papermill alone cannot catch a wrong store path: it sets the kernel's working directory. Here
JupyterLab starts the kernel in `notebooks/`, one level below the runs.db the CLI made, exactly
as it does for a user who opened the project folder.

The project is a git repository holding this checkout's tracked files, and `notebooks/` is made by
`aeh notebooks copy`, as the README walkthrough says: each notebook is run, saved, and `git status`
must stay clean (using the notebooks never edits the shipped ones).
"""

from __future__ import annotations

import json
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

import aeh
from aeh.report import notebooks_dir
from tests.process_support import stop_process

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
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A JupyterLab server on loopback over a project like this checkout: runs.db (two CLI runs) and
    notebooks/ from `aeh notebooks copy`."""
    if shutil.which("git") is None:
        pytest.skip("needs git to check that running the notebooks leaves the repository clean")
    project = tmp_path_factory.mktemp("project")
    _repository_like_this_checkout(project)
    env = _clean_env(tmp_path_factory.mktemp("jupyter-home"))
    for seed in ("1", "2"):  # two runs, so compare_runs has something to compare
        _aeh(project, env, "run", "--suite", "smoke", "--adapter", "mock", "--attempts", "2", "--seed", seed)
    assert (project / "runs.db").is_file()
    _aeh(project, env, "notebooks", "copy", "notebooks")
    assert _git(project, "status", "--porcelain") == ""  # runs.db and notebooks/ are ignored

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
        stop_process(server)
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


def _save_and_wait(page, saved: Path) -> None:
    """Save from JupyterLab's File menu and wait until the file on disk holds the outputs."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^File$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Save Notebook$")).click()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            cells = json.loads(saved.read_text()).get("cells", [])
        except json.JSONDecodeError:  # read while JupyterLab is still writing it
            cells = []
        if any(c.get("outputs") for c in cells):
            return
        time.sleep(0.5)
    raise AssertionError(f"{saved} was not saved with its outputs")


@pytest.mark.parametrize("name", ["run_suite", "compare_runs", "explore", "judge_agreement"])
def test_notebook_runs_all_cells_in_jupyterlab(name: str, lab: tuple[str, Path], browser, artifacts: Path) -> None:
    url, project = lab
    shipped = _shipped()
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
        newest = aeh.runs(project / "runs.db").run_id
        if name == "run_suite":  # no parameters: the newest stored run is reported, no run is started
            assert f"reporting run {newest.iloc[0]}" in text and len(newest) == 2
            assert page.locator(f"{PANEL} #per-task-table").count() == 1
            assert page.locator(f"{PANEL} #pass-k-table .aeh-key").count() == 1
        if name == "compare_runs":  # the two smoke runs, in a styled table with a key
            assert f"A {newest.iloc[1]}" in text and f"B {newest.iloc[0]}" in text
            assert page.locator(f"{PANEL} #compare-table table").count() == 1
        if name == "judge_agreement":
            assert page.locator(f"{PANEL} #no-judge").count() == 1 and "κ is absent" in text
            assert "nan" not in page.locator(f"{PANEL} .jp-OutputArea").first.inner_text().lower()
        if name == "explore":
            assert page.locator(f"{PANEL} #rate-table table").count() == 1
            assert page.locator(f"{PANEL} #attempts-table tbody tr").count() == 10  # 5 tasks x 2 attempts
            rows = page.locator(f"{PANEL} .aeh-tree-row")  # TraceBrowser's span rows
            rows.first.wait_for(timeout=30_000)
            assert rows.first.evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
            lefts = {round(rows.nth(i).bounding_box()["x"]) for i in range(rows.count())}
            assert len(lefts) >= 2, "span rows do not show their depth"
            rows.first.scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts / "jupyterlab-explore-tree.png"))
        assert offsite == [], f"requests left loopback: {offsite[:5]}"

        _save_and_wait(page, project / "notebooks" / f"{name}.ipynb")
        assert _git(project, "status", "--porcelain") == "", f"{name}: running and saving it changed the repository"
        assert _shipped() == shipped, f"{name}: a shipped notebook changed"
    finally:
        page.close()
