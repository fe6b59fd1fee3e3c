"""Figures in a report kernel are laid out and rendered once, to one PNG each, by aeh itself.

`%matplotlib inline` costs three passes over every chart: pyplot's after-cell draw (for
interactive windows), then the inline backend's `print_figure` with `bbox_inches="tight"`, which
draws the figure once to find its extent and again to write it — and importing the backend pulls
in matplotlib_inline. A report needs none of that: its figures use the `figure.autolayout`
layout engine (run once, inside the one draw), and `show_figures` below writes each figure of
the finished cell to PNG with a single `savefig` and displays it, then closes it.

In aeh's report shell even matplotlib waits: `set_up_charts` (what `views.setup()` does) only
watches for the import of `matplotlib.pyplot` (a finder on `sys.meta_path` for that one name),
and applies the theme and the one-PNG display as soon as a cell imports it. A report whose cells
draw no figure (the run report shows its charts as HTML bars) never imports matplotlib.
"""

from __future__ import annotations

import importlib.abc
import io
import sys
import weakref
from collections.abc import Sequence
from contextlib import suppress
from types import ModuleType
from typing import Any

__all__ = ["drop_deferred", "render_figures_once", "set_up_charts", "show_figures"]

_PYPLOT = "matplotlib.pyplot"


class _SetUpOnImport(importlib.abc.MetaPathFinder):
    """Finds `matplotlib.pyplot` with the other finders and sets the charts up right after it ran."""

    def __init__(self, shell: Any) -> None:
        self.shell = weakref.ref(shell)  # the shell lives for one notebook

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if name != _PYPLOT:
            return None
        drop_deferred()  # once
        for finder in sys.meta_path:
            spec = getattr(finder, "find_spec", lambda *_: None)(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenSetUp(spec.loader, self.shell)
                return spec
        return None


class _ThenSetUp(importlib.abc.Loader):
    """The module's own loader, then the chart set-up; the module keeps its own loader."""

    def __init__(self, loader: Any, shell: weakref.ReferenceType[Any]) -> None:
        self.loader, self.shell = loader, shell

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = module.__spec__.loader = self.loader  # type: ignore[union-attr]
        self.loader.exec_module(module)
        shell = self.shell()
        if shell is not None:
            _apply(shell)


def drop_deferred() -> None:
    """Stop watching for matplotlib's import (the notebook is over, or it came)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _SetUpOnImport)]


def set_up_charts() -> None:
    """The report's chart theme and one-PNG display: now, or in aeh's report shell (matplotlib
    not imported yet) when a cell imports `matplotlib.pyplot`."""
    try:
        # heavy: loaded on first use
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    drop_deferred()
    if getattr(shell, "aeh_report_shell", False) and _PYPLOT not in sys.modules:
        sys.meta_path.insert(0, _SetUpOnImport(shell))
        return
    _apply(shell)


def _apply(shell: Any) -> None:
    # heavy: loaded on first use
    import matplotlib

    from aeh.report._charts import theme

    in_kernel = getattr(shell, "kernel", None) is not None or getattr(shell, "aeh_report_shell", False)
    if shell is not None and in_kernel:
        render_figures_once(shell)
    settings: Any = {**theme(), "figure.dpi": 90, "savefig.dpi": 90, "figure.autolayout": True}
    matplotlib.rcParams.update(settings)


def show_figures() -> None:
    """Display every open pyplot figure as one PNG (one layout pass, one render), then close it."""
    # heavy: loaded on first use (only in a kernel that drew a chart: pyplot is already imported)
    from IPython.display import Image, display
    from matplotlib import pyplot
    from matplotlib._pylab_helpers import Gcf

    for manager in Gcf.get_all_fig_managers():
        figure = manager.canvas.figure
        if figure.axes:
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png")
            display(Image(data=buffer.getvalue(), format="png"))  # type: ignore[no-untyped-call]
    pyplot.close("all")


def render_figures_once(shell: Any) -> None:
    """Draw figures with Agg and show each once after its cell (`show_figures`) in `shell`."""
    # heavy: loaded on first use
    import matplotlib

    matplotlib.use("agg")
    matplotlib.interactive(False)
    with suppress(ValueError):
        shell.events.unregister("post_execute", show_figures)
    shell.events.register("post_execute", show_figures)
