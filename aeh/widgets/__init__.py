"""Live JupyterLab widgets. `aeh.TraceBrowser` resolves here lazily (ipywidgets loads on first use)."""

from aeh._util.optional import require_extra

require_extra("aeh.TraceBrowser", ("ipywidgets", "IPython"))

from aeh.widgets._browser import TraceBrowser  # noqa: E402  (after the extra check, for its message)

__all__ = ["TraceBrowser"]
