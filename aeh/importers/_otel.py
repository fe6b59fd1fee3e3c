"""OpenTelemetry both ways: a stored run as OTLP JSON, and OTLP JSON traces as a graded run.

Export (`aeh export otel RUN`): one trace per attempt (trace id from run, task and attempt),
aeh's span ids kept. GenAI semantic conventions where they exist — `gen_ai.operation.name`
(`chat` for model spans, `execute_tool` for tool spans, `invoke_agent` for the agent span),
`gen_ai.request.model`, `gen_ai.usage.*`, `gen_ai.tool.name`, `gen_ai.tool.call.arguments`,
`gen_ai.tool.call.result`, a model span's `gen_ai.input.messages` / `gen_ai.output.messages` /
`gen_ai.tool.definitions` (role + parts JSON) beside OpenInference's `llm.input_messages.N.…`
(`_otel_messages`) — and everything aeh-specific under `aeh.*` (`aeh.category`,
`aeh.task_id`, `aeh.attempt`, `aeh.final_output`, `aeh.status`, …).

Import (`aeh import otel FILE --suite S`): reads OTLP JSON from any instrumented agent, rebuilds
each trace's span tree, recognises tool spans (`gen_ai.tool.name`, `execute_tool`, OpenInference
`TOOL` / `tool.name`, OpenLLMetry `traceloop.span.kind=tool`) and model spans (`chat` and other
gen_ai operations, OpenInference `LLM`, OpenLLMetry `llm.request.type`), and turns each trace
into a trajectory graded by the suite (`aeh.importers._trajectory`). The task id comes from a
configurable attribute (default `aeh.task_id`), looked up on the spans, then the resource.

Round trip: the run records the task and attempt attributes it was imported with
(`RunConfig.facts["otel_attributes"]`); its export sets them on every span beside `aeh.task_id` and
`aeh.attempt` and names them on the resource (`aeh.task_attribute`, `aeh.attempt_attribute`), so
the same `--task-attribute` reads the exported file back.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from aeh._util.files import (
    InputFileError,
    InputJsonError,
    check_json_depth,
    check_json_values,
    decode_input_text,
    located,
    read_bytes_limited,
    strict_decoder,
    suspect_values,
)
from aeh._util.install import install_command
from aeh.errors import Problem, ValidationError
from aeh.importers._otel_messages import export_messages, import_messages
from aeh.importers._otel_shape import otlp_problems
from aeh.importers._trajectory import grade_trajectories
from aeh.models import Span
from aeh.store import StoreLike, redactor_for_run, using_store
from aeh.suite.contract import EvalSuite
from aeh.trajectory import Step, Trajectory
from aeh.trajectory.formats import looks_like_bytes, refusal_fix

__all__ = ["export_otlp_json", "import_otel_files", "load_otlp", "otlp_to_trajectories", "run_to_otlp"]

_SKIP_CATEGORIES = {"grading", "cost", "faults"}
DEFAULT_TASK_ATTRIBUTE, DEFAULT_ATTEMPT_ATTRIBUTE = "aeh.task_id", "aeh.attempt"
_MODEL_OPERATIONS = {"chat", "text_completion", "generate_content", "completion"}


# -- values -------------------------------------------------------------------------------------
def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    return {"stringValue": json.dumps(value, default=str)}


def _from_any(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_from_any(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: _from_any(kv.get("value", {})) for kv in value["kvlistValue"].get("values", [])}
    return None


def _kv(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in attributes.items() if v is not None]


# -- export -------------------------------------------------------------------------------------
def trace_id(run_id: str, task_id: str, attempt: int) -> str:
    return hashlib.sha256(f"{run_id}:{task_id}:{attempt}".encode()).hexdigest()[:32]


def attribute_config(task_attribute: str, attempt_attribute: str) -> dict[str, Any]:
    """What an OTel import records in its run's config: the attributes it read task and attempt from."""
    return {"otel_attributes": {"task": task_attribute, "attempt": attempt_attribute}}


