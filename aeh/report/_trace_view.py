"""One attempt as a reviewer reads it — the only trace renderer: the report's attempts table,
`aeh trace` and the viewer all draw an attempt from `trace_document` with `templates/trace.js`.

`trace_document` turns the stored attempt and its spans into plain data: on top the task's
prompt, the target (from the graders), the agent's answer, verdict, bucket, cost and latency;
then the conversation in order — every message once (each model call adds only what is new),
each assistant turn with its text and its tool calls, each tool result under its call with
injected faults and harness-attributed failures marked — the tools offered (once), grader
evidence and the review packet as readable lines, the trajectory dimensions, and the span tree.
`trace.js` draws that document in the browser (no external reference of any kind).
"""

from __future__ import annotations

import json
import math
from html import escape
from pathlib import Path
from typing import Any

from aeh._util.figure import UNPRICED
from aeh._util.figure import money as figure_money
from aeh._version import __version__
from aeh.errors import ConfigError
from aeh.models import Attempt, Span, ToolCall
from aeh.report._paths import default_out
from aeh.report._tree import build_tree, cited_span_ids, localized_span_ids, span_label, walk
from aeh.store import Redactor, Store, StoreLike, redactor_for_stored_text, using_store

__all__ = ["DATA_MARK", "attempt_scores", "input_and_target", "model_call_lines", "money", "page_shell",
           "render_trace_html", "trace_document", "trace_frame", "trace_html", "trace_page"]

_TEMPLATES = Path(__file__).parent / "templates"
_INPUT, _OUTPUT, _TOOLS = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions"
#: Characters of one value kept (a huge tool result would freeze the page); the rest is cut, said so.
TEXT_LIMIT = 20_000
#: Characters of one evidence line.
LINE_LIMIT = 400
#: The placeholder `page_shell` leaves where a document's JSON goes.
DATA_MARK = "/*aeh-trace-doc*/"
#: Evidence keys that name what the agent should have produced, in the order shown.
#: (Not `answer`: an imported scorer's evidence keeps there the answer it read from the output.)
_TARGET_KEYS = ("expected", "target", "reference", "expected_output", "pattern", "contains",
                "substrings", "one_of", "choices", "expected_status")
#: Review-packet parts shown elsewhere on the page already.
_PACKET_SHOWN = ("task", "final_output", "grader_results", "invariant_results", "trace_excerpt")


def money(value: float | None, currency: object = "USD") -> str:
    """An attempt's or a run's cost as every view of aeh writes it (`aeh._util.figure.money`), where
    None means no price: `$0.00026`, `$12.35`; None → "unpriced", NaN → "—"."""
    return figure_money(value, currency, none=UNPRICED)


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


def _text(value: Any, limit: int = TEXT_LIMIT) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return _cut(value, limit)
    if isinstance(value, (int, float, bool)):
        return _scalar(value)
    text = json.dumps(value, default=str, ensure_ascii=False)
    if len(text) > 120:
        text = json.dumps(value, default=str, ensure_ascii=False, indent=2)
    return _cut(text, limit)


def _scalar(value: int | float | bool) -> str:
    """`json.dumps(value)` without the encoder's set-up: thousands of span attributes a report."""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)  # an IntEnum as its number, as json writes it
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _compact(value: Any) -> str:
    """A value on one line, strings quoted (a trailing newline an expected file holds stays visible)."""
    return json.dumps(value, default=str, ensure_ascii=False)


def _args_text(args: Any) -> str:
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return _cut(args)
    if isinstance(args, dict):
        return _cut(", ".join(f"{k}={json.dumps(v, default=str, ensure_ascii=False)}" for k, v in args.items()))
    return _text(args)


def _lines(value: Any, prefix: str = "", depth: int = 0) -> list[str]:
    """A nested value folded into `key: value` lines (two levels deep, each line bounded)."""
    if isinstance(value, dict) and depth < 2:
        out: list[str] = []
        for k, v in value.items():
            if v in (None, "", [], {}):
                continue
            out.extend(_lines(v, f"{prefix}{k}.", depth + 1) if isinstance(v, dict) and v and depth < 1
                       else [f"{prefix}{k}: {_text(v, LINE_LIMIT).replace(chr(10), ' ')}"])
        return out
    return [f"{prefix.rstrip('.')}: {_text(value, LINE_LIMIT)}" if prefix else _text(value, LINE_LIMIT)]


