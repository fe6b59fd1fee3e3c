"""A report kernel renders each figure once: pyplot's after-cell draw is replaced by its layout pass."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from typing import Any  # noqa: E402

import pytest  # noqa: E402
from IPython.core.events import EventManager, available_events  # noqa: E402
from matplotlib import pyplot  # noqa: E402
from matplotlib_inline.backend_inline import flush_figures  # noqa: E402

from aeh.report import _inline  # noqa: E402


class _Shell:
    def __init__(self) -> None:
        self.events = EventManager(self, available_events)


def test_pyplot_draw_hook_is_replaced_and_layout_runs_before_the_png(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython

    shell = _Shell()
    # What `%matplotlib inline` leaves in a kernel: pyplot's hook installed for this shell.
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    monkeypatch.setattr(pyplot, "_REPL_DISPLAYHOOK", pyplot._ReplDisplayHook.IPYTHON)
    shell.events.register("post_execute", pyplot._draw_all_if_interactive)
    shell.events.register("post_execute", flush_figures)
    _inline.render_figures_once(shell)
    _inline.render_figures_once(shell)  # a second report in the same process registers nothing twice
    assert shell.events.callbacks["post_execute"] == [_inline._lay_out_changed_figures, flush_figures]


def test_changed_figure_is_laid_out_without_being_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    fig = pyplot.figure(layout="tight")
    fig.add_subplot().set_title("a title that needs room")
    before = fig.subplotpars.top
    drawn: list[Any] = []
    monkeypatch.setattr(fig.canvas, "draw", lambda *a, **k: drawn.append(a))
    monkeypatch.setattr(matplotlib, "is_interactive", lambda: True)
    try:
        _inline._lay_out_changed_figures()
        assert fig.subplotpars.top != before  # the layout engine made room for the title
        assert drawn == []
    finally:
        pyplot.close(fig)