def imported_attributes(facts: dict[str, Any]) -> tuple[str, str]:
    """(task attribute, attempt attribute) a run was imported with (its `RunConfig.facts`); aeh's
    own for any other run."""
    recorded = facts.get("otel_attributes")
    names: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    return (str(names.get("task") or DEFAULT_TASK_ATTRIBUTE), str(names.get("attempt") or DEFAULT_ATTEMPT_ATTRIBUTE))


def otel_attributes(span: Span, task_attribute: str = DEFAULT_TASK_ATTRIBUTE,
                    attempt_attribute: str = DEFAULT_ATTEMPT_ATTRIBUTE) -> dict[str, Any]:
    """A span's attributes under the GenAI conventions, aeh's own under `aeh.*`; the task and
    attempt also under the attributes the run was imported with, when those differ."""
    out: dict[str, Any] = {"aeh.category": span.category, "aeh.task_id": span.task_id,
                           "aeh.attempt": span.attempt, "aeh.run_id": span.run_id}
    out.setdefault(task_attribute, span.task_id)
    out.setdefault(attempt_attribute, span.attempt)
    for key, value in span.attributes.items():
        if key == "args" and span.category == "tools":
            out["gen_ai.tool.call.arguments"] = json.dumps(value, default=str)
        elif key == "result" and span.category == "tools":
            out["gen_ai.tool.call.result"] = json.dumps(value, default=str)
        elif key.startswith(("gen_ai.", "aeh.")):
            out[key] = value
        else:
            out[f"aeh.{key}"] = value
    if span.category == "model":
        out["gen_ai.operation.name"] = "chat"
        out.update(export_messages(span.attributes))
    elif span.category == "tools":
        out["gen_ai.operation.name"] = "execute_tool"
    elif span.name == "agent" and span.category == "scheduler":
        out["gen_ai.operation.name"] = "invoke_agent"
        if span.attributes.get("adapter"):
            out["gen_ai.agent.name"] = span.attributes["adapter"]
    return out


def run_to_otlp(run_id: str, db: StoreLike = None) -> dict[str, Any]:
    """The run's spans as one OTLP JSON `TracesData` document."""
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        info = store.run_info(full)
        rows = store.spans_frame(full).to_dicts()
    spans = [Span(**{**r, "attributes": json.loads(r["attributes"]) if isinstance(r["attributes"], str)
                     else (r["attributes"] or {})}) for r in rows]
    task_attribute, attempt_attribute = imported_attributes(info.config.facts)
    out = []
    for s in spans:
        start = int(s.start_ts * 1e9)
        end = int((s.end_ts if s.end_ts is not None else s.start_ts) * 1e9)
        item: dict[str, Any] = {
            "traceId": trace_id(s.run_id, s.task_id, s.attempt), "spanId": s.span_id, "name": s.name,
            "kind": 3 if s.category in ("model",) else 1,  # CLIENT for model calls, else INTERNAL
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
            "attributes": _kv(otel_attributes(s, task_attribute, attempt_attribute)),
            "status": {"code": 2, "message": str(s.attributes.get("error", ""))} if s.status == "error"
            else {"code": 1},
        }
        if s.parent_span_id:
            item["parentSpanId"] = s.parent_span_id
        out.append(item)
    resource = {"service.name": "aeh", "aeh.run_id": full, "aeh.suite": info.suite,
                "aeh.adapter": info.adapter, "aeh.model": info.model,
                "aeh.task_attribute": task_attribute, "aeh.attempt_attribute": attempt_attribute}
    document = {"resourceSpans": [{"resource": {"attributes": _kv(resource)},
                                   "scopeSpans": [{"scope": {"name": "aeh"}, "spans": out}]}]}
    # The file and the collector get what the store holds, re-checked: an older store may be raw.
    return dict(redactor_for_run(info.config).redact(document))


