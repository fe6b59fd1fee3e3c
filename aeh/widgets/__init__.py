"""Live JupyterLab widgets. `aeh.TraceBrowser` resolves here lazily (ipywidgets loads on first use)."""

from aeh.widgets._browser import TraceBrowser

__all__ = ["TraceBrowser"]
