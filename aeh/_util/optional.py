"""Optional dependencies: the notebook and report tools live in the `jupyter` extra.

`aeh run`, `compare`, `drift` and the analysis API need only the core install; notebooks, HTML
reports, charts and the widget browser need JupyterLab, papermill, nbconvert and seaborn, which
add most of the install's size and time. A feature that needs them says so by name.
"""

from __future__ import annotations

from importlib.util import find_spec

from aeh.errors import MissingExtraError

__all__ = ["JUPYTER_MODULES", "require_extra"]

#: What the `jupyter` extra brings, by import name.
JUPYTER_MODULES = ("papermill", "nbformat", "nbconvert", "ipykernel", "ipywidgets", "matplotlib", "seaborn")


def require_extra(feature: str, modules: tuple[str, ...] = JUPYTER_MODULES, extra: str = "jupyter") -> None:
    """Raise `MissingExtraError` naming the feature and the install command when a module is absent."""
    missing = [m for m in modules if find_spec(m) is None]
    if missing:
        raise MissingExtraError(feature, extra, missing)
