"""Small HTML and widget helpers shared by the views: tables of widgets, figures, pagers."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

import ipywidgets as w
from ipywidgets.widgets.widget_string import HTMLStyle

from aeh.report import money

__all__ = ["Pager", "RowButtons", "cell", "grid", "money", "pct", "rate_text", "verdict_html"]

STYLE = w.HTML("<style>.aeh-grid .widget-html-content{font-size:12px;line-height:1.3} "
               ".aeh-grid .widget-button{font-size:12px;height:24px} .aeh-head b{font-size:12px} "
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


def cell(html: str) -> w.HTML:
    """One table cell (already escaped HTML)."""
    return w.HTML(html, layout=w.Layout(overflow="hidden"))


def _tracks(columns: str) -> list[str]:
    """`"230px minmax(140px, 1fr) 80px"` → its column tracks, one per column."""
    tracks, depth, start = [], 0, 0
    for i, ch in enumerate(columns + " "):
        depth += (ch == "(") - (ch == ")")
        if ch == " " and depth == 0:
            if columns[start:i].strip():
                tracks.append(columns[start:i].strip())
            start = i + 1
    return tracks


def _outer(tracks: Sequence[str]) -> str:
    """The width of a run of `tracks` shown as one cell: their fixed widths (plus gaps), or what
    is left of the row when one of them stretches."""
    if any("fr" in t for t in tracks):
        return "minmax(0, 1fr)"
    return f"{sum(int(t.removesuffix('px')) for t in tracks) + _GAP * (len(tracks) - 1)}px"


_GAP = 8
_ROW = "<div class='aeh-row' style='display:grid;grid-template-columns:{};column-gap:{}px'>{}</div>"


def grid(header: Sequence[str], rows: Sequence[Sequence[w.Widget | str]], columns: str) -> w.GridBox:
    """A table whose cells may be widgets (buttons that open things).

    A page is drawn by the kernel and by the browser one widget at a time, so the text cells
    between two widget columns are one HTML widget per row (an inner grid with the same column
    tracks, so the columns line up across rows): a page of 50 rows and 10 columns is ~100 widgets,
    not 550. The cells share one layout and one style.
    """
    tracks = _tracks(columns)
    if len(tracks) != len(header):
        raise ValueError(f"grid: {len(header)} header cells but {len(tracks)} column tracks in {columns!r}")
    live = {i for row in rows for i, c in enumerate(row) if isinstance(c, w.Widget)}
    spans: list[range] = []  # the table's columns as drawn: a widget column, or a run of text columns
    for i in range(len(tracks)):
        if i in live or not spans or spans[-1].stop - 1 in live:
            spans.append(range(i, i + 1))
        else:
            spans[-1] = range(spans[-1].start, i + 1)
    layout, style = w.Layout(overflow="hidden"), HTMLStyle()

    def drawn(cells: Sequence[w.Widget | str]) -> list[w.Widget]:
        out = []
        for span in spans:
            if span.start in live:
                c = cells[span.start]
                out.append(c if isinstance(c, w.Widget) else w.HTML(c, layout=layout, style=style))
            else:
                inner = "".join(f"<div style='overflow:hidden'>{cells[i]}</div>" for i in span)
                template = " ".join(tracks[i] for i in span)
                out.append(w.HTML(_ROW.format(template, _GAP, inner), layout=layout, style=style))
        return out

    children = drawn([f"<b>{escape(h)}</b>" for h in header])
    for row in rows:
        children += drawn(row)
    outer = " ".join(tracks[s.start] if s.start in live else _outer([tracks[i] for i in s]) for s in spans)
    box = w.GridBox(children, layout=w.Layout(grid_template_columns=outer, grid_gap=f"1px {_GAP}px", width="100%"))
    box.add_class("aeh-grid")
    return box


class RowButtons:
    """The buttons of one table column: one layout and one style shared by all of them (a button
    of its own would bring two more widgets to draw)."""

    def __init__(self, width: str, css_class: str) -> None:
        self.layout, self.style, self.css_class = w.Layout(width=width), w.ButtonStyle(), css_class

    def make(self, description: str, tooltip: str, on_click: Callable[[], object]) -> w.Button:
        """A button of this column that calls `on_click`."""
        button = w.Button(description=description, tooltip=tooltip, layout=self.layout, style=self.style)
        button.add_class(self.css_class)
        button.on_click(lambda _b: on_click())
        return button


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
