"""Figures in a report kernel are laid out and rendered once, by the inline backend's PNG.

In an IPython kernel pyplot registers a hook that draws every changed figure after each cell
(for interactive windows), and the inline backend then renders the same figure again to PNG:
the first render, about a third of every chart's time, is never seen. Its one lasting effect is
that it runs the figure's layout engine (`figure.autolayout`) once more before the PNG is made,
which moves margins by a pixel or two; the hook below keeps that layout pass and skips the render,
so the PNGs are the ones a kernel has always produced.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

__all__ = ["render_figures_once"]


def _lay_out_changed_figures() -> None:
    """What pyplot's hook did to each changed figure, without rasterizing it."""
    # heavy: loaded on first use (only after a cell of a kernel that uses matplotlib)
    import matplotlib
    from matplotlib._pylab_helpers import Gcf

    if not matplotlib.is_interactive():
        return
    for manager in Gcf.get_all_fig_managers():
        figure = manager.canvas.figure
        engine = figure.get_layout_engine()
        if figure.stale and figure.axes and engine is not None:
            engine.execute(figure)


def render_figures_once(shell: Any) -> None:
    """Replace pyplot's draw-after-each-cell hook in `shell` (after `%matplotlib inline`)."""
    # heavy: loaded on first use
    from matplotlib import pyplot
    from matplotlib_inline.backend_inline import flush_figures

    pyplot.uninstall_repl_displayhook()
    for hook in (_lay_out_changed_figures, flush_figures):  # the layout pass before the PNG, as before
        with suppress(ValueError):
            shell.events.unregister("post_execute", hook)
        shell.events.register("post_execute", hook)
