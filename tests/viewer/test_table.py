"""The viewer's table: a page is one widget whose rows are data, and a click comes back as a message
naming the page, the row and the column."""

from __future__ import annotations

import ipywidgets as w
import pytest
from ipywidgets.widgets.widget import _instances

import aeh
from aeh.viewer import TABS
from aeh.viewer._table import RowButtons, Table


def _widgets() -> set[str]:
    return set(_instances)


def test_a_click_message_calls_the_rows_button_and_a_stale_one_is_ignored():
    clicked: list[str] = []
    column = RowButtons("100px", "aeh-open-x")
    table = Table(["name", "n"], "100px 40px", empty="<i>none</i>")
    table.show([[column.make(name, f"open {name}", lambda name=name: clicked.append(name)), "<b>1</b>"]
                for name in ("a", "b<c")])
    assert table.rows[1] == [{"label": "b<c", "title": "open b<c", "class": "aeh-open-x", "width": "100px"},
                             "<b>1</b>"]
    page = table.page
    table.clicked({"event": "click", "page": page, "row": 1, "col": 0})
    assert clicked == ["b<c"]
    table.clicked({"event": "click", "page": page, "row": 1, "col": 1})  # a text cell: nothing
    table.clicked({"event": "click", "page": page, "row": 7, "col": 0})  # no such row
    table.clicked({"event": "other", "page": page, "row": 0, "col": 0})
    table.show([[column.make("z", "open z", lambda: clicked.append("z")), "2"]])
    table.clicked({"event": "click", "page": page, "row": 0, "col": 0})  # drawn before this page: ignored
    assert clicked == ["b<c"]
    table.clicked({"event": "click", "page": table.page, "row": 0, "col": 0})
    assert clicked == ["b<c", "z"]
    assert table.text.splitlines() == ["name\tn", "z\t2"]


def test_bad_shapes_are_clear_errors():
    with pytest.raises(ValueError, match="2 header cells but 3 column tracks"):
        Table(["a", "b"], "10px minmax(20px, 1fr) 30px")
    table = Table(["a", "b"], "10px minmax(20px, 1fr)")
    with pytest.raises(ValueError, match="row 0 has 1 cells, the header 2"):
        table.show([["x"]])


def test_a_new_page_or_a_new_run_draws_no_new_widget(mock_db):
    """The browser builds a view per widget: paging and reopening a run update the tables' state
    and create no widget (a widget per row and button made a page ~100 widgets and ~170 frames)."""
    db, run_a, run_b = mock_db
    v = aeh.view(db)
    v.open_run(run_b)
    v.tabs.selected_index = TABS.index("attempts")
    v.attempts.pager.limit = 2
    v.attempts.pager.go(0)
    v.run.pager.limit = 1
    v.run.pager.go(0)
    before = _widgets()
    v.attempts.pager.next.click()
    v.run.pager.next.click()
    v.runs.pager.go(0)
    assert _widgets() - before == set()
    assert len(v.attempts.rows) == 2 and len(v.run.grid.rows) == 1
    v.open_run(run_a)  # the task table, the attempts: state only (the bucket buttons are a few widgets)
    v.tabs.selected_index = TABS.index("attempts")
    new = [_instances[k] for k in _widgets() - before]
    assert not any(isinstance(x, (Table, w.GridBox)) for x in new), new
    assert len(new) <= 3 * len(v.run.bucket_buttons) + 8, [type(x).__name__ for x in new]
