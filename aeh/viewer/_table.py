"""A page of a table as one widget: the header, the rows' HTML cells and their buttons.

A widget per cell or per button costs the kernel a comm message to open it and one to close it,
the server a websocket frame for each, and the browser a view to build and tear down: a page of 50
rows was ~100 widgets and ~170 websocket frames, most of a click's time. This table is one widget
(an `anywidget` ES module) whose rows are data: a new page is one state update, drawn in the browser
with one `innerHTML`. Its buttons are real `<button>`s (focusable, Enter/Space, their text their
accessible name, `title` their tooltip) in an ARIA table; a click comes back as one custom message
naming the page and the row, and calls the Python `RowButton` it was drawn from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

__all__ = ["RowButton", "RowButtons", "Table"]

_ESM = (Path(__file__).parent / "table.js").read_text(encoding="utf-8")

_TAGS = re.compile(r"<[^>]*>")
_CSS = (".aeh-grid .aeh-cell{font-size:12px;line-height:1.3;overflow:hidden;min-width:0} "
        ".aeh-grid .aeh-cell .widget-button{font-size:12px;height:24px;margin:0;max-width:100%}")


class RowButton:
    """A button of one table row, drawn by the `Table` it is shown in; `click()` does what a click
    in the browser does."""

    def __init__(self, description: str, tooltip: str, on_click: Callable[[], object], width: str,
                 css_class: str) -> None:
        self.description, self.tooltip, self.width = description, tooltip, width
        self.classes = [css_class]
        self._on_click = on_click

    def add_class(self, name: str) -> None:
        """One more CSS class on the drawn `<button>`."""
        self.classes.append(name)

    def click(self) -> None:
        """Call the button's action."""
        self._on_click()

    def drawn(self) -> dict[str, str]:
        """What the browser draws: label, tooltip, classes, width."""
        return {"label": self.description, "title": self.tooltip, "class": " ".join(self.classes),
                "width": self.width}


class RowButtons:
    """The buttons of one table column: one width and one CSS class for all of them."""

    def __init__(self, width: str, css_class: str) -> None:
        self.width, self.css_class = width, css_class

    def make(self, description: str, tooltip: str, on_click: Callable[[], object]) -> RowButton:
        """A button of this column that calls `on_click`."""
        return RowButton(description, tooltip, on_click, self.width, self.css_class)


class Table(anywidget.AnyWidget):
    """A table page as one widget: `header` and CSS grid `columns` (one track per column) are set
    once; `show(rows)` draws a page whose cells are HTML (already escaped) or `RowButton`s."""

    _esm = traitlets.Unicode(_ESM).tag(sync=True)
    _css = traitlets.Unicode(_CSS).tag(sync=True)
    header = traitlets.List(traitlets.Unicode()).tag(sync=True)
    columns = traitlets.Unicode().tag(sync=True)
    #: each row's cells: an HTML string, or a button's {label, title, class, width}
    rows: traitlets.List[list[Any]] = traitlets.List().tag(sync=True)
    #: HTML shown when there is no row
    empty = traitlets.Unicode("").tag(sync=True)
    #: which drawing `rows` is: a click on a page since replaced is ignored
    page = traitlets.Int(0).tag(sync=True)

    def __init__(self, header: Sequence[str], columns: str, empty: str = "") -> None:
        tracks = _tracks(columns)
        if len(tracks) != len(header):
            raise ValueError(f"Table: {len(header)} header cells but {len(tracks)} column tracks in {columns!r}")
        super().__init__(header=list(header), columns=columns, empty=empty)
        self.buttons: dict[tuple[int, int], RowButton] = {}
        self.on_msg(lambda _widget, content, _buffers: self.clicked(content))

    def show(self, rows: Sequence[Sequence[RowButton | str]]) -> None:
        """Draw `rows` (one state update, whatever the number of rows)."""
        width = len(self.header)
        for i, row in enumerate(rows):
            if len(row) != width:
                raise ValueError(f"Table: row {i} has {len(row)} cells, the header {width}")
        self.buttons = {(i, j): c for i, row in enumerate(rows) for j, c in enumerate(row) if isinstance(c, RowButton)}
        drawn = [[c.drawn() if isinstance(c, RowButton) else c for c in row] for row in rows]
        with self.hold_sync():
            self.page += 1
            self.rows = drawn

    def clicked(self, content: dict[str, Any]) -> None:
        """A message from the browser: a click on row `row`, column `col` of page `page`."""
        if content.get("event") != "click" or content.get("page") != self.page:
            return
        button = self.buttons.get((content.get("row"), content.get("col")))  # type: ignore[arg-type]
        if button is not None:
            button.click()

    @property
    def text(self) -> str:
        """The page as plain text, a row a line (cells by tabs; a button by its label)."""
        def plain(c: Any) -> str:
            return str(c["label"]) if isinstance(c, dict) else _TAGS.sub("", str(c))
        return "\n".join("\t".join(plain(c) for c in row) for row in [self.header, *self.rows])


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

