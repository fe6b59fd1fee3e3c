"""A report kernel renders each figure once: one PNG per figure after its cell, no inline backend."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from typing import Any  # noqa: E402

import pytest  # noqa: E402
from IPython.core.events import EventManager, available_events  # noqa: E402
from matplotlib import pyplot  # noqa: E402

from aeh.report import _inline  # noqa: E402


class _Shell:
    def __init__(self) -> None:
        self.events = EventManager(self, available_events)


def test_the_hook_is_registered_once_and_the_inline_backend_is_not_used() -> None:
    shell = _Shell()
    _inline.render_figures_once(shell)
    _inline.render_figures_once(shell)  # a second report in the same process registers nothing twice
    assert shell.events.callbacks["post_execute"] == [_inline.show_figures]
    assert matplotlib.get_backend().lower() == "agg" and not matplotlib.is_interactive()


def test_each_figure_is_drawn_once_shown_as_png_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    from matplotlib.figure import Figure

    figures = [pyplot.figure(layout="tight") for _ in range(2)]
    for i, fig in enumerate(figures):
        fig.add_subplot().set_title(f"chart {i}")
    drawn: list[Any] = []
    draw = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda fig, renderer: (drawn.append(fig), draw(fig, renderer)))
    empty = pyplot.figure()  # no axes: nothing to show
    _inline.show_figures()
    # per figure: the layout engine's pass (drawing disabled) and the one render, nothing per cell
    assert drawn == [figures[0], figures[0], figures[1], figures[1]]
    assert [obj.data[:8] for obj in shown] == [b"\x89PNG\r\n\x1a\n"] * 2
    assert not pyplot.get_fignums() and empty.number not in pyplot.get_fignums()
