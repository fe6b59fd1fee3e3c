"""`aeh view`: the Voila command it runs (loopback, the offline template), and its errors."""

from __future__ import annotations

import json
import logging
import re
import sys
import warnings
from pathlib import Path

import pytest

import aeh._util.optional
from aeh.cli import main
from aeh.commands.view import LAB_EXTENSIONS, voila_command, voila_env


def test_voila_serves_the_shipped_notebook_on_loopback_with_the_offline_template(tmp_path: Path) -> None:
    notebook = str(Path(aeh.__file__).parent / "viewer" / "view.ipynb")
    command = voila_command(notebook, 9123, max_kernels=3)
    assert command[:3] == [sys.executable, "-m", "voila"] and notebook in command
    assert "--Voila.ip=127.0.0.1" in command and "--port=9123" in command and "--template=aeh" in command
    assert "--preheat_kernel=True" in command and "--pool_size=1" in command  # the next page, rendered ahead
    assert ("--VoilaConfiguration.multi_kernel_manager_class=aeh.viewer._kernels.BoundedKernelManager" in command
            and "--BoundedKernelManager.max_kernels=3" in command)
    assert "--Voila.open_browser=False" in command  # aeh view opens it once the page answers
    env = voila_env(str(tmp_path / "runs.db"), str(tmp_path / "ready"))
    from aeh.viewer import READY_ENV

    assert env["AEH_DB"] == str(tmp_path / "runs.db") and env[READY_ENV] == str(tmp_path / "ready")
    template = Path(env["JUPYTER_PATH"].split(":")[0]) / "voila" / "templates" / "aeh"
    index = (template / "index.html.j2").read_text()
    assert "extends" in index and not re.search(r"(href|src)=\"https?:", index)  # minus its CDN links
    assert (template / "conf.json").is_file()
    assert "aeh.view()" in Path(notebook).read_text() and "ready()" in Path(notebook).read_text()


def test_a_missing_store_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", "--db", str(tmp_path / "runs.db"), "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert "no run store" in err and "aeh run --suite smoke" in err
    assert not (tmp_path / "runs.db").exists()


def test_without_the_jupyter_extra_it_names_the_install_command(tmp_path: Path, monkeypatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    real = aeh._util.optional.find_spec
    monkeypatch.setattr(aeh._util.optional, "find_spec", lambda name: None if name == "voila" else real(name))
    assert main(["view", "--db", str(tmp_path / "runs.db")]) == 2
    err = capsys.readouterr().err
    assert "aeh view needs the optional 'jupyter' tools (voila not installed)" in err and "pip install" in err


def test_a_bad_port_is_refused(mock_db, capsys: pytest.CaptureFixture[str]) -> None:
    db, _, _ = mock_db
    assert main(["view", "--db", str(db), "--port", "70000", "--no-browser"]) == 2
    assert "--port 70000 is not a port" in capsys.readouterr().err


def test_too_few_kernels_are_refused(mock_db, capsys: pytest.CaptureFixture[str]) -> None:
    db, _, _ = mock_db
    assert main(["view", "--db", str(db), "--max-kernels", "1", "--no-browser"]) == 2
    assert "--max-kernels 1 leaves no kernel" in capsys.readouterr().err


def test_the_pool_size_reaches_voila_and_must_leave_room_under_the_cap(mock_db, capsys) -> None:
    command = voila_command("view.ipynb", 9123, max_kernels=5, pool_size=2)
    assert "--pool_size=2" in command and "--BoundedKernelManager.max_kernels=5" in command
    db, _, _ = mock_db
    assert main(["view", "--db", str(db), "--pool-size", "2", "--max-kernels", "2", "--no-browser"]) == 2
    assert "--max-kernels 2 leaves no kernel for a page beside the 2 pre-heated" in capsys.readouterr().err
    assert main(["view", "--db", str(db), "--pool-size", "0", "--no-browser"]) == 2
    assert "--pool-size 0 keeps no kernel ready" in capsys.readouterr().err


def _page_extensions(command: list[str], extra: Path) -> list[str]:
    """The federated extensions Voila's own page config gives a viewer page for `command`'s
    Voila options, with `extra` as one more place extensions are installed."""
    pytest.importorskip("voila")
    from traitlets.config.loader import KVArgParseConfigLoader
    from voila.configuration import VoilaConfiguration
    from voila.utils import get_page_config

    options = [a for a in command if a.startswith("--VoilaConfiguration.")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # `aeh view` prints none on start
        config = KVArgParseConfigLoader(options, classes=[VoilaConfiguration]).load_config()
        voila = VoilaConfiguration(config=config, extra_labextensions_path=[str(extra)])
    page = get_page_config(base_url="/", settings={}, log=logging.getLogger("test"), voila_configuration=voila)
    return sorted(e["name"] for e in page["federated_extensions"])


def test_a_viewer_page_loads_only_the_widget_extensions(tmp_path: Path) -> None:
    """Voila loads every JupyterLab extension installed; a viewer page only the widget manager and
    the two widget libraries it draws with (not, here, a stand-in for whatever else is installed)."""
    other = tmp_path / "labextensions" / "aeh-probe-extension"
    (other / "static").mkdir(parents=True)
    (other / "static" / "remoteEntry.js").write_text("window.aehProbeLoaded = true;")
    (other / "package.json").write_text(json.dumps({
        "name": "aeh-probe-extension", "version": "1.0.0",
        "jupyterlab": {"extension": True, "_build": {"load": "static/remoteEntry.js", "extension": "./extension"}}}))
    command = voila_command("view.ipynb", 9123)
    assert _page_extensions(command, tmp_path / "labextensions") == sorted(LAB_EXTENSIONS)
    # Voila's default: everything installed, the stand-in included
    everything = _page_extensions([a for a in command if "extension_allowlist" not in a], tmp_path / "labextensions")
    assert "aeh-probe-extension" in everything and set(LAB_EXTENSIONS) <= set(everything)
