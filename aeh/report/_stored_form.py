"""The shipped notebooks are stored without outputs: the form, and the Jupyter hook that keeps it.

`stored_form(nb)` is a notebook as the checkout keeps it: no outputs or execution counts, no
per-cell run state (timings, scroll and collapse flags), and the notebook metadata the stored
file already has (the kernel's `language_info`, widget state or papermill's record never land).
Written the way Jupyter writes notebooks, it is byte for byte the committed file.

Jupyter Server loads `aeh.report` as a server extension in the environment aeh is installed in,
when `etc/jupyter/jupyter_server_config.d/aeh.report.json` under its prefix says so: a wheel
install places that file, and `aeh notebooks hook` writes it for an editable install (setuptools
installs no data files in editable mode). Its pre-save hook puts a *shipped* notebook — one of
`NOTEBOOKS` in an aeh checkout's `notebooks/` or in the installed package — into that form before
JupyterLab writes it, so `jupyter lab notebooks/`, Run All and Save leave `git status` clean. A
git filter (nbstripout) would need setting up in every clone's `.git/config` and would leave the
working tree dirty. Copies (`aeh notebooks copy DIR`) and any other notebook are saved as they
are. The hook is added beside any the user configured.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aeh.errors import ConfigError
from aeh.report._paths import NOTEBOOKS, notebooks_dir

__all__ = ["HOOK_CONFIG", "hook_config_path", "is_shipped_notebook", "save_hook", "set_save_hook", "stored_form",
           "stored_text", "strip_notebooks"]

#: the Jupyter Server configuration that loads the extension (also the wheel's data file)
HOOK_CONFIG = {"ServerApp": {"jpserver_extensions": {"aeh.report": True}}}

#: per-cell metadata a run or the UI writes: execution timings, scroll/collapse state
_RUN_STATE = ("execution", "ExecuteTime", "scrolled", "collapsed", "jupyter", "papermill")


def stored_form(nb: Mapping[str, Any], stored: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`nb` as the shipped notebooks are stored; the notebook metadata is `stored`'s (the file on
    disk) when given, else `nb`'s with `language_info` cut to its name and run records dropped."""
    cells = []
    for cell in nb.get("cells", []):
        if "injected-parameters" in (cell.get("metadata") or {}).get("tags", []):
            continue  # papermill's parameters cell belongs to an executed copy
        out = {k: v for k, v in cell.items() if k not in ("outputs", "execution_count")}
        out["metadata"] = {k: v for k, v in (cell.get("metadata") or {}).items() if k not in _RUN_STATE}
        if cell.get("cell_type") == "code":
            out["execution_count"], out["outputs"] = None, []
        cells.append(out)
    if stored is not None:
        metadata = dict(stored.get("metadata") or {})
        minor = stored.get("nbformat_minor", nb.get("nbformat_minor"))
    else:
        metadata = {k: v for k, v in (nb.get("metadata") or {}).items() if k not in ("widgets", "papermill")}
        if isinstance(metadata.get("language_info"), dict):
            metadata["language_info"] = {"name": metadata["language_info"].get("name", "python")}
        minor = nb.get("nbformat_minor")
    return {**nb, "cells": cells, "metadata": metadata, "nbformat_minor": minor}


def stored_text(nb: Mapping[str, Any], stored: Mapping[str, Any] | None = None) -> str:
    """The file text of `stored_form(nb, stored)`, as Jupyter writes a notebook (nbformat.write)."""
    # heavy: loaded on first use (nbformat validates and normalises multi-line sources)
    import nbformat

    notebook = nbformat.from_dict(stored_form(nb, stored))  # type: ignore[no-untyped-call]  # unannotated
    return str(nbformat.writes(notebook)) + "\n"  # type: ignore[no-untyped-call]


def strip_notebooks(paths: Sequence[str | Path] = ()) -> list[Path]:
    """Rewrite notebooks in their stored form (default: the shipped ones); returns those changed."""
    changed = []
    for path in [Path(p) for p in paths] or [(notebooks_dir() / f"{name}.ipynb").resolve() for name in NOTEBOOKS]:
        text = path.read_text(encoding="utf-8")
        stored = stored_text(json.loads(text))
        if stored != text:
            path.write_text(stored, encoding="utf-8")
            changed.append(path)
    return changed


def hook_config_path(prefix: str | Path | None = None) -> Path:
    """Where Jupyter Server in the environment at `prefix` (default: this one) reads the hook's config."""
    return Path(prefix or sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / "aeh.report.json"


def set_save_hook(enabled: bool = True, prefix: str | Path | None = None) -> Path:
    """Turn the save hook on (or off) for Jupyter Server in this environment; returns the config file."""
    path = hook_config_path(prefix)
    try:
        if enabled:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(HOOK_CONFIG, indent=2) + "\n", encoding="utf-8")
        else:
            path.unlink(missing_ok=True)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot {'write' if enabled else 'remove'} it ({exc.strerror}) — run this "
                          "with the Python of the environment JupyterLab runs from, as a user who may change "
                          "that environment") from None
    return path


def is_shipped_notebook(path: str | Path) -> bool:
    """One of the shipped notebooks: in an aeh checkout's `notebooks/` (what the package links as
    `aeh/_bundled/notebooks`) or in the installed package's own folder."""
    path = Path(path)
    if path.suffix != ".ipynb" or path.stem not in NOTEBOOKS:
        return False
    folder = path.parent.resolve()
    checkout_link = path.parent.parent / "aeh" / "_bundled" / "notebooks"
    return folder == notebooks_dir().resolve() or (checkout_link.exists() and checkout_link.resolve() == folder)


def save_hook(model: dict[str, Any], path: str, contents_manager: Any, **_: Any) -> None:
    """Jupyter Server's pre-save hook: a shipped notebook is saved in its stored form."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), Mapping):
        return
    os_path = Path(str(contents_manager.root_dir)).expanduser() / path.strip("/")
    if not is_shipped_notebook(os_path):
        return
    stored = None
    if os_path.is_file():
        try:
            stored = json.loads(os_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = None  # a broken file on disk: keep the metadata being saved, cleaned
    model["content"] = stored_form(model["content"], stored if isinstance(stored, dict) else None)


# Jupyter Server's extension protocol, reached as `aeh.report._jupyter_server_extension_points` …
def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """What Jupyter Server loads: `aeh.report`, whose `_load_jupyter_server_extension` is below."""
    return [{"module": "aeh.report"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    """Add the pre-save hook, beside any the user configured."""
    server_app.contents_manager.register_pre_save_hook(save_hook)
