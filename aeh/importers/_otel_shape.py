"""The shape an OTLP JSON file must have before it is mapped: every field the mapping reads is of
the type it expects, and no span is its own ancestor.

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
    yield from _attribute_problems(at, span.get("attributes"))
    if span.get("status") is not None and not isinstance(span["status"], dict):
        yield f"{at}.status", "not a status object ({\"code\": …, \"message\": …})"
    if not _list(span.get("events")):
        yield f"{at}.events", "not a list of events"
    if span.get("spanId") and span.get("spanId") == span.get("parentSpanId"):
        yield f"{at}.parentSpanId", "the span is its own parent"


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
        problems += [Problem(where, field, message, "give each span its own spanId and its parent's as parentSpanId")
                     for field, message in _parent_loops(docs)]
    return problems[:20]
