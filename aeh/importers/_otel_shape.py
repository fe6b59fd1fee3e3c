"""The shape an OTLP JSON file must have before it is mapped: every field the mapping reads is of
the type it expects, integers fit in 64 bits (checked on the text, before any conversion), every
span ends no earlier than it starts, span ids are unique within a trace, and no span is its own
ancestor.

Checked as the file is read, so a bad field is `file:resourceSpans[0]…startTimeUnixNano: … — fix`
with exit 2 instead of a traceback from deep inside the mapping, and a span that is its own
parent (or a loop of parents) is refused instead of leaving a trace without a root that would
be scored `no_answer` without a word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from aeh.errors import Problem

__all__ = ["otlp_problems"]

_NANOS = re.compile(r"^[0-9]{1,20}$")
_INT = re.compile(r"^-?[0-9]+$")
#: What the store keeps: signed 64-bit integers.
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
#: How deep an AnyValue may nest arrays and kvlists (the file's own depth limit bounds it too).
_ANY_DEPTH = 32
_FIX = "export traces as OTLP JSON (the SDK's or the collector's file exporter)"


def _is_sdk_span(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("context"), dict) and "name" in doc


def _list(value: Any) -> bool:
    return value is None or isinstance(value, list)


def _attribute_problems(at: str, attrs: Any) -> Iterator[tuple[str, str]]:
    if not _list(attrs):
        yield f"{at}.attributes", "not a list of {key, value} pairs"
        return
    for i, kv in enumerate(attrs or []):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            yield f"{at}.attributes[{i}]", "not a {key, value} pair with a string key"
        elif not isinstance(kv.get("value", {}), dict):
            yield f"{at}.attributes[{i}].value", "not an AnyValue object ({\"stringValue\": …} and the like)"
        else:
            yield from _any_value_problems(f"{at}.attributes[{i}].value", kv.get("value", {}), 0)


def _int_problem(value: Any) -> str | None:
    """Why an OTLP intValue is not a 64-bit integer, judged on its text before any conversion."""
    if type(value) is int:
        return None if _INT_MIN <= value <= _INT_MAX else f"{value.bit_length()}-bit integer (at most 64)"
    if not isinstance(value, str) or not _INT.match(value):
        return f"{str(value)[:40]!r} is not a whole number"
    digits = len(value.lstrip("-"))
    if digits > 19 or not _INT_MIN <= int(value) <= _INT_MAX:  # 19 digits convert at once
        return f"an integer of {digits} digits (at most a signed 64-bit integer, 19 digits)"
    return None


def _any_value_problems(at: str, value: dict[str, Any], depth: int) -> Iterator[tuple[str, str]]:
    if depth > _ANY_DEPTH:
        yield at, f"arrayValue/kvlistValue nested more than {_ANY_DEPTH} levels deep"
        return
    if "intValue" in value and (why := _int_problem(value["intValue"])) is not None:
        yield f"{at}.intValue", why
    inner = value.get("arrayValue") or value.get("kvlistValue")
    if isinstance(inner, dict) and isinstance(inner.get("values"), list):
        for j, item in enumerate(inner["values"]):
            child = item.get("value") if isinstance(item, dict) and "key" in item else item
            if isinstance(child, dict):
                yield from _any_value_problems(f"{at}.{'arrayValue' if 'arrayValue' in value else 'kvlistValue'}"
                                               f".values[{j}]", child, depth + 1)


def _span_problems(at: str, span: Any) -> Iterator[tuple[str, str]]:
    if not isinstance(span, dict):
        yield at, "not a span object"
        return
    for key in ("traceId", "spanId", "parentSpanId", "name"):
        if span.get(key) is not None and not isinstance(span[key], str):
            yield f"{at}.{key}", f"not a string ({type(span[key]).__name__})"
    for key in ("startTimeUnixNano", "endTimeUnixNano"):
        value = span.get(key)
        if value is None or (type(value) is int and value >= 0):
            continue
        if not (isinstance(value, str) and _NANOS.match(value)):
            yield f"{at}.{key}", f"{value!r} is not nanoseconds since the epoch (a whole number)"
    start, end = _nanos(span.get("startTimeUnixNano")), _nanos(span.get("endTimeUnixNano"))
    if start is not None and end is not None and 0 < end < start:  # 0: not ended, as some exporters write
        yield f"{at}.endTimeUnixNano", f"{end} is before startTimeUnixNano {start}"
    yield from _attribute_problems(at, span.get("attributes"))
    if span.get("status") is not None and not isinstance(span["status"], dict):
        yield f"{at}.status", "not a status object ({\"code\": …, \"message\": …})"
    if not _list(span.get("events")):
        yield f"{at}.events", "not a list of events"
    if span.get("spanId") and span.get("spanId") == span.get("parentSpanId"):
        yield f"{at}.parentSpanId", "the span is its own parent"


def _nanos(value: Any) -> int | None:
    if type(value) is int:
        return value
    return int(value) if isinstance(value, str) and _NANOS.match(value) else None


def _sdk_span_problems(at: str, doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """A span as the Python SDK's console exporter writes it (`context`, `parent_id`, ISO times)."""
    ctx = doc["context"]
    for key in ("trace_id", "span_id"):
        if ctx.get(key) is not None and not isinstance(ctx[key], str):
            yield f"{at}context.{key}", f"not a string ({type(ctx[key]).__name__})"
    for key in ("parent_id", "start_time", "end_time"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            yield f"{at}{key}", f"not a string ({type(doc[key]).__name__})"
    for key in ("attributes", "status"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            yield f"{at}{key}", "not an object"
    resource = doc.get("resource")
    if resource is not None and not (isinstance(resource, dict) and isinstance(resource.get("attributes") or {}, dict)):
        yield f"{at}resource", "not an object with an `attributes` object"
    if ctx.get("span_id") and ctx.get("span_id") == doc.get("parent_id"):
        yield f"{at}parent_id", "the span is its own parent"


def _document_problems(at: str, doc: Any) -> Iterator[tuple[str, str]]:
    if _is_sdk_span(doc):
        yield from _sdk_span_problems(at, doc)
        return
    if not isinstance(doc, dict) or "resourceSpans" not in doc:
        return  # the mapping names a document that is not OTLP traces
    if not isinstance(doc["resourceSpans"], list):
        yield f"{at}resourceSpans", "not a list"
        return
    for r, rs in enumerate(doc["resourceSpans"]):
        where = f"{at}resourceSpans[{r}]"
        if not isinstance(rs, dict):
            yield where, "not a resourceSpans object"
            continue
        resource = rs.get("resource")
        if resource is not None and not isinstance(resource, dict):
            yield f"{where}.resource", "not a resource object"
        elif resource:
            yield from _attribute_problems(f"{where}.resource", resource.get("attributes"))
        key = "scopeSpans" if "scopeSpans" in rs else "instrumentationLibrarySpans"
        scopes = rs.get(key)
        if not _list(scopes):
            yield f"{where}.{key}", "not a list"
            continue
        for s, ss in enumerate(scopes or []):
            if not isinstance(ss, dict) or not _list(ss.get("spans")):
                yield f"{where}.{key}[{s}]", "not a scope object with a list of spans"
                continue
            for n, span in enumerate(ss.get("spans") or []):
                yield from _span_problems(f"{where}.{key}[{s}].spans[{n}]", span)


def _spans(docs: list[Any], listed: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, span) of every span object of well-shaped documents."""
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
            continue
        prefix = f"[{i}]." if listed else ""
        for r, rs in enumerate(doc["resourceSpans"]):
            key = "scopeSpans" if "scopeSpans" in rs else "instrumentationLibrarySpans"
            for n_s, ss in enumerate(rs.get(key) or []):
                for n, span in enumerate(ss.get("spans") or []):
                    yield f"{prefix}resourceSpans[{r}].{key}[{n_s}].spans[{n}]", span


def _duplicate_ids(docs: list[Any], listed: bool) -> Iterator[tuple[str, str]]:
    """A span id used twice in one trace: which of the two a child belongs to is unknowable."""
    first: dict[tuple[Any, Any], str] = {}
    for at, span in _spans(docs, listed):
        key = (span.get("traceId"), span.get("spanId"))
        if not key[1]:
            continue
        if key in first:
            yield f"{at}.spanId", f"{key[1]!r} is the id of {first[key]} too"
        else:
            first[key] = at


def _parent_loops(docs: list[Any]) -> Iterator[tuple[str, str]]:
    """Spans whose chain of parents comes back to themselves (A → B → A)."""
    parents: dict[tuple[Any, Any], Any] = {}
    for doc in docs:
        if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
            continue
        for rs in doc["resourceSpans"]:
            for ss in (rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []):
                for span in ss.get("spans") or []:
                    if span.get("spanId") and span.get("parentSpanId"):
                        parents[(span.get("traceId"), span["spanId"])] = span["parentSpanId"]
    reported: set[Any] = set()
    for (trace, span_id), parent in parents.items():
        seen = {span_id}
        for _ in range(len(parents)):  # a chain is never longer than the spans there are
            if parent in seen:
                if span_id not in reported:
                    reported.update(seen)
                    yield f"trace {trace}", f"span {span_id} is its own ancestor (a loop of parentSpanId)"
                break
            seen.add(parent)
            parent = parents.get((trace, parent))
            if parent is None:
                break


def otlp_problems(where: str, document: Any) -> list[Problem]:
    """Every field of an OTLP JSON document (or a list of them) the mapping cannot read."""
    docs = document if isinstance(document, list) else [document]
    problems: list[Problem] = []
    for i, doc in enumerate(docs):
        prefix = f"[{i}]." if isinstance(document, list) else ""
        problems += [Problem(where, field, message, _FIX) for field, message in _document_problems(prefix, doc)]
    if not problems:
        fix = "give each span its own spanId and its parent's as parentSpanId"
        problems += [Problem(where, field, message, fix)
                     for field, message in _duplicate_ids(docs, isinstance(document, list))]
        problems += [Problem(where, field, message, fix) for field, message in _parent_loops(docs)]
    return problems[:20]
