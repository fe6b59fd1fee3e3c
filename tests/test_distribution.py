"""aeh installs as its own distribution, `aeh-harness` (the PyPI name `aeh` is another project):
every install line names it or the checkout, and a built wheel runs README command 1's run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import aeh._install as install
from aeh._install import DISTRIBUTION, install_command

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
    subprocess.run([uv, "pip", "install", "-q", "-p", str(venv), str(wheel)], check=True, timeout=900)
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
