"""Figures in a report kernel are laid out and rendered once, to one PNG each, by aeh itself.

`%matplotlib inline` costs three passes over every chart: pyplot's after-cell draw (for
interactive windows), then the inline backend's `print_figure` with `bbox_inches="tight"`, which
draws the figure once to find its extent and again to write it — and importing the backend pulls
in matplotlib_inline. A report needs none of that: its figures use the `figure.autolayout`
layout engine (run once, inside the one draw), and `show_figures` below writes each figure of
the finished cell to PNG with a single `savefig` and displays it, then closes it.
"""

from __future__ import annotations

import io
from contextlib import suppress
from typing import Any

__all__ = ["render_figures_once", "show_figures"]


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
