"""The report's attempts section: every attempt of a run in one paged, filterable table (vanilla JS
over embedded JSON), each row opening that attempt's trace inside the same file."""

from __future__ import annotations

import base64
import gzip
import json
import math
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import orjson

from aeh.analysis import BUCKET_ABBREVIATIONS
from aeh.report._trace_view import DATA_MARK, money, page_shell, trace_document
from aeh.store import Redactor, StoreLike, redactor_for_stored_text, using_store

__all__ = ["ANSWER_LIMIT", "ATTEMPT_LIMIT", "TRACE_LIMIT", "AttemptsData", "attempts_data", "attempts_section",
           "bucket_legend_html"]

#: Attempts the table holds at most; a larger run keeps every failed attempt first.
ATTEMPT_LIMIT = 5000
#: Attempts whose trace is embedded at most (failed ones first): traces are embedded as one
#: gzip-compressed JSON list (~1 kB an attempt), drawn in the browser by the trace page's script.
TRACE_LIMIT = 500
#: Characters of an answer embedded; the trace shows the whole final output.
ANSWER_LIMIT = 4000

_TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class AttemptsData:
    """What the attempts table embeds: its rows, the traces they open, and what was left out."""

    run_id: str
    #: one dict per attempt shown: task, attempt, ok, bucket, answer, cost, latency, dims, trace, …
    rows: list[dict[str, Any]]
    #: attempts of the run in all
    total: int
    #: trace documents (`trace_document`); a row's `trace` indexes this list, or is -1
    traces: list[dict[str, Any]] = field(default_factory=list)
    #: task → {"input": its prompt, "target": what the graders expect}
    tasks: dict[str, dict[str, str]] = field(default_factory=dict)
    #: dimension names, in column order
    dimensions: list[str] = field(default_factory=list)

    @property
    def left_out(self) -> int:
        """Attempts of the run not in the table."""
        return self.total - len(self.rows)


