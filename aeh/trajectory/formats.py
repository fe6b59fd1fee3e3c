"""What a recorded-run file looks like, so a file given to the wrong importer is refused with
the importer that reads it ("this looks like an aeh trajectory file: use `aeh import trajectory`")."""

from __future__ import annotations

from typing import Any

from aeh._util.install import install_command
from aeh.trajectory.harness import is_harness_trajectory

__all__ = ["KINDS", "looks_like", "looks_like_bytes", "refusal_fix"]

#: kind → (what it is, how to import it)
KINDS: dict[str, tuple[str, str]] = {
    "otel": ("OTLP JSON traces", "aeh import otel FILE --suite S"),
    "otel-sdk": ("OpenTelemetry SDK span JSON", "aeh import otel FILE --suite S"),
    "phoenix": ("Phoenix span JSON", "aeh import otel FILE --suite S (it reads Phoenix's span JSON)"),
    "phoenix-frame": ("a Phoenix spans DataFrame written as JSON records",
                      "Phoenix's span JSON instead (its REST API: GET /v1/projects/PROJECT/spans, saved as a "
                      "file) or OTLP, then aeh import otel FILE --suite S"),
    "trajectory": ("an aeh trajectory file", "aeh import trajectory FILE --suite S (or aeh grade --suite S FILE)"),
    # the same command as aeh's own trajectories: it reads this shape as it is
    "agent-eval-harness": ("agent-eval-harness trajectory JSON (run_id, agent_version, steps[].step_type)",
                           "aeh import trajectory FILE --suite S (or aeh grade --suite S FILE)"),
    "tau-bench": ("τ-bench historical trajectories", "aeh import tau-bench FILE"),
    "terminal-bench": ("Terminal-Bench results", "aeh import terminal-bench PATH"),
    "otlp-protobuf": ("OTLP protobuf (binary)", "aeh import otel FILE --suite S (it reads OTLP protobuf with "
                                                "the otel extra: " + install_command("otel") + ")"),
}


def _one(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    if "resourceSpans" in item:
        return "otel"
    if isinstance(item.get("context"), dict) and "name" in item:
        return "phoenix" if "span_kind" in item else "otel-sdk"
    if "span_kind" in item and ("context.span_id" in item or "span_id" in item):
        return "phoenix-frame"  # get_spans_dataframe().to_json(orient="records"): columns, not spans
    if isinstance(item.get("data"), list) and item["data"] and isinstance(item["data"][0], dict):
        first = item["data"][0]
        return "phoenix" if _one(first) in ("phoenix", "otel-sdk") or {"trace_id", "span_id"} <= set(first) else None
    if isinstance(item.get("trajectories"), list):
        return "trajectory"
    if "task_id" in item and ("traj" in item and "trial" in item):
        return "tau-bench"
    if is_harness_trajectory(item):
        return "agent-eval-harness"
    if "task_id" in item and ("steps" in item or item.get("format") == "aeh.trajectory/1"):
        return "trajectory"
    if isinstance(item.get("results"), list) and ("accuracy" in item or "n_resolved" in item):
        return "terminal-bench"
    return None


def looks_like(document: Any) -> str | None:
    """The `KINDS` key of a parsed JSON document (or of the first of a list of them), or None."""
    if isinstance(document, list):
        return _one(document[0]) if document else None
    return _one(document)


def looks_like_bytes(raw: bytes) -> str | None:
    """`otlp-protobuf` for a binary OTLP export (an ExportTraceServiceRequest starts with field 1,
    `resource_spans`, tag byte 0x0a), else None."""
    if raw[:1] != b"\x0a":
        return None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "otlp-protobuf"
    return None


def refusal_fix(document: Any, expected: str) -> str:
    """`this looks like X: use CMD` when `document` is another known format than `expected` (a
    `KINDS` key), else how to produce the expected one."""
    kind = looks_like(document)
    if kind is not None and KINDS[kind][1] != KINDS[expected][1]:
        what, use = KINDS[kind]
        return f"this looks like {what}: use {use}"
    if expected == "otel":
        return ("export traces as OTLP JSON (the file exporter or the collector's `file` exporter write this "
                "shape), or Phoenix's span JSON")
    return "see the trajectory format in docs/your_agent.md"