# -- messages -------------------------------------------------------------------------------------
def _content(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        texts = [str(p.get("text", p.get("content", ""))) if isinstance(p, dict) else str(p) for p in value]
        return "\n".join(t for t in texts if t)
    return _text(value)


def _message(m: Any) -> dict[str, Any]:
    """A chat or GenAI-parts message as {role, text, calls: [(id, name, args)], reply_to}."""
    if not isinstance(m, dict):
        return {"role": "user", "text": _text(m), "calls": [], "reply_to": None}
    role = str(m.get("role") or "?")
    text = _content(m.get("content"))
    calls: list[tuple[Any, str, Any]] = []
    reply_to = m.get("tool_call_id")
    for call in m.get("tool_calls") or []:
        if isinstance(call, dict):
            fn = call["function"] if isinstance(call.get("function"), dict) else call
            calls.append((call.get("id"), str(fn.get("name") or "?"), fn.get("arguments", fn.get("args"))))
    for part in m.get("parts") or []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "tool_call":
            calls.append((part.get("id"), str(part.get("name") or "?"), part.get("arguments")))
        elif kind == "tool_call_response":
            reply_to = part.get("id")
            text += _text(part.get("response", part.get("result")))
        else:
            text += _content(part.get("content", part.get("text")))
    return {"role": "tool" if reply_to is not None and role != "assistant" else role, "text": _cut(text),
            "calls": calls, "reply_to": reply_to}


def _messages(value: Any) -> list[Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return value if isinstance(value, list) else []


def _common_prefix(a: list[Any], b: list[Any]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _call_marks(call: ToolCall) -> dict[str, str]:
    marks: dict[str, str] = {}
    if call.injected_fault:
        marks["fault"] = f"injected fault: {call.injected_fault} (the harness failed this call on purpose)"
    elif call.error_kind == "harness_stall":
        marks["harness"] = "harness-attributed failure: the call timed out while the harness stalled (not the agent's)"
    elif call.error_kind:
        marks["error"] = f"tool error ({call.error_kind})" + (f": {call.error}" if call.error else "")
    return marks


class _Conversation:
    """The turns of one attempt, built call by call; tool calls matched to the engine's records."""

    def __init__(self, record: Attempt, cited: dict[str, str], localized: dict[str, str]) -> None:
        self.turns: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.open_calls: list[dict[str, Any]] = []
        self.records = list(enumerate(record.tool_calls))
        self.used: set[int] = set()
        self.cited, self.localized = cited, localized

    def _match(self, name: str) -> tuple[int, ToolCall] | None:
        for i, call in self.records:
            if i not in self.used and call.name == name:
                self.used.add(i)
                return i, call
        return None

    def _call(self, call_id: Any, name: str, args: Any, step: tuple[int, ToolCall] | None) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": name, "args": _args_text(args)}
        if step is not None:
            index, rec = step
            entry["step"] = index
            entry.update(_call_marks(rec))
            if rec.result is not None or rec.error:
                entry["result"] = _text(rec.result) if rec.result is not None else f"error: {rec.error}"
            if rec.span_id and rec.span_id in self.cited:
                entry["cited"] = self.cited[rec.span_id]
            if rec.span_id and rec.span_id in self.localized:
                entry["localized"] = self.localized[rec.span_id]
        if call_id is not None:
            self.by_id[str(call_id)] = entry
        self.open_calls.append(entry)
        return entry

    def add(self, raw: Any, call: int, meta: dict[str, Any] | None = None) -> None:
        m = _message(raw)
        if m["role"] == "tool":
            target = self.by_id.get(str(m["reply_to"])) if m["reply_to"] is not None else None
            if target is None and self.open_calls:
                target = self.open_calls[0]
            if target is not None:
                self.open_calls = [c for c in self.open_calls if c is not target]
                target["result"] = m["text"]  # what the agent was shown, faults included
                return
        turn: dict[str, Any] = {"role": m["role"], "text": m["text"], "call": call + 1}
        if m["calls"]:
            turn["calls"] = [self._call(cid, name, args, self._match(name)) for cid, name, args in m["calls"]]
        if meta:
            turn["model"] = meta
        self.turns.append(turn)

    def leftover_calls(self) -> None:
        """Tool calls the engine recorded that no model message carries (an adapter without messages)."""
        rest = [(i, c) for i, c in self.records if i not in self.used]
        if rest:
            self.turns.append({"role": "assistant", "text": "", "note": "tool calls recorded without model messages",
                               "calls": [self._call(None, c.name, c.args, (i, c)) for i, c in rest]})


def model_call_lines(span: Span) -> list[str]:
    """A model span's messages as text lines — only those new with this call, then its output —
    for a detail pane that shows one span (`TraceBrowser`); [] for a span without messages."""
    sent, got = _messages(span.attributes.get(_INPUT)), _messages(span.attributes.get(_OUTPUT))
    k = span.attributes.get("aeh.input.prefix_len")
    k = k if isinstance(k, int) and 0 < k <= len(sent) else 0
    out = [f"({k} earlier message{'s' if k > 1 else ''}, as sent by the previous call)"] if k else []
    for label, messages in (("in", sent[k:]), ("out", got)):
        for raw in messages:
            m = _message(raw)
            who = f"{label} · {m['role']}" + (f" (reply to {m['reply_to']})" if m["reply_to"] is not None else "")
            out.append(f"{who}: {m['text']}" if m["text"] else f"{who}:")
            out.extend(f"    → {name}({_args_text(args)})" for _, name, args in m["calls"])
    tools = _tools(span.attributes.get(_TOOLS))
    if tools:
        out.append("tools offered: " + ", ".join(t["name"] for t in tools))
    return out


def _model_meta(span: Span) -> dict[str, Any]:
    a = span.attributes
    meta: dict[str, Any] = {"name": str(a.get("gen_ai.response.model") or a.get("gen_ai.request.model") or "")}
    tin, tout = a.get("gen_ai.usage.input_tokens"), a.get("gen_ai.usage.output_tokens")
    if tin is not None or tout is not None:
        meta["tokens"] = f"{tin}→{tout}"
    if isinstance(a.get("cost_usd"), (int, float)):
        meta["cost"] = money(float(a["cost_usd"]))
    if span.end_ts is not None:
        meta["latency"] = f"{span.end_ts - span.start_ts:.2f} s"
    if span.status == "error":
        meta["error"] = _text(a.get("error") or "the model call failed", LINE_LIMIT)
    return meta


def _tools(definitions: Any) -> list[dict[str, str]]:
    out = []
    for t in definitions if isinstance(definitions, list) else []:
        if not isinstance(t, dict):
            continue
        fn = t["function"] if isinstance(t.get("function"), dict) else t
        params = fn.get("parameters") or fn.get("input_schema") or {}
        props = params.get("properties") if isinstance(params, dict) else None
        out.append({"name": str(fn.get("name") or "?"), "description": _text(fn.get("description"), LINE_LIMIT),
                    "params": ", ".join(props) if isinstance(props, dict) else ""})
    return out


def _conversation(record: Attempt, spans: list[Span], cited: dict[str, str],
                  localized: dict[str, str]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    conv = _Conversation(record, cited, localized)
    seen: list[Any] = []
    tools: list[dict[str, str]] = []
    models = sorted((s for s in spans if s.category == "model"), key=lambda s: s.start_ts)
    for n, span in enumerate(models):
        sent = _messages(span.attributes.get(_INPUT))
        if not tools:
            tools = _tools(span.attributes.get(_TOOLS))
        k = _common_prefix(seen, sent)
        if seen and k < len(seen) and sent:
            then = f", then {len(sent) - k} new" if len(sent) > k else ""
            conv.turns.append({"role": "note", "text": f"model call {n + 1} was sent only the first {k} of the "
                               f"{len(seen)} messages so far{then}"})
        for m in sent[k:]:
            conv.add(m, n)
        got = _messages(span.attributes.get(_OUTPUT))
        meta = _model_meta(span)
        if not got:
            conv.turns.append({"role": "assistant", "text": "", "call": n + 1, "model": meta,
                               "note": "no output recorded for this model call"})
        for i, m in enumerate(got):
            conv.add(m, n, meta if i == 0 else None)
        seen = list(sent) + list(got)
    conv.leftover_calls()
    return conv.turns, tools


# -- graders, review, dimensions, spans --------------------------------------------------------
def _verdict(passed: bool | None) -> str:
    return "pass" if passed else "n/a" if passed is None else "FAIL"


def _targets(record: Attempt) -> list[str]:
    out: list[str] = []
    for g in record.grader_results:
        if g.tier != 0:
            continue
        ev = g.evidence or {}
        for key in _TARGET_KEYS:
            if ev.get(key) not in (None, "", []):
                out.append(f"{g.name}: {key} {_text(ev[key], LINE_LIMIT)}")
        if ev.get("all_of"):
            out.append(f"{g.name}: answer contains all of {_text(ev['all_of'], LINE_LIMIT)}")
        if ev.get("any_of"):
            out.append(f"{g.name}: answer contains one of {_text(ev['any_of'], LINE_LIMIT)}")
        if g.kind == "file" and ev.get("path"):
            if ev.get("expected_exists") is False:
                out.append(f"{g.name}: does not write {ev['path']}")
            else:
                said = [f"{c.get('check')} {_cut(_compact(c.get('expected')), LINE_LIMIT)}" if isinstance(c, dict)
                        else _text(c, LINE_LIMIT) for c in ev.get("checks") or []]
                checks = f" — {'; '.join(said)}" if said else ""
                out.append(f"{g.name}: writes {ev['path']}{checks}")
        if g.kind == "declined" or "forbid_tools" in ev:
            forbid = ev.get("forbid_tools")
            out.append(f"{g.name}: declines" + (f", never calling {', '.join(map(str, forbid))}" if forbid else ""))
        if ev.get("required"):
            out.append(f"{g.name}: calls {' → '.join(map(str, ev['required']))}")
        if ev.get("forbidden"):
            out.append(f"{g.name}: never calls {', '.join(map(str, ev['forbidden']))}")
    return out


def _graders(record: Attempt) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    rows: list[dict[str, Any]] = []
    review: dict[str, Any] | None = None
    for g in record.grader_results:
        if g.tier == 3 and g.kind == "review_flag":
            packet = dict(g.evidence or {})
            review = {"reason": _text(packet.pop("reason", None), LINE_LIMIT),
                      "lines": _lines({k: v for k, v in packet.items() if k not in _PACKET_SHOWN})}
            continue
        rows.append({"tier": g.tier, "name": g.name, "kind": g.kind, "verdict": _verdict(g.passed),
                     "error": _text(g.error, LINE_LIMIT), "lines": _lines(g.evidence or {})})
    for inv in record.invariant_results:
        rows.append({"tier": 1, "name": inv.name, "kind": "invariant", "verdict": _verdict(inv.passed),
                     "error": "", "lines": [inv.detail] if inv.detail else []})
    return rows, review


def _spans(spans: list[Span], localized: dict[str, str], cited: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for node in walk(build_tree(spans)):
        s = node.span
        row: dict[str, Any] = {"id": s.span_id, "depth": node.depth, "category": s.category, "label": span_label(s)}
        if node.failed:
            row["failed"] = True
        if s.span_id in localized:
            row["localized"] = localized[s.span_id]
        if s.span_id in cited:
            row["cited"] = cited[s.span_id]
        if s.category not in ("model", "tools"):
            lines = _lines({k: v for k, v in s.attributes.items() if not k.startswith("aeh.time.")})
            if lines:
                row["lines"] = lines
        out.append(row)
    return out


def _prompt(record: Attempt, spans: list[Span]) -> str:
    for span in sorted((s for s in spans if s.category == "model"), key=lambda s: s.start_ts):
        for raw in _messages(span.attributes.get(_INPUT)):
            m = _message(raw)
            if m["role"] == "user" and m["text"]:
                return str(m["text"])
    packet = next((g.evidence for g in record.grader_results if g.kind == "review_flag"), None) or {}
    task = packet.get("task")
    return _text(task.get("prompt")) if isinstance(task, dict) else ""


def input_and_target(record: Attempt, spans: list[Span]) -> tuple[str, str]:
    """An attempt's task input (its prompt, as first sent) and target (what its graders expect, one
    line): the attempts lists' input and target columns."""
    return _prompt(record, spans), "; ".join(_targets(record))


#: What a trace's head shows of its run.
_RUN_FIELDS = ("suite", "adapter", "model", "price_table_version", "price_table_date")


def trace_document(record: Attempt, spans: list[Span], run: dict[str, Any] | None = None, *,
                   scores: list[tuple[str, float, dict[str, Any]]] | None = None,
                   redactor: Redactor | None = None) -> dict[str, Any]:
    """One attempt as plain data for `trace.js` (JSON-able, redacted with the run's redactor).

    `scores` — (dimension, score, evidence) of this attempt — mark each step a dimension cites.
    `redactor`: `redactor_for_stored_text(run["config"])` when none is given (the caller draws many
    attempts of one run, or adds secrets of its own).
    """
    run = dict(run or {})
    if redactor is None:
        redactor = redactor_for_stored_text(run.get("config"))
    # the head shows these of the run, and only these are redacted (not its whole config, again
    # for every attempt of a report)
    run = {k: run.get(k) for k in _RUN_FIELDS}
    if redactor.enabled:
        record = redactor.redact_model(record)
        spans = [redactor.redact_span(s) for s in spans]
        run = redactor.redact_plain(run)
    localized = localized_span_ids(spans, record.grader_results)
    cited = cited_span_ids(record.tool_calls, scores or [])
    turns, tools = _conversation(record, spans, cited, localized)
    graders, review = _graders(record)
    prompt = _prompt(record, spans)
    bucket = record.failure_bucket.value if record.failure_bucket else ""
    head = {
        "task": record.task_id, "attempt": record.attempt, "run": record.run_id,
        "suite": str(run.get("suite") or ""), "adapter": str(run.get("adapter") or ""),
        "model": str(run.get("model") or ""), "prompt": prompt, "target": _targets(record),
        "answer": _cut(record.final_output or ""), "error": _cut(record.error or ""),
        "verdict": "pass" if record.success else "harness error" if bucket == "harness_error" else "FAIL",
        "bucket": bucket, "status": record.status, "cost": money(record.cost_usd),
        "latency": f"{record.latency_s:.2f} s", "tokens": f"{record.tokens_in} in, {record.tokens_out} out",
        "steps": record.steps, "seed": str(record.seed),
        "prices": (f"price table {run['price_table_version']} ({run.get('price_table_date')})"
                   if run.get("price_table_version") else ""),
        "localized": len(localized), "cited": len(cited), "review": record.needs_human_review,
    }
    dims = [{"dimension": d, "score": round(float(sc), 3), "steps": list(e.get("steps") or []),
             "details": _text(e.get("details"), LINE_LIMIT)} for d, sc, e in sorted(scores or [])]
    return {"head": head, "turns": turns, "tools": tools, "graders": graders, "review": review, "dims": dims,
            "spans": _spans(spans, localized, cited), "version": __version__}


# -- pages ----------------------------------------------------------------------------------------
def _read(name: str) -> str:
    return (_TEMPLATES / name).read_text(encoding="utf-8")


def _json(doc: Any) -> str:
    # "<" only occurs inside JSON strings, where \u003c is the same character: no tag can close early
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def page_shell() -> str:
    """The trace page with `DATA_MARK` where the document's JSON goes (the report fills it in the browser)."""
    return (_read("trace.html").replace("$css", _read("trace.css"))
            .replace("$js", _read("trace.js").replace("</", "<\\/")).replace("$version", escape(__version__)))


def trace_page(doc: dict[str, Any]) -> str:
    """A self-contained HTML page drawing `doc` (no external reference of any kind)."""
    head = doc["head"]
    return (page_shell().replace("$title", escape(f"{head['task']} #{head['attempt']} — aeh trace"))
            .replace(DATA_MARK, _json(doc)))


def trace_frame(doc: dict[str, Any], height: int = 900) -> str:
    """`doc`'s page inside an iframe (its script runs in the frame: for a notebook or the viewer)."""
    return (f'<iframe class="aeh-trace-frame" title="attempt trace" style="width:100%;height:{height}px;'
            f'border:1px solid #ddd" srcdoc="{escape(trace_page(doc), quote=True)}"></iframe>')


def trace_html(attempt: Attempt, spans: list[Span], run: dict[str, Any], *, open_depth: int = 1,
               scores: list[tuple[str, float, dict[str, Any]]] | None = None,
               redactor: Redactor | None = None) -> str:
    """The HTML page of one attempt's trace (`open_depth` is kept for callers; the page decides)."""
    del open_depth
    return trace_page(trace_document(attempt, spans, run, scores=scores, redactor=redactor))


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
