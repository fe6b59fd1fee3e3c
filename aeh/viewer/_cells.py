"""Small HTML and widget helpers shared by the views: figures, verdicts, pagers (tables: `_table`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape

import ipywidgets as w

from aeh.report import money

__all__ = ["Pager", "money", "pct", "rate_text", "verdict_html"]

STYLE = w.HTML("<style>.aeh-head b{font-size:12px} "
               ".aeh-view table{border-collapse:collapse;font-size:12px} .aeh-view td,.aeh-view th"
               "{border-bottom:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top} "
               ".aeh-view pre{white-space:pre-wrap;margin:2px 0;font-size:12px}</style>")


def pct(x: float | None) -> str:
    """0.5 → "50.0%"; None or NaN → "—"."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def rate_text(rate: float, low: float, high: float) -> str:
    """"62.5% [40.1%, 80.2%]"."""
    return f"{pct(rate)} [{pct(low)}, {pct(high)}]"


def verdict_html(success: bool, bucket: str | None) -> str:
    """A coloured ✓ or ✗ with the failure bucket."""
    if success:
        return "<span style='color:#197a2c'>✓ passed</span>"
    return f"<span style='color:#b3261e'>✗ {escape(bucket or 'failed')}</span>"


class Pager(w.HBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """‹ prev · "rows 1–50 of 1,234" · next ›; calls `on_change` with the new offset."""

    def __init__(self, limit: int, on_change: Callable[[int], None], what: str) -> None:
        self.limit, self.offset, self.total, self.what = limit, 0, 0, what
        self._on_change = on_change
        self.prev = w.Button(description="‹ prev", layout=w.Layout(width="80px"))
        self.next = w.Button(description="next ›", layout=w.Layout(width="80px"))
        self.label = w.HTML()
        self.prev.on_click(lambda _: self.go(max(0, self.offset - self.limit)))
        self.next.on_click(lambda _: self.go(self.offset + self.limit))
        super().__init__([self.prev, self.label, self.next])
        self.add_class(f"aeh-pager-{what}")
        self.next.add_class("aeh-next")
        self.label.add_class("aeh-pager-label")

    def go(self, offset: int) -> None:
        """Show the page starting at `offset`."""
        self.offset = offset
        self._on_change(offset)

    def update(self, total: int, shown: int) -> None:
        """After a page is read: the label and which buttons work."""
        self.total = total
        first = self.offset + 1 if shown else 0
        self.label.value = f"{self.what} {first:,}–{self.offset + shown:,} of {total:,}"
        self.prev.disabled = self.offset == 0
        self.next.disabled = self.offset + shown >= total
