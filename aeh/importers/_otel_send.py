"""Send a run's spans to an OTLP/HTTP collector through opentelemetry-sdk (extra `aeh-harness[otel]`).

The spans are those of `aeh.importers._otel.run_to_otlp` (same ids, names, times and GenAI /
`aeh.*` attributes), rebuilt as SDK `ReadableSpan`s and handed to the OTLP/HTTP (protobuf)
exporter, so any collector, Phoenix or vendor endpoint that speaks OTLP receives them.
"""

from __future__ import annotations

from typing import Any

from aeh.errors import AehError, MissingExtraError
from aeh.importers._otel import _from_any

__all__ = ["send_otlp"]

OTEL_MODULES = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


def _endpoint(url: str) -> str:
    return url if url.rstrip("/").endswith("/v1/traces") else url.rstrip("/") + "/v1/traces"


def send_otlp(document: dict[str, Any], endpoint: str, *, timeout_s: float = 10.0) -> int:
    """Export every span of an OTLP JSON document to `endpoint`; returns how many were sent."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        raise MissingExtraError("aeh export otel --endpoint", "otel", list(OTEL_MODULES)) from None
    # the rest of the otel extra, present once the exporter imported
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExportResult
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    def attrs(kvs: list[dict[str, Any]]) -> dict[str, Any]:
        return {kv["key"]: _from_any(kv["value"]) for kv in kvs}

    spans: list[ReadableSpan] = []
    scope = InstrumentationScope("aeh")
    for rs in document["resourceSpans"]:
        resource = Resource.create(attrs(rs["resource"]["attributes"]))
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                trace_id = int(s["traceId"], 16)
                context = SpanContext(trace_id, int(s["spanId"], 16), is_remote=False,
                                      trace_flags=TraceFlags(TraceFlags.SAMPLED))
                parent = (SpanContext(trace_id, int(s["parentSpanId"], 16), is_remote=False)
                          if s.get("parentSpanId") else None)
                code = s.get("status", {}).get("code")
                status = (Status(StatusCode.ERROR, s["status"].get("message") or None) if code == 2
                          else Status(StatusCode.OK))
                spans.append(ReadableSpan(
                    name=s["name"], context=context, parent=parent, resource=resource,
                    attributes=attrs(s["attributes"]),
                    kind=SpanKind.CLIENT if s.get("kind") == 3 else SpanKind.INTERNAL, status=status,
                    start_time=int(s["startTimeUnixNano"]), end_time=int(s["endTimeUnixNano"]),
                    instrumentation_scope=scope))
    exporter = OTLPSpanExporter(endpoint=_endpoint(endpoint), timeout=timeout_s)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]  # opentelemetry leaves shutdown() unannotated
    if result is not SpanExportResult.SUCCESS:
        raise AehError(f"the OTLP endpoint {_endpoint(endpoint)} did not accept the {len(spans)} spans")
    return len(spans)