def _number(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _answer(value: Any) -> str:
    text = _text(value)
    if len(text) <= ANSWER_LIMIT:
        return text
    return text[:ANSWER_LIMIT] + f"… ({len(text) - ANSWER_LIMIT} more characters: the trace shows all)"


def _document(store: Any, info: Any, run: dict[str, Any], redactor: Redactor, task_id: str,
              attempt: int, scores: list[tuple[str, float, str]],
              read: dict[tuple[str, int], tuple[Any, Any]]) -> dict[str, Any]:
    record, spans = read.get((task_id, attempt)) or (store.attempt_record(info.run_id, task_id, attempt),
                                                      store.attempt_spans(info.run_id, task_id, attempt))
    # what attempt_scores reads, from the run's scores read once (not one query per attempt)
    mine = [(d, float(sc), json.loads(e)) for d, sc, e in scores]
    return trace_document(record, spans, run, scores=mine, redactor=redactor)


def _task_line(doc: dict[str, Any]) -> dict[str, str]:
    head = doc["head"]
    return {"input": _answer(head["prompt"]), "target": "; ".join(head["target"])[:ANSWER_LIMIT]}


def attempts_data(run_id: str, db: StoreLike = None, *, limit: int = ATTEMPT_LIMIT,
                  trace_limit: int = TRACE_LIMIT) -> AttemptsData:
    """The attempts of `run_id` for the table: at most `limit` (failed attempts first when the run
    has more), in task and attempt order, with the traces of at most `trace_limit` of them."""
    with using_store(db) as store, store.snapshot():
        info = store.run_info(store.resolve_run_id(run_id))
        frame = store.attempts_frame(info.run_id, ["task_id", "attempt", "success", "status", "failure_bucket",
                                                   "final_output", "error", "cost_usd", "latency_s", "steps"])
        scores = store.dimension_scores_frame(info.run_id).select("task_id", "attempt", "dimension", "score",
                                                                  "evidence")
        records = frame.to_dicts()
        total = len(records)
        # failed attempts are what a reader drills into: they are kept first, and traced first
        by_interest = sorted(range(total), key=lambda i: (bool(records[i]["success"]), i))
        kept = sorted(by_interest[:limit])
        traced = set(sorted(kept, key=lambda i: (bool(records[i]["success"]), i))[:trace_limit])
        dims: dict[tuple[str, int], dict[str, float]] = {}
        scored: dict[tuple[str, int], list[tuple[str, float, str]]] = {}
        for task, number, dimension, score, evidence in scores.iter_rows():
            dims.setdefault((task, number), {})[dimension] = round(float(score), 3)
            scored.setdefault((task, number), []).append((dimension, score, evidence))
        rows: list[dict[str, Any]] = []
        traces: list[dict[str, Any]] = []
        tasks: dict[str, dict[str, str]] = {}
        run = info.model_dump(mode="json")
        # the page's own redaction skips the packed traces: they are redacted here, unless the
        # store wrote them through these same rules already
        redactor = redactor_for_stored_text(run.get("config"))
        # every attempt traced (a run of up to `trace_limit` attempts): read with the run, not one by one
        read = ({(a.task_id, a.attempt): (a, spans) for a, spans in store.attempts_with_spans(info.run_id)}
                if len(traced) == total else {})
        for i in kept:
            r = records[i]
            key = (str(r["task_id"]), int(r["attempt"]))
            trace = -1
            if i in traced or key[0] not in tasks:
                doc = _document(store, info, run, redactor, *key, scored.get(key, []), read)
                tasks.setdefault(key[0], _task_line(doc))
                if i in traced:
                    traces.append(doc)
                    trace = len(traces) - 1
            bucket = _text(r["failure_bucket"])
            rows.append({"task": key[0], "attempt": key[1], "ok": bool(r["success"]), "status": _text(r["status"]),
                         "bucket": bucket, "short": BUCKET_ABBREVIATIONS.get(bucket, bucket),
                         "answer": _answer(r["final_output"]), "error": _text(r["error"])[:ANSWER_LIMIT],
                         "cost": _number(r["cost_usd"]), "money": money(_number(r["cost_usd"])),
                         "latency": _number(r["latency_s"]),
                         "steps": r["steps"], "dims": dims.get(key, {}), "trace": trace})
    names = sorted({d for row in rows for d in row["dims"]})
    return AttemptsData(run_id=info.run_id, rows=rows, total=total, traces=traces, dimensions=names, tasks=tasks)


def _packed(docs: list[dict[str, Any]]) -> str:
    """The documents as one gzip-compressed JSON list, base64: the page decodes it with
    `DecompressionStream` when a trace is first opened."""
    raw = _json_bytes(docs)
    # level 6: half the CPU of level 9 for some 7 % more bytes
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _json_bytes(docs: list[dict[str, Any]]) -> bytes:
    """Compact UTF-8 JSON of `docs` for the browser's `JSON.parse`: orjson's (a fifth of the
    standard encoder's CPU, ~0.014 s less in a core × 5 report; a NaN is written `null`, which
    `JSON.parse` reads, where `json.dumps` writes `NaN`, which it refuses), the standard
    encoder's where orjson refuses a value (an int beyond 64 bits, a key that is not a string)."""
    try:
        return orjson.dumps(docs)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(_finite(docs), ensure_ascii=False, separators=(",", ":"), default=str).encode()


def _finite(value: Any) -> Any:
    """`value` with every NaN or infinite float as None, as orjson writes them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _json_script(element_id: str, payload: Any) -> str:
    # "<" only occurs inside JSON strings, where \u003c is the same character: no tag can close early
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def bucket_legend_html() -> str:
    """The key to the short failure-bucket names (`mtc:2 ht:2`), from the CLI's own table."""
    items = " · ".join(f"<code>{escape(short)}</code> {escape(bucket)}"
                       for bucket, short in BUCKET_ABBREVIATIONS.items())
    return f'<p class="aeh-legend" id="bucket-legend"><b>failure buckets:</b> {items}</p>'


def _left_out_note(data: AttemptsData, limit: int) -> str:
    if not data.left_out:
        return ""
    run = escape(data.run_id)
    return (f'<p class="aeh-banner info" id="attempts-left-out">This run has {data.total:,} attempts; the table '
            f"holds {len(data.rows):,} (at most {limit:,}: every failed attempt first, then successes in task "
            f"order), so {data.left_out:,} are left out. See every attempt with <code>aeh.attempts(\"{run}\")</code> "
            f"in a notebook, or one attempt's trace with <code>aeh trace --run-id {run} --task TASK --attempt N</code>."
            "</p>")


def attempts_section(run_id: str, db: StoreLike = None, *, limit: int = ATTEMPT_LIMIT,
                     trace_limit: int = TRACE_LIMIT) -> Any:
    """HTML: every attempt (up to `limit`) with its verdict, bucket, answer, cost, latency and
    dimension scores, paged and filtered in the page; a row opens that attempt's trace."""
    # heavy: loaded on first use
    from IPython.display import HTML

    data = attempts_data(run_id, db, limit=limit, trace_limit=trace_limit)
    untraced = sum(1 for r in data.rows if r["trace"] < 0)
    trace_note = (f" The traces of {untraced:,} attempts (successes last) are not embedded, to keep the file "
                  f"small (at most {trace_limit:,}): their row shows the <code>aeh trace</code> command instead."
                  if untraced else "")
    payload = {"run_id": data.run_id, "rows": data.rows, "dimensions": data.dimensions, "tasks": data.tasks,
               "traces_gz": _packed(data.traces), "trace_shell": page_shell(), "data_mark": DATA_MARK}
    page = (
        f"<style>{(_TEMPLATES / 'attempts.css').read_text(encoding='utf-8')}</style>"
        f'<div id="aeh-attempts" data-total="{data.total}" data-shown="{len(data.rows)}">'
        f"<p>A row opens that attempt's trace, the page <code>aeh trace</code> writes; a long answer "
        f"expands with ▸. Dimension scores: those below 1, worst first (hover for all).{trace_note}</p>"
        f"{_left_out_note(data, limit)}{bucket_legend_html()}"
        '<div class="aeh-att-controls"><label>task <select id="aeh-att-task"><option value="">all</option>'
        '</select></label> <label>bucket <select id="aeh-att-bucket"><option value="">all</option></select>'
        '</label> <label><input type="checkbox" id="aeh-att-failed"> failed only</label> '
        '<input type="search" id="aeh-att-search" placeholder="search task, input, target, answer, error"> '
        '<span id="aeh-att-count"></span></div>'
        '<table id="attempts-table" class="aeh-att"><thead></thead><tbody></tbody></table>'
        '<div class="aeh-att-pager"><button type="button" id="aeh-att-prev">◀ previous</button> '
        '<span id="aeh-att-page"></span> <button type="button" id="aeh-att-next">next ▶</button></div>'
        '<div id="aeh-att-overlay" hidden><div class="aeh-att-box"><div class="aeh-att-bar">'
        '<b id="aeh-att-title"></b><button type="button" id="aeh-att-close">close ✕</button></div>'
        '<iframe id="aeh-att-trace" title="attempt trace"></iframe><pre id="aeh-att-notrace" hidden></pre>'
        "</div></div></div>"
        f"{_json_script('aeh-attempts-data', payload)}"
        f"<script>{(_TEMPLATES / 'attempts.js').read_text(encoding='utf-8').replace('</', '<' + chr(92) + '/')}"
        "</script>"
    )
    return HTML(page)  # type: ignore[no-untyped-call]  # IPython.display is unannotated
