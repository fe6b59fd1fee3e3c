"""aeh installs as its own distribution, `aeh-harness` (the PyPI name `aeh` is another project):
every install line names it or the checkout, and a built wheel runs README command 1's run, holds
the notebooks and renders a report from its own copy of them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import aeh._util.install as install
from aeh._util.install import DISTRIBUTION, install_command
from aeh.report import NOTEBOOKS

ROOT = Path(__file__).resolve().parents[1]
#: `pip install aeh`, `pip install 'aeh[x]'`, `uv pip install "aeh[x]"`: the stranger's package.
STRANGER = re.compile(r"""pip install\s+(-[^\s]+\s+)*['"]?aeh(\[|['"\s]|$)""", re.M)


def test_an_editable_install_is_told_to_install_the_extra_from_its_checkout() -> None:
    assert install_command("ray") == f"pip install -e '{ROOT}[ray]'"


def test_any_other_install_is_told_the_distributions_own_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install, "_editable_checkout", lambda: None)
    assert install_command("otel") == "pip install 'aeh-harness[otel]'"


def _text_files() -> list[Path]:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    keep = (".md", ".py", ".sh", ".toml", ".ipynb", ".yaml", ".yml", ".cfg", ".txt")
    return [ROOT / p for p in tracked.splitlines() if p.endswith(keep) and (ROOT / p).is_file()]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to list the project's files")
def test_no_line_in_the_project_installs_the_pypi_package_called_aeh() -> None:
    offending = [f"{path.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}"
                 for path in _text_files() if path != Path(__file__)
                 for text in [path.read_text(errors="replace")] for m in STRANGER.finditer(text)]
    assert offending == []


@pytest.mark.slow
def test_the_built_wheel_installs_into_a_fresh_venv_and_runs_the_smoke_suite(tmp_path: Path) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(uv).exists():
        pytest.skip("uv is not installed beside this interpreter")
    dist = tmp_path / "dist"
    subprocess.run([uv, "build", "--wheel", "-q", "-o", str(dist), str(ROOT)], check=True, timeout=600)
    wheel = next(dist.glob("*.whl"))
    assert wheel.name.startswith("aeh_harness-")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True, timeout=120)
    with zipfile.ZipFile(wheel) as archive:
        inside = set(archive.namelist())
    assert {f"aeh/_bundled/notebooks/{name}.ipynb" for name in NOTEBOOKS} <= inside
    assert "aeh/_bundled/suites/smoke/suite.py" in inside
    # the results' typed fields reach a user's mypy (PEP 561); Jupyter Server in the environment
    # loads the save hook that keeps the shipped notebooks without outputs
    assert "aeh/py.typed" in inside
    assert f"aeh_harness-{wheel.name.split('-')[1]}.data/data/etc/jupyter/jupyter_server_config.d/aeh.report.json" in inside
    # `aeh view` serves this notebook with this template from the install
    assert {"aeh/viewer/view.ipynb", "aeh/viewer/table.js", "aeh/viewer/share/voila/templates/aeh/index.html.j2"} <= inside
    # The jupyter extra too, so the installed aeh can render a report from its own notebooks.
    subprocess.run([uv, "pip", "install", "-q", "-p", str(venv), f"{DISTRIBUTION}[jupyter] @ {wheel.as_uri()}"],
                   check=True, timeout=900)
    assert (venv / "etc" / "jupyter" / "jupyter_server_config.d" / "aeh.report.json").is_file()
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("AEH_DB", "PYTHONPATH")}
    ran = subprocess.run([str(venv / "bin" / "aeh"), "run", "--suite", "smoke", "--adapter", "mock",
                          "--attempts", "5", "--seed", "1"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "capital_first_alphabetically         5   4  0.80  [0.38, 0.96]" in ran.stdout
    shipped = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import aeh, pathlib, importlib.metadata as m; "
                              "p = pathlib.Path(aeh.__file__).parent / '_bundled'; "
                              "print(m.version('" + DISTRIBUTION + "'), "
                              "sorted(x.name for x in (p / 'notebooks').glob('*.ipynb')), "
                              "sorted(x.name for x in (p / 'suites').iterdir() if x.is_dir()))"],
                             cwd=work, env=env, capture_output=True, text=True, check=True)
    assert "run_suite.ipynb" in shipped.stdout and "'core'" in shipped.stdout and "'coding'" in shipped.stdout

    # `aeh report` runs the installed copy: a cell added to it shows in the report.
    located = subprocess.run([str(venv / "bin" / "python"), "-c", "from aeh.report import notebooks_dir; "
                              "print(notebooks_dir())"], cwd=work, env=env, capture_output=True, text=True, check=True)
    installed = Path(located.stdout.strip())
    assert installed.is_relative_to(venv) and not installed.is_symlink()
    notebook = json.loads((installed / "run_suite.ipynb").read_text())
    notebook["cells"].append({"cell_type": "markdown", "id": "wheel-copy", "metadata": {},
                              "source": ["Rendered from the installed wheel's notebook."]})
    (installed / "run_suite.ipynb").write_text(json.dumps(notebook))
    run_id = ran.stdout.strip().splitlines()[-1].split()[-1]
    report = subprocess.run([str(venv / "bin" / "aeh"), "report", "--run-id", run_id, "--out", "r.html"], cwd=work,
                            env=env, capture_output=True, text=True, timeout=600)
    assert report.returncode == 0, report.stderr[-2000:]
    html = (work / "r.html").read_text()
    assert "Rendered from the installed wheel's notebook." in html and 'id="per-task-table"' in html