def export_otlp_json(run_id: str, db: StoreLike, out: str | Path) -> Path:
    path = Path(out)
    path.write_text(json.dumps(run_to_otlp(run_id, db)), encoding="utf-8")
    return path


# -- import -------------------------------------------------------------------------------------
def _flat(document: Any, where: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(span, resource attributes) pairs of an OTLP JSON document (or a JSON Lines of them), of
    Python SDK spans, or of Phoenix's span JSON (its REST API's `{"data": [...]}` or the list)."""
    if isinstance(document, dict) and isinstance(document.get("data"), list):
        data = document["data"]
        if all(_is_sdk_span(d) for d in data):
            document = data  # Phoenix's REST API: GET /v1/projects/{project}/spans
        elif all(isinstance(d, dict) and "span_id" in d and "trace_id" in d for d in data):
            # Phoenix's GET …/spans/otlpv1: OTLP spans with snake_case field names
            document = {"resourceSpans": [{"scopeSpans": [{"spans": [_camel(d) for d in data]}]}]}
    docs = document if isinstance(document, list) else [document]
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for doc in docs:
        if _is_sdk_span(doc):
            pairs.append(_from_sdk_span(doc))
            continue
        if not isinstance(doc, dict) or "resourceSpans" not in doc:
            raise ValidationError([Problem(where, "resourceSpans", "not an OTLP JSON traces document",
                                           refusal_fix(document, "otel"))], "OTLP file")
        for rs in doc["resourceSpans"]:
            resource = {kv["key"]: _from_any(kv.get("value", {}))
                        for kv in (rs.get("resource") or {}).get("attributes", [])}
            for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
                pairs.extend((_normalise_ids(dict(span)), resource) for span in ss.get("spans", []))
    return pairs


def _camel(value: Any) -> Any:
    """OTLP in snake_case (`start_time_unix_nano`, `string_value`) as OTLP/JSON's camelCase."""
    if isinstance(value, list):
        return [_camel(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): _camel(v) for k, v in value.items()}


_HEX_ID = re.compile(r"^(?:0x)?([0-9a-fA-F]{16}|[0-9a-fA-F]{32})$")


def _hex_id(value: Any) -> str:
    """A trace or span id as lowercase hex, whichever way the writer spelled it.

    OTLP/JSON says hex; protobuf's canonical JSON mapping (`MessageToDict`, some collectors and
    SDKs) writes the same bytes as base64; the Python SDK's console exporter writes `0x…`.
    """
    if not isinstance(value, str) or not value:
        return ""
    match = _HEX_ID.match(value)
    if match:
        return match.group(1).lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) in (8, 16) else value


def _normalise_ids(span: dict[str, Any]) -> dict[str, Any]:
    for key in ("traceId", "spanId", "parentSpanId"):
        if key in span:
            span[key] = _hex_id(span[key])
    return span


def _is_sdk_span(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("context"), dict) and "name" in doc


