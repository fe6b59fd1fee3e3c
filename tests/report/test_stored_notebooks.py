"""The shipped notebooks are stored without outputs, and JupyterLab keeps them that way.

The checkout's `notebooks/` is in git: outputs, execution counts and a kernel's metadata must never
reach a commit. The stored form is checked here for every shipped notebook (the guard a commit
meets), and Jupyter Server's pre-save hook (`aeh.report` as a server extension) is exercised
through a real server's REST API. The whole walk — `jupyter lab notebooks/`, Run All, Save,
`git status` clean — is tests/browser/test_jupyterlab.py."""

from __future__ import annotations

import copy
import json
import os
import secrets
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aeh.report import NOTEBOOKS, notebooks_dir, stored_text
from aeh.report._stored_form import HOOK_CONFIG, hook_config_path, is_shipped_notebook, stored_form
from tests.commands.test_cli import run_cli
from tests.process_support import stop_process, wait_until_answering

ROOT = Path(__file__).resolve().parents[2]


def _shipped(name: str) -> Path:
    return (notebooks_dir() / f"{name}.ipynb").resolve()


def _as_run(nb: dict[str, Any]) -> dict[str, Any]:
    """What a kernel and JupyterLab leave in a notebook: outputs, counts, timings, state."""
    ran = copy.deepcopy(nb)
    for n, cell in enumerate(c for c in ran["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = n + 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["store: /x/runs.db\n"]},
                           {"output_type": "display_data", "metadata": {},
                            "data": {"text/html": ["<table></table>"], "text/plain": ["<table>"]}}]
        cell["metadata"].update({"execution": {"iopub.status.busy": "2026-12-04T17:00:00.000Z"},
                                 "scrolled": True, "jupyter": {"outputs_hidden": False}})
    ran["metadata"]["language_info"] = {"codemirror_mode": {"name": "ipython", "version": 3},
                                        "file_extension": ".py", "mimetype": "text/x-python", "name": "python",
                                        "nbconvert_exporter": "python", "pygments_lexer": "ipython3",
                                        "version": "3.11.7"}
    ran["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return ran


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_shipped_notebook_is_stored_without_outputs(name: str) -> None:
    text = _shipped(name).read_text(encoding="utf-8")
    assert stored_text(json.loads(text)) == text, (
        f"notebooks/{name}.ipynb is not in its stored form (outputs, execution counts or run state): "
        "run `aeh notebooks strip` and commit the result")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_run_notebook_saves_back_to_the_stored_file(name: str) -> None:
    text = _shipped(name).read_text(encoding="utf-8")
    stored = json.loads(text)
    assert stored_text(_as_run(stored), stored) == text
    assert stored_text(_as_run(stored)) == text  # without the file on disk, too


def test_papermills_parameters_cell_and_record_are_not_stored() -> None:
    stored = json.loads(_shipped("explore").read_text(encoding="utf-8"))
    executed = _as_run(stored)
    executed["cells"].insert(1, {"cell_type": "code", "id": "injected", "execution_count": 2, "outputs": [],
                                 "metadata": {"tags": ["injected-parameters"]}, "source": "run_id = 'x'"})
    executed["metadata"]["papermill"] = {"parameters": {"run_id": "x"}}
    assert stored_form(executed) == stored_form(stored)


def test_only_the_shipped_notebooks_are_shipped(tmp_path: Path) -> None:
    assert all(is_shipped_notebook(_shipped(name)) for name in NOTEBOOKS)
    assert is_shipped_notebook(notebooks_dir() / "explore.ipynb")  # through the package's link
    copies = tmp_path / "notebooks"
    copies.mkdir()
    (copies / "explore.ipynb").write_text("{}")
    assert not is_shipped_notebook(copies / "explore.ipynb")  # `aeh notebooks copy` keeps its outputs
    assert not is_shipped_notebook(_shipped("explore").with_name("mine.ipynb"))
    # another checkout of aeh: its notebooks/ is what its aeh/_bundled/notebooks links to
    other = tmp_path / "checkout"
    (other / "notebooks").mkdir(parents=True)
    (other / "aeh" / "_bundled").mkdir(parents=True)
    (other / "aeh" / "_bundled" / "notebooks").symlink_to("../../notebooks")
    assert is_shipped_notebook(other / "notebooks" / "run_suite.ipynb")


def test_strip_rewrites_a_notebook_saved_with_outputs(tmp_path: Path) -> None:
    text = _shipped("judge_agreement").read_text(encoding="utf-8")
    saved = tmp_path / "judge_agreement.ipynb"
    saved.write_text(json.dumps(_as_run(json.loads(text))))
    code, out, _ = run_cli("notebooks", "strip", str(saved))
    assert code == 0 and f"stripped {saved}" in out and saved.read_text(encoding="utf-8") == text
    code, out, _ = run_cli("notebooks", "strip", str(saved))
    assert code == 0 and "already stored without outputs" in out


def test_hook_turns_the_extension_on_and_off_in_an_environment(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    code, out, _ = run_cli("notebooks", "hook")
    config = tmp_path / "etc" / "jupyter" / "jupyter_server_config.d" / "aeh.report.json"
    assert code == 0 and f"wrote {config}" in out and json.loads(config.read_text()) == HOOK_CONFIG
    code, out, _ = run_cli("notebooks", "hook", "--off")
    assert code == 0 and not config.exists()


def test_hook_in_an_environment_it_cannot_write_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "etc"
    blocked.write_text("a file where the folder would go")
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    code, _, err = run_cli("notebooks", "hook")
    assert code == 2 and "aeh.report.json: cannot write it" in err and "Traceback" not in err


def test_the_wheels_jupyter_config_is_the_hooks() -> None:
    shipped = ROOT / "aeh" / "report" / "jupyter_config" / "aeh.report.json"
    assert json.loads(shipped.read_text()) == HOOK_CONFIG
    assert hook_config_path("/p") == Path("/p/etc/jupyter/jupyter_server_config.d/aeh.report.json")


# -- a real Jupyter Server -----------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """Jupyter Server over a copy of the checkout's notebooks/ and aeh/_bundled link, the hook
    enabled the way `aeh notebooks hook` enables it (a config file under a prefix)."""
    root = tmp_path_factory.mktemp("checkout")
    (root / "notebooks").mkdir()
    for name in NOTEBOOKS:
        (root / "notebooks" / f"{name}.ipynb").write_bytes(_shipped(name).read_bytes())
    (root / "aeh" / "_bundled").mkdir(parents=True)
    (root / "aeh" / "_bundled" / "notebooks").symlink_to("../../notebooks")
    (root / "copies").mkdir()
    prefix, home = tmp_path_factory.mktemp("prefix"), tmp_path_factory.mktemp("home")
    config = hook_config_path(prefix)
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps(HOOK_CONFIG))
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(prefix / "etc" / "jupyter"),
           "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_DATA_DIR": str(home / "data"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "IPYTHONDIR": str(home / "ipython")}
    port, token = _free_port(), secrets.token_hex(8)
    log = (home / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root",
                             "--ip", "127.0.0.1", "--port", str(port), f"--IdentityProvider.token={token}",
                             f"--ServerApp.root_dir={root}"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        if not wait_until_answering(f"{base}/api/status?token={token}", proc):
            pytest.fail(f"Jupyter Server did not start: {(home / 'server.log').read_text()[-3000:]}")
        yield base, token, root
    finally:
        stop_process(proc)
        log.close()
        assert "aeh.report | extension was successfully loaded" in (home / "server.log").read_text()


def _save(base: str, token: str, path: str, nb: dict[str, Any]) -> None:
    body = json.dumps({"type": "notebook", "format": "json", "content": nb}).encode()
    request = urllib.request.Request(f"{base}/api/contents/{path}?token={token}", data=body, method="PUT",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status in (200, 201)


@pytest.mark.slow  # a Jupyter Server process
@pytest.mark.local_http
def test_jupyter_server_saves_a_shipped_notebook_as_it_is_stored(server: tuple[str, str, Path]) -> None:
    base, token, root = server
    for name in NOTEBOOKS:
        stored = (root / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8")
        _save(base, token, f"notebooks/{name}.ipynb", _as_run(json.loads(stored)))
        assert (root / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8") == stored, name


@pytest.mark.slow
@pytest.mark.local_http
def test_jupyter_server_saves_a_copy_with_its_outputs(server: tuple[str, str, Path]) -> None:
    base, token, root = server
    ran = _as_run(json.loads(_shipped("explore").read_text(encoding="utf-8")))
    _save(base, token, "copies/explore.ipynb", ran)
    saved = json.loads((root / "copies" / "explore.ipynb").read_text(encoding="utf-8"))
    assert any(c.get("outputs") for c in saved["cells"]) and saved["metadata"]["widgets"]


def test_papermill_is_never_pointed_at_a_shipped_notebook(tmp_path: Path) -> None:
    from aeh.errors import ConfigError
    from aeh.report import execute_notebook

    before = _shipped("explore").read_bytes()
    with pytest.raises(ConfigError, match="is a shipped notebook: write the executed notebook elsewhere"):
        execute_notebook("explore", {}, _shipped("explore"))
    assert _shipped("explore").read_bytes() == before


@pytest.mark.slow  # papermill executes the notebook
def test_aeh_report_writes_its_executed_notebook_elsewhere(tmp_path: Path) -> None:
    import aeh

    db = tmp_path / "runs.db"
    run = aeh.run("toy_math", adapter="mock", attempts=2, seed=1, db=db, progress=False)
    stamps = {name: (_shipped(name).stat().st_mtime_ns, _shipped(name).read_bytes()) for name in NOTEBOOKS}
    code, _, err = run_cli("report", "--run-id", run.run_id, "--db", str(db), "--out", str(tmp_path / "r.html"))
    assert code == 0, err
    assert (tmp_path / "r.html").is_file()
    assert {name: (_shipped(name).stat().st_mtime_ns, _shipped(name).read_bytes()) for name in NOTEBOOKS} == stamps
