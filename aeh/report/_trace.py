"""`render_trace_html`: one attempt's span tree as a single self-contained HTML file (vanilla JS)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from string import Template
from typing import Any

from aeh._version import __version__
from aeh.errors import ConfigError
from aeh.models import Attempt, Span
from aeh.report._messages import MESSAGES_CSS, message_keys, messages_html
from aeh.report._paths import default_out
from aeh.report._tree import SpanNode, build_tree, cited_span_ids, localized_span_ids, span_label
from aeh.store import Redactor, Store, StoreLike, redactor_for_run, using_store

__all__ = ["attempt_scores", "render_trace_html", "trace_html"]

_TEMPLATES = Path(__file__).parent / "templates"
_DETAIL_FIRST = ("args", "result", "error", "evidence", "final_output")


def _read(name: str) -> str:
    return (_TEMPLATES / name).read_text(encoding="utf-8")


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, default=str, ensure_ascii=False)


def _detail(span: Span) -> str:
    attrs = dict(span.attributes)
    parts = [
        f'<div class="k">span {escape(span.span_id)} · {escape(span.category)} · status {escape(span.status)}</div>'
    ]
    if span.category == "model":
        parts.append(messages_html(span))
        for key in message_keys():
            attrs.pop(key, None)
    for key in _DETAIL_FIRST:
        if key in attrs:
            parts.append(f'<div class="k">{escape(key)}</div><pre>{escape(_pretty(attrs.pop(key)))}</pre>')
    if attrs:
        parts.append(f'<div class="k">attributes</div><pre>{escape(_pretty(attrs))}</pre>')
    return '<div class="detail">' + "".join(parts) + "</div>"


def _node_html(node: SpanNode, localized: dict[str, str], open_depth: int, cited: dict[str, str]) -> str:
    span = node.span
    classes = ["node"]
    if span.span_id in cited:
        classes.append("cited")
    if not node.children:
        classes.append("leaf")
    if node.failed:
        classes.append("failed")
    if span.span_id in localized:
        classes.append("localized")
    if node.depth < open_depth and node.children:
        classes.append("open")
    why = f'<span class="why">◀ {escape(localized[span.span_id])}</span>' if span.span_id in localized else ""
    if span.span_id in cited:
        why += f'<span class="cite" title="cited by these trajectory dimensions">◆ {escape(cited[span.span_id])}</span>'
    row = (
        f'<div class="row" tabindex="0" title="{escape(span_label(span))}"><span class="twisty"></span>'
        f'<span class="cat cat-{escape(span.category)}">{escape(span.category)}</span>'
        f"{escape(span_label(span))}{why}</div>"
    )
    children = "".join(_node_html(c, localized, open_depth, cited) for c in node.children)
    kids = f"<ul>{children}</ul>" if children else ""
    return (
        f'<li class="{" ".join(classes)}" data-span-id="{escape(span.span_id)}" '
        f'data-category="{escape(span.category)}" data-name="{escape(span.name)}">{row}{_detail(span)}{kids}</li>'
    )


def _meta(attempt: Attempt, run: dict[str, Any]) -> str:
    rows = [
        (
            "run",
            f"{run.get('run_id')} · suite {run.get('suite')} · adapter {run.get('adapter')} · model {run.get('model') or '-'}",  # noqa: E501
        ),
        (
            "result",
            ("success" if attempt.success else "failure")
            + (f" · bucket {attempt.failure_bucket.value}" if attempt.failure_bucket else "")
            + f" · status {attempt.status}",
        ),
        ("final output", attempt.final_output or "—"),
        ("error", attempt.error or "—"),
        (
            "tokens / cost",
            f"{attempt.tokens_in} in, {attempt.tokens_out} out · "
            + (f"${attempt.cost_usd:.6f}" if attempt.cost_usd is not None else "unpriced")
            + f" (price table {run.get('price_table_version')}, {run.get('price_table_date')})",
        ),
        ("latency / steps", f"{attempt.latency_s:.3f} s · {attempt.steps} steps · seed {attempt.seed}"),
    ]
    return "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in rows)


def _graders(attempt: Attempt) -> str:
    if not attempt.grader_results and not attempt.invariant_results:
        return ""
    head = "<tr><th>tier</th><th>grader</th><th>kind</th><th>verdict</th><th>evidence</th></tr>"
    body = []
    for g in attempt.grader_results:
        verdict = "pass" if g.passed else "n/a" if g.passed is None else "FAIL"
        evidence = _pretty(g.evidence)
        if len(evidence) > 300:
            evidence = evidence[:299] + "…"
        body.append(
            f"<tr><td>{g.tier}</td><td>{escape(g.name)}</td><td>{escape(g.kind)}</td>"
            f"<td>{verdict}{' — ' + escape(g.error) if g.error else ''}</td>"
            f"<td><code>{escape(evidence)}</code></td></tr>"
        )
    for inv in attempt.invariant_results:
        body.append(
            f"<tr><td>1</td><td>{escape(inv.name)}</td><td>invariant</td>"
            f"<td>{'pass' if inv.passed else 'FAIL'}</td><td>{escape(inv.detail or '')}</td></tr>"
        )
    return f'<table class="graders">{head}{"".join(body)}</table>'


def trace_html(attempt: Attempt, spans: list[Span], run: dict[str, Any], *, open_depth: int = 1,
               scores: list[tuple[str, float, dict[str, Any]]] | None = None,
               redactor: Redactor | None = None) -> str:
    """The HTML text of one attempt's trace (no external reference of any kind).

    Everything shown is redacted first (the run's redactor), whatever store it came from.
    `scores` — (dimension, score, evidence) of this attempt — mark each step a dimension cites.
    `redactor`: `redactor_for_run(run["config"])`, when the caller renders many traces of one run
    (its caches of redacted keys and short strings then serve them all).
    """
    if redactor is None:
        redactor = redactor_for_run(run.get("config"))
    if redactor.enabled:
        attempt = Attempt.model_validate(redactor.redact_plain(attempt.model_dump(mode="json")))
        spans = [redactor.redact_span(s) for s in spans]
        run = redactor.redact_plain(run)
    roots = build_tree(spans)
    localized = localized_span_ids(spans, attempt.grader_results)
    cited = cited_span_ids(attempt.tool_calls, scores or [])
    ok = attempt.success
    banner = (
        f'<div class="banner {"ok" if ok else "fail"}">'
        + (
            "Attempt succeeded"
            if ok
            else "Attempt failed" + (f" — {escape(attempt.failure_bucket.value)}" if attempt.failure_bucket else "")
        )
        + (f" · {len(localized)} span(s) localized by tier 2" if localized else "")
        + (f" · {len(cited)} step(s) cited by trajectory dimensions" if cited else "")
        + "</div>"
    )
    tree = "\n".join(_node_html(r, localized, open_depth, cited) for r in roots) or "<li>no spans stored</li>"
    title = f"{attempt.task_id} #{attempt.attempt} — aeh trace"
    return Template(_read("trace.html")).substitute(
        title=escape(title),
        heading=escape(f"Trace: {attempt.task_id}, attempt {attempt.attempt}"),
        banner=banner,
        meta=_meta(attempt, run),
        graders=_graders(attempt),
        tree=tree,
        css=_read("trace.css") + MESSAGES_CSS,
        js=_read("trace.js").replace("</", "<\\/"),
        version=escape(__version__),
    )


def attempt_scores(store: Store, run_id: str, task_id: str, attempt: int) -> list[tuple[str, float, dict[str, Any]]]:
    """The stored trajectory-dimension scores of one attempt: (dimension, score, evidence)."""
    mine = store.dimension_scores_frame(run_id, task_id, attempt)
    return [(d, float(sc), json.loads(e)) for d, sc, e in mine.select("dimension", "score", "evidence").iter_rows()]


def render_trace_html(run_id: str, task_id: str, attempt: int, out: str | Path | None = None,
                      db: StoreLike = None) -> Path:
    """Write one attempt's trace to `out` (default `reports/trace-RUN-TASK-N.html`)."""
    with using_store(db) as store:
        info = store.run_info(run_id)
        frame = store.attempts_frame(info.run_id)
        keys = set(zip(frame["task_id"].to_list(), frame["attempt"].to_list(), strict=True))
        if (task_id, int(attempt)) not in keys:
            tasks = sorted({t for t, _ in keys})
            have = sorted(a for t, a in keys if t == task_id)
            hint = f"attempts of {task_id!r}: {have}" if have else f"tasks in the run: {', '.join(tasks) or 'none'}"
            raise ConfigError(f"run {info.run_id} has no attempt {attempt} of task {task_id!r} — {hint}")
        record = store.attempt_record(info.run_id, task_id, int(attempt))
        spans = store.attempt_spans(info.run_id, task_id, int(attempt))
        html = trace_html(record, spans, info.model_dump(mode="json"),
                          scores=attempt_scores(store, info.run_id, task_id, int(attempt)))
        path = Path(out) if out else default_out(f"trace-{info.run_id}-{task_id}-{attempt}.html")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        return path
