"""`TraceBrowser(run_id, db=None)`: task → attempt → span tree, with a detail pane, in JupyterLab.

Built from plain ipywidgets so it is driven (and tested) without a browser: every span row is a
Button; clicking it selects the span (detail pane) and expands or collapses its children.
ipywidgets centre a Button's text and stretch it to the column's width, which hides the depth
indentation; rows are therefore sized to their text, start at their indent, and a small style
sheet left-aligns them in a monospace font.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from html import escape

import ipywidgets as w

from aeh.report import (
    SpanNode,
    attempt_scores,
    build_tree,
    cited_span_ids,
    localized_span_ids,
    model_call_lines,
    span_label,
    walk,
)
from aeh.store import StoreLike, using_store

__all__ = ["TraceBrowser"]

ROW_CLASS = "aeh-tree-row"
_ROW_STYLE = (f"<style>.{ROW_CLASS}.jupyter-button {{text-align: left; font-family: var(--jp-code-font-family, "
              f"monospace); padding-left: 6px;}}</style>")


def plural(n: int, word: str) -> str:
    """`1 step`, `2 steps`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class TraceBrowser(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """Browse one run's traces: pick a task and an attempt, click spans to expand and inspect them."""

    def __init__(self, run_id: str, db: StoreLike = None) -> None:
        # The store is opened per read and closed again: a widget lives as long as the notebook,
        # and must not hold a connection (or the file) for that long.
        self._db = db
        with using_store(db) as store:
            self.info = store.run_info(run_id)
            self.run_id = self.info.run_id
            frame = store.attempts_frame(self.run_id)
        self._attempts: dict[str, list[tuple[int, bool]]] = {}
        for t, a, ok in zip(frame["task_id"].to_list(), frame["attempt"].to_list(),
                            frame["success"].to_list(), strict=True):
            self._attempts.setdefault(t, []).append((int(a), bool(ok)))
        self.nodes: dict[str, SpanNode] = {}
        self.expanded: set[str] = set()
        self.selected: str | None = None
        self.node_buttons: dict[str, w.Button] = {}
        self.localized: dict[str, str] = {}
        self.cited: dict[str, str] = {}
        """span id → the trajectory dimensions (and scores) whose evidence cites that step."""
        self._roots: list[SpanNode] = []

        self.failed_only = w.Checkbox(value=False, description="failed attempts only", indent=False)
        self.task_select = w.Dropdown(description="task", options=[], layout=w.Layout(width="380px"))
        self.attempt_select = w.Dropdown(description="attempt", options=[], layout=w.Layout(width="240px"))
        self.summary = w.HTML()
        self.tree = w.VBox(layout=w.Layout(width="55%", overflow="auto", max_height="640px"))
        self.detail = w.HTML(value="<i>click a span to see its attributes</i>",
                             layout=w.Layout(width="45%", overflow="auto", max_height="640px"))
        self.expand_all = w.Button(description="expand all", layout=w.Layout(width="auto"))
        self.collapse_all = w.Button(description="collapse all", layout=w.Layout(width="auto"))
        self.expand_all.on_click(lambda _: self._set_all(True))
        self.collapse_all.on_click(lambda _: self._set_all(False))
        super().__init__(children=[
            w.HTML(f"<b>Run {escape(self.run_id)}</b> · {escape(self.info.suite)} · "
                   f"{escape(self.info.adapter)} / {escape(self.info.model or '-')}"),
            w.HBox([self.task_select, self.attempt_select, self.failed_only, self.expand_all, self.collapse_all]),
            self.summary,
            w.HBox([self.tree, self.detail]),
            w.HTML(_ROW_STYLE),
        ])
        self._updating = 0
        self.failed_only.observe(lambda _: self._refresh_tasks(), names="value")
        self.task_select.observe(lambda _: None if self._updating else self._refresh_attempts(), names="value")
        self.attempt_select.observe(lambda _: None if self._updating else self._load_attempt(), names="value")
        self._refresh_tasks()

    # -- choices ------------------------------------------------------------------------------

    def _visible(self, task: str) -> list[tuple[int, bool]]:
        rows = self._attempts.get(task, [])
        return [r for r in rows if not r[1]] if self.failed_only.value else rows

    def _refresh_tasks(self) -> None:
        tasks = [t for t in sorted(self._attempts) if self._visible(t)]
        options = []
        for t in tasks:
            rows = self._attempts[t]
            options.append((f"{t} ({sum(ok for _, ok in rows)}/{len(rows)} passed)", t))
        current = self.task_select.value
        with self._quiet():
            self.task_select.options = options
            self.task_select.value = current if current in tasks else (tasks[0] if tasks else None)
        self._refresh_attempts()

    def _refresh_attempts(self) -> None:
        task = self.task_select.value
        rows = self._visible(task) if task else []
        current = self.attempt_select.value
        numbers = [a for a, _ in rows]
        with self._quiet():
            self.attempt_select.options = [(f"#{a} {'✓' if ok else '✗ failed'}", a) for a, ok in rows]
            self.attempt_select.value = current if current in numbers else (numbers[0] if numbers else None)
        self._load_attempt()

    @contextmanager
    def _quiet(self) -> Iterator[None]:
        """Change choices without each change reloading the tree."""
        self._updating += 1
        try:
            yield
        finally:
            self._updating -= 1

    # -- the tree -----------------------------------------------------------------------------

    def _load_attempt(self) -> None:
        task, attempt = self.task_select.value, self.attempt_select.value
        self.selected = None
        self.detail.value = "<i>click a span to see its attributes</i>"
        if task is None or attempt is None:
            self._roots, self.nodes = [], {}
            self.summary.value = "<i>no attempt matches the filter</i>"
            self._render()
            return
        with using_store(self._db) as store:
            record = store.attempt_record(self.run_id, task, attempt)
            spans = store.attempt_spans(self.run_id, task, attempt)
            scores = attempt_scores(store, self.run_id, task, attempt)
        self.cited = cited_span_ids(record.tool_calls, scores)
        self._roots = build_tree(spans)
        self.nodes = {n.span.span_id: n for n in walk(self._roots)}
        self.localized = localized_span_ids(spans, record.grader_results)
        self.expanded = {r.span.span_id for r in self._roots}
        verdict = "success" if record.success else "FAILED" + (
            f" ({record.failure_bucket.value})" if record.failure_bucket else "")
        self.summary.value = (f"<b>{escape(task)} #{attempt}</b>: {verdict} · {plural(record.steps, 'step')} · "
                              f"final output: {escape(str(record.final_output or '—'))[:200]}"
                              + (f" · error: {escape(record.error)}" if record.error else ""))
        self._render()

    def visible_nodes(self) -> list[SpanNode]:
        """Nodes shown now: roots, and children of expanded nodes."""
        out: list[SpanNode] = []

        def add(node: SpanNode) -> None:
            out.append(node)
            if node.span.span_id in self.expanded:
                for child in node.children:
                    add(child)

        for root in self._roots:
            add(root)
        return out

    def _button(self, node: SpanNode) -> w.Button:
        sid = node.span.span_id
        twisty = "•" if not node.children else ("▾" if sid in self.expanded else "▸")
        mark = (" ⚠" if sid in self.localized else "") + (f" ◆ {self.cited[sid]}" if sid in self.cited else "")
        button = w.Button(description=f"{twisty} [{node.span.category}] {span_label(node.span)}{mark}",
                          tooltip=sid, layout=w.Layout(width="auto", align_self="flex-start",
                                                       margin=f"1px 0 1px {node.depth * 18}px"))
        button.add_class(ROW_CLASS)
        button.style.button_color = ("#fff3bf" if sid in self.localized else "#fbe3e0" if node.failed
                                     else "#dbe7f5" if sid == self.selected else "#f4f5f7")
        button.on_click(lambda _b, sid=sid: self.click(sid))
        return button

    def _render(self) -> None:
        self.node_buttons = {n.span.span_id: self._button(n) for n in self.visible_nodes()}
        self.tree.children = list(self.node_buttons.values()) or [w.HTML("<i>no spans</i>")]

    def click(self, span_id: str) -> None:
        """Select a span (detail pane) and toggle whether its children are shown."""
        node = self.nodes[span_id]
        self.selected = span_id
        if node.children:
            self.expanded.symmetric_difference_update({span_id})
        self.detail.value = self._detail_html(node)
        self._render()

    def _set_all(self, expand: bool) -> None:
        self.expanded = {sid for sid, n in self.nodes.items() if n.children} if expand else set()
        self._render()

    def _detail_html(self, node: SpanNode) -> str:
        s = node.span
        duration = f"{s.end_ts - s.start_ts:.3f} s" if s.end_ts is not None else "open"
        why = (f"<p style='background:#fff3bf'>localized by tier 2: {escape(self.localized[s.span_id])}</p>"
               if s.span_id in self.localized else "")
        if s.span_id in self.cited:
            why += f"<p style='background:#ece5f7'>cited by trajectory dimensions: {escape(self.cited[s.span_id])}</p>"
        said = model_call_lines(s) if s.category == "model" else []
        shown = (f"<pre class='aeh-call-messages' style='white-space:pre-wrap;font-size:12px'>"
                 f"{escape(chr(10).join(said))}</pre>") if said else ""
        rest = {k: v for k, v in s.attributes.items()
                if not (said and (k.startswith("gen_ai.input") or k.startswith("gen_ai.output")
                                  or k == "gen_ai.tool.definitions" or k.startswith("aeh.input")))}
        attrs = escape(json.dumps(rest, indent=2, default=str, ensure_ascii=False))
        return (f"<h4>{escape(s.name)}</h4>{why}<p>{escape(s.category)} · status <b>{escape(s.status)}</b> · "
                f"{duration} · span <code>{escape(s.span_id)}</code></p>{shown}"
                f"<pre style='white-space:pre-wrap;font-size:12px'>{attrs}</pre>")
