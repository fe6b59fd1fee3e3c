"""A third-party invariant, registered through the `aeh.invariants` entry point."""

from __future__ import annotations

from aeh.plugins import InvariantVerdict, TraceView


def answer_under_200_chars(trace: TraceView) -> InvariantVerdict:
    """The final answer stays short."""
    answer = trace.final_output or ""
    return len(answer) < 200 or (False, f"answer is {len(answer)} characters long")
