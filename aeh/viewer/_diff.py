"""The trajectory diff view: one task under two runs, aligned step by step (`aeh.trajectory_diff`)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import ipywidgets as w

from aeh import analysis
from aeh.errors import AehError
from aeh.viewer._source import Source

if TYPE_CHECKING:
    from aeh.analysis import TrajectoryDiff

__all__ = ["DiffView"]


class DiffView(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """Shows the aligned steps of a task under runs A and B, the first divergence marked."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self.result: TrajectoryDiff | None = None
        self.out = w.HTML("<i>open a trajectory diff from a comparison (“diff steps” beside a task)</i>")
        super().__init__([self.out])
        self.add_class("aeh-view")

    def show(self, run_a: str, run_b: str, task_id: str, attempt_a: int | None = None,
             attempt_b: int | None = None) -> None:
        """Align the task's steps under A and B (default: A's first pass against B's first failure)."""
        try:
            with self._source.open() as store:
                self.result = analysis.trajectory_diff(run_a, run_b, task_id, store, attempt_a=attempt_a,
                                                       attempt_b=attempt_b)
        except AehError as exc:
            self.result = None
            self.out.value = f"<div style='color:#b3261e'>{escape(str(exc))}</div>"
            return
        self.out.value = self.result._repr_html_()