def _nanos(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        stamp = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return str(int(stamp.timestamp() * 1_000_000) * 1000)


def _dotted(attributes: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested attribute objects (`{"llm": {"token_count": {"prompt": 5}}}`) as dotted keys."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if isinstance(value, dict):
            out.update(_dotted(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _from_sdk_span(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A span as the Python SDK's `ConsoleSpanExporter` / `ReadableSpan.to_json()` writes it, or as
    Phoenix's span JSON does (`span_kind` beside the attributes, `status_code` / `status_message`), as OTLP."""
    ctx = doc["context"]
    status = doc.get("status") or {}
    attributes = _dotted(doc.get("attributes") or {})
    if isinstance(doc.get("span_kind"), str) and "openinference.span.kind" not in attributes:
        # Phoenix moves OpenInference's span kind out of the attributes; it is what marks an LLM span.
        attributes["openinference.span.kind"] = doc["span_kind"]
    code = status.get("status_code") or doc.get("status_code")
    span: dict[str, Any] = {
        "traceId": _hex_id(ctx.get("trace_id")), "spanId": _hex_id(ctx.get("span_id")),
        "name": doc.get("name"), "startTimeUnixNano": _nanos(doc.get("start_time")),
        "endTimeUnixNano": _nanos(doc.get("end_time")),
        "attributes": _kv(attributes),
        "status": {"code": 2 if code == "ERROR" else 1,
                   "message": status.get("description") or doc.get("status_message") or ""},
    }
    if doc.get("parent_id"):
        span["parentSpanId"] = _hex_id(doc["parent_id"])
    resource = dict((doc.get("resource") or {}).get("attributes") or {})
    return span, resource


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {kv["key"]: _from_any(kv.get("value", {})) for kv in span.get("attributes", [])}


def _loads(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _kind(a: dict[str, Any]) -> str:
    op = a.get("gen_ai.operation.name")
    oi = str(a.get("openinference.span.kind", "")).upper()
    tl = str(a.get("traceloop.span.kind", "")).lower()
    if op == "execute_tool" or oi == "TOOL" or tl == "tool" or "gen_ai.tool.name" in a or "tool.name" in a:
        return "tool"
    if op in _MODEL_OPERATIONS or oi == "LLM" or "llm.request.type" in a or (
            "gen_ai.request.model" in a and a.get("aeh.category") in (None, "model")):
        return "model"
    return "step"


def _int(*values: Any) -> int | None:
    for v in values:
        if isinstance(v, int | float) and not isinstance(v, bool):
            return int(v)
        if isinstance(v, str) and v.isdigit():
            return int(v)
    return None


def _cost(*values: Any) -> float | None:
    """The first recorded cost (USD) that is a finite, non-negative number."""
    for v in values:
        if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < float("inf"):
            return float(v)
    return None


def _ts(value: Any) -> float | None:
    try:
        return int(value) / 1e9
    except (TypeError, ValueError):
        return None


def _call_arguments(value: Any) -> Any:
    """OpenLLMetry's `@tool` records `{"args": [...], "kwargs": {...}}`: keyword arguments are the call's."""
    if isinstance(value, dict) and set(value) == {"args", "kwargs"} and not value["args"]:
        return value["kwargs"]
    return value


def _step(span: dict[str, Any], children: dict[str, list[dict[str, Any]]]) -> Step | None:
    a = _attrs(span)
    if a.get("aeh.category") in _SKIP_CATEGORIES or "aeh.budget.exceeded" in a:
        return None  # the harness's own records (grading, cost, a replay's budget verdict), not the agent's
    kids = [s for s in (_step(c, children) for c in children.get(span.get("spanId", ""), [])) if s is not None]
    status = span.get("status") or {}
    failed = status.get("code") in (2, "STATUS_CODE_ERROR")
    error = (a.get("aeh.error") or status.get("message") or "error") if failed else None
    common: dict[str, Any] = {"start_ts": _ts(span.get("startTimeUnixNano")),
                              "end_ts": _ts(span.get("endTimeUnixNano")),
                              "steps": kids, "error": str(error) if error is not None else None}
    kind = _kind(a)
    if kind == "tool":
        return _tool_step(a, span, failed, common)
    if kind == "model":
        return _model_step(a, span, common)
    keep = {k: v for k, v in a.items() if k.startswith("aeh.") and k not in ("aeh.run_id", "aeh.task_id",
                                                                             "aeh.attempt", "aeh.category")}
    return Step(kind="step", name=str(span.get("name") or "step"), attributes=keep, **common)


def _first(a: dict[str, Any], *keys: str) -> Any:
    """`a.get(k1) or a.get(k2) or …`: the first truthy attribute of `keys` (the conventions name one
    thing differently), else the last one's value."""
    return next((a[k] for k in keys[:-1] if a.get(k)), a.get(keys[-1]))


def _tool_step(a: dict[str, Any], span: dict[str, Any], failed: bool, common: dict[str, Any]) -> Step:
    name = _first(a, "gen_ai.tool.name", "tool.name", "traceloop.entity.name") or span.get("name", "tool")
    args = _call_arguments(_loads(_first(a, "gen_ai.tool.call.arguments", "tool.parameters", "input.value",
                                         "traceloop.entity.input")))
    result = _loads(a.get("gen_ai.tool.call.result") if "gen_ai.tool.call.result" in a
                    else a.get("output.value", a.get("traceloop.entity.output")))
    extra = {k: a[f"aeh.{k}"] for k in ("error_kind", "injected_fault") if failed and a.get(f"aeh.{k}")}
    return Step(kind="tool", name=str(name), args=args if isinstance(args, dict) else
                ({} if args is None else {"_raw": args}), result=result, attributes=extra, **common)


def _model_step(a: dict[str, Any], span: dict[str, Any], common: dict[str, Any]) -> Step:
    return Step(kind="model", name=str(a.get("aeh.step") or span.get("name") or "model"),
                model=_first(a, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name"),
                tokens_in=_int(a.get("gen_ai.usage.input_tokens"), a.get("gen_ai.usage.prompt_tokens"),
                               a.get("llm.token_count.prompt")),
                tokens_out=_int(a.get("gen_ai.usage.output_tokens"), a.get("gen_ai.usage.completion_tokens"),
                                a.get("llm.token_count.completion")),
                cost_usd=_cost(a.get("aeh.cost_usd"), a.get("gen_ai.usage.cost"), a.get("llm.cost.total")),
                attributes=import_messages(a), **common)


def otlp_to_trajectories(document: Any, *, where: str = "OTLP file", task_attribute: str = "aeh.task_id",
                         attempt_attribute: str = "aeh.attempt") -> list[Trajectory]:
    """One trajectory per trace; every trace without a task id is a listed problem."""
    traces: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for span, resource in _flat(document, where):
        traces.setdefault(str(span.get("traceId", "")), []).append((span, resource))
    problems: list[Problem] = []
    out: list[Trajectory] = []
    for tid, pairs in traces.items():
        spans = sorted((s for s, _ in pairs), key=lambda s: int(s.get("startTimeUnixNano") or 0))
        resource = pairs[0][1]
        ids = {s.get("spanId") for s in spans}
        children: dict[str, list[dict[str, Any]]] = {}
        roots = []
        for s in spans:
            parent = s.get("parentSpanId") or ""
            if parent and parent in ids:
                children.setdefault(parent, []).append(s)
            else:
                roots.append(s)
        attrs = [_attrs(s) for s in spans]
        task_id = next((a[task_attribute] for a in attrs if a.get(task_attribute)), resource.get(task_attribute))
        if not task_id:
            problems.append(Problem(f"{where}:trace {tid}", task_attribute, "no span or resource carries the task id",
                                    f"set {task_attribute} on the root span, or pass the attribute that holds it "
                                    "(--task-attribute)"))
            continue
        attempt = _int(*(a.get(attempt_attribute) for a in attrs))
        agent = next((s for s in spans if s.get("name") == "agent" and _attrs(s).get("aeh.category") == "scheduler"),
                     None)
        top = children.get(agent["spanId"], []) if agent is not None else roots
        if agent is None and len(roots) == 1 and _kind(_attrs(roots[0])) == "step":
            top = children.get(roots[0].get("spanId", ""), [])  # the agent's own root span wraps its steps
        steps = [st for st in (_step(s, children) for s in top) if st is not None]
        final, status, error = _ending(agent, roots)
        if final is None and status == "answered":
            final = _last_model_text(spans)  # no explicit answer: what the model said last
        start, end, latency = _recorded_clock(agent, roots)
        out.append(Trajectory(task_id=str(task_id), attempt=attempt, final_output=final, status=status,
                              error=error, steps=steps, metadata={"otel_trace_id": tid},
                              agent=resource.get("service.name"), start_ts=start, end_ts=end, latency_s=latency))
    if problems:
        raise ValidationError(problems, "OTLP file")
    return out


def _recorded_clock(agent: dict[str, Any] | None,
                    roots: Sequence[dict[str, Any]]) -> tuple[float | None, float | None, float | None]:
    """Start, end and agent time of a trace as recorded: aeh's `agent` span (its attempt span's
    `aeh.time.agent_s`, which leaves model-server queueing out), else the root spans' extent."""
    if agent is not None:
        latency = next((_float(_attrs(r).get("aeh.time.agent_s")) for r in roots
                        if _attrs(r).get("aeh.time.agent_s") is not None), None)
        return _ts(agent.get("startTimeUnixNano")), _ts(agent.get("endTimeUnixNano")), latency
    starts = [t for t in (_ts(r.get("startTimeUnixNano")) for r in roots) if t is not None]
    ends = [t for t in (_ts(r.get("endTimeUnixNano")) for r in roots) if t is not None]
    return (min(starts) if starts else None), (max(ends) if ends else None), None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else None


def _model_text(a: dict[str, Any]) -> str | None:
    """The text a model span's response carried, under OpenInference or GenAI attributes."""
    indexed = [(int(m.group(1)), v) for k, v in a.items()
               if (m := re.fullmatch(r"llm\.output_messages\.(\d+)\.message\.content", k)) and v]
    if indexed:
        return str(max(indexed)[1])
    messages = _loads(a.get("gen_ai.output.messages"))
    if isinstance(messages, list) and messages and isinstance(messages[-1], dict):
        parts = messages[-1].get("parts") or []
        text = "".join(str(p.get("content", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text")
        if text:
            return text
    legacy = a.get("gen_ai.completion.0.content")
    return str(legacy) if legacy else None


def _last_model_text(spans: Sequence[dict[str, Any]]) -> str | None:
    models = [s for s in spans if _kind(_attrs(s)) == "model"]
    for span in sorted(models, key=lambda s: int(s.get("endTimeUnixNano") or 0), reverse=True):
        text = _model_text(_attrs(span))
        if text is not None:
            return text
    return None


def _ending(agent: dict[str, Any] | None, roots: Sequence[dict[str, Any]]) -> tuple[str | None, Any, str | None]:
    """Final output, status and error: aeh's agent span when present, else the root span's output."""
    statuses = ("answered", "declined", "gave_up", "budget_exhausted", "harness_error")
    for span in ([agent] if agent is not None else []) + list(roots):
        a = _attrs(span)
        final = a.get("aeh.final_output", a.get("output.value", a.get("traceloop.entity.output")))
        status = a.get("aeh.status") if a.get("aeh.status") in statuses else "answered"
        error = a.get("aeh.error") if status != "answered" else None
        if final is not None or a.get("aeh.status") in statuses:
            return (None if final is None else str(final)), status, (str(error) if error else None)
    return None, "answered", None


def _json_stream(text: str) -> Any:
    """One JSON document, or several back to back: JSON Lines (the collector's file exporter) or the
    pretty-printed spans the Python SDK's console exporter writes one after another."""
    decoder = strict_decoder()
    suspect = suspect_values(text)
    docs: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        try:
            doc, pos = decoder.raw_decode(text, pos)
        except RecursionError:
            raise InputJsonError("nested too deeply to parse", fix="pass an OTLP JSON export") from None
        except InputJsonError as exc:
            raise located(text, exc) from None
        check_json_depth(doc)
        if suspect:
            try:
                check_json_values(doc)
            except InputJsonError as exc:
                raise located(text, exc) from None
        docs.append(doc)
    return docs[0] if len(docs) == 1 else docs


def load_otlp(paths: Iterable[str | Path]) -> list[tuple[str, Any]]:
    """(path, document) per file: a JSON document, or JSON Lines of documents (the collector's file exporter)."""
    out: list[tuple[str, Any]] = []
    problems: list[Problem] = []
    for path in paths:
        p = Path(path)
        try:
            raw = read_bytes_limited(p)
        except InputFileError as exc:
            problems.append(Problem(str(p), "-", str(exc), "pass an OTLP JSON file"))
            continue
        except OSError as exc:
            problems.append(Problem(str(p), "-", f"cannot read: {exc.strerror or exc}",
                                    "pass an existing OTLP JSON file"))
            continue
        if looks_like_bytes(raw) == "otlp-protobuf":  # binary OTLP: not text, but still traces
            try:
                out.append((str(p), _from_protobuf(p, raw)))
            except ValidationError as exc:
                problems.extend(exc.problems)
            continue
        try:
            text = decode_input_text(p, raw)
        except InputFileError as exc:
            problems.append(Problem(str(p), "-", str(exc), "pass an OTLP JSON file (or Phoenix's span JSON)"))
            continue
        try:
            document = _json_stream(text)
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(p), f"line {exc.lineno}", f"not valid JSON or JSON Lines: {exc.msg}",
                                    "pass an uncut OTLP JSON file"))
        except InputJsonError as exc:
            problems.append(Problem.from_json_error(p, exc))
        else:
            shape = otlp_problems(str(p), document)
            problems += shape
            if not shape:
                out.append((str(p), document))
    if problems:
        raise ValidationError(problems, "OTLP file(s)")
    return out


def _from_protobuf(path: Path, raw: bytes) -> Any:
    """A binary OTLP export (ExportTraceServiceRequest) as its JSON mapping; refused when the file is
    some other binary, or when the `otel` extra's protobuf classes are not installed."""
    if looks_like_bytes(raw) != "otlp-protobuf":
        raise ValidationError([Problem(str(path), "-", "not UTF-8 text, and not OTLP protobuf either",
                                       "pass an OTLP JSON file (or Phoenix's span JSON)")], "OTLP file")
    try:
        from google.protobuf.json_format import MessageToDict
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise ValidationError([Problem(str(path), "-", "this looks like OTLP protobuf (binary), not OTLP JSON",
                                       install_command("otel") + " to read it, or write the traces with a JSON "
                                       "exporter (the collector's `file` exporter writes OTLP JSON)")],
                              "OTLP file") from None
    try:
        return MessageToDict(ExportTraceServiceRequest.FromString(raw))
    except DecodeError as exc:
        raise ValidationError([Problem(str(path), "-", f"looks like OTLP protobuf but does not decode: {exc}",
                                       "pass an uncut export")], "OTLP file") from None


def import_otel_files(paths: Sequence[str | Path], db: StoreLike = None, *, suite: str | Path | EvalSuite,
                      task_attribute: str = "aeh.task_id", attempt_attribute: str = "aeh.attempt",
                      **options: Any) -> str:
    """Grade the traces of OTLP JSON files against `suite` into one stored run; returns its id."""
    trajectories: list[Trajectory] = []
    problems: list[Problem] = []
    for where, doc in load_otlp(paths):
        try:
            trajectories.extend(otlp_to_trajectories(doc, where=where, task_attribute=task_attribute,
                                                     attempt_attribute=attempt_attribute))
        except ValidationError as exc:
            problems.extend(exc.problems)
    if not trajectories and not problems:
        problems.append(Problem(", ".join(str(p) for p in paths), "resourceSpans", "holds no spans",
                                "export the agent's traces before importing them (is the exporter flushed?)"))
    if problems:
        raise ValidationError(problems, "OTLP file(s)")
    options.setdefault("name", "otel")
    options["config"] = {**(options.get("config") or {}), **attribute_config(task_attribute, attempt_attribute)}
    return grade_trajectories(suite, trajectories, db, source=", ".join(str(p) for p in paths), **options)
