"""What keeping model inputs costs the store: bytes per attempt on the core suite with the mock adapter.

    .venv/bin/python benchmarks/span_inputs.py [--attempts 5] [--seed 7] [--write]

Runs `core` with the mock adapter into a fresh store, then reports the store file size and the
bytes of span attributes per attempt, the bytes the model spans would take if each stored its
whole input (`aeh.trace.full_inputs` re-expanded, re-serialised as the store writes JSON), and a
digest of every attempt's verdict (success, bucket, tier-0..2 grader verdicts) so two versions of
aeh can be checked to grade the same seed alike. `--write` records the section in RESULTS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

import aeh
from aeh.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine, publish  # noqa: E402 — the benchmarks' own helper


def _measure(db: Path) -> dict[str, float]:
    conn = sqlite3.connect(db)
    try:
        conn.execute("VACUUM")
        attempts = conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
        spans, attr_bytes = conn.execute("SELECT count(*), sum(length(CAST(attributes AS BLOB))) FROM spans").fetchone()
        model = conn.execute("SELECT count(*), sum(length(CAST(attributes AS BLOB))) FROM spans "
                             "WHERE category = 'model'").fetchone()
        rows = conn.execute("SELECT sum(length(CAST(evidence AS BLOB))) FROM grader_results").fetchone()
        verdicts = conn.execute(
            "SELECT a.task_id, a.attempt, a.success, a.failure_bucket, "
            "group_concat(g.tier || ':' || g.name || ':' || coalesce(g.passed, 'n'), ',') "
            "FROM attempts a LEFT JOIN grader_results g USING (run_id, task_id, attempt) "
            "GROUP BY a.task_id, a.attempt ORDER BY a.task_id, a.attempt").fetchall()
    finally:
        conn.close()
    return {"attempts": attempts, "spans": spans, "attr_bytes": attr_bytes or 0, "model_spans": model[0],
            "model_bytes": model[1] or 0, "evidence_bytes": rows[0] or 0, "file_bytes": db.stat().st_size,
            "digest": hashlib.sha256(json.dumps(verdicts).encode()).hexdigest()[:16]}


def _full_model_bytes(db: Path, run_id: str) -> int:
    """Model-span attribute bytes if every span stored its whole input (the naive representation)."""
    full_inputs = getattr(aeh.trace, "full_inputs", None)
    if full_inputs is None:  # an aeh that keeps no inputs: nothing to re-expand
        return -1
    total = 0
    with Store(db) as store:
        for task_id, attempt in store.attempts_frame(run_id, columns=["task_id", "attempt"]).iter_rows():
            for span in full_inputs(store.attempt_spans(run_id, task_id, attempt)):
                if span.category == "model":
                    attrs = {k: v for k, v in span.attributes.items() if not k.startswith("aeh.input.prefix")}
                    total += len(json.dumps(attrs, ensure_ascii=False, separators=(",", ":")).encode())
    return total


def _long_conversation(turns: int, result_chars: int) -> tuple[int, int]:
    """Stored model-span bytes of one react-style attempt of `turns` calls, each adding a tool call
    and a `result_chars` result: (whole input per call, compact as the store keeps it)."""
    from aeh.models import Span
    from aeh.trace import compact_inputs

    messages: list[dict[str, object]] = [{"role": "system", "content": "You are careful."},
                                         {"role": "user", "content": "Summarise the orders."}]
    spans = []
    for turn in range(turns):
        spans.append(Span(run_id="r", task_id="t", attempt=0, span_id=f"{turn:016x}", category="model",
                          name="model:call", start_ts=float(turn),
                          attributes={"gen_ai.input.messages": list(messages)}))
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{turn}", "type": "function", "function": {"name": "read", "arguments": f'{{"page": {turn}}}'}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": "x" * result_chars})

    def size(items: list[Span]) -> int:
        return sum(len(json.dumps(s.attributes, separators=(",", ":")).encode()) for s in items)

    return size(spans), size(compact_inputs(spans))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="record the section in benchmarks/RESULTS.md")
    parser.add_argument("--label", default="this version")
    parser.add_argument("--before", default="", help="the row printed by this script on the version before")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "runs.db"
        result = aeh.run("core", adapter="mock", attempts=args.attempts, seed=args.seed, db=str(db),
                         progress=False)
        m = _measure(db)
        full = _full_model_bytes(db, result.run_id)
    n = m["attempts"]
    line = (f"| {args.label} | {n} | {m['file_bytes'] / n / 1024:.1f} | {m['attr_bytes'] / n / 1024:.2f} | "
            f"{m['model_bytes'] / n / 1024:.2f} | "
            f"{(full / n / 1024) if full >= 0 else float('nan'):.2f} | {m['model_spans'] / n:.1f} | `{m['digest']}` |")
    head = ("| aeh | attempts | store file KiB / attempt | span attributes KiB / attempt | model spans KiB / attempt "
            "| model spans if each kept its whole input, KiB / attempt | model spans / attempt | verdict digest |\n"
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    rows = "\n".join(r for r in (args.before, line) if r)
    long = ["| calls | whole input per call (KiB) | stored compact (KiB) | ratio |", "| ---: | ---: | ---: | ---: |"]
    for turns in (10, 50, 100):
        whole, compact = _long_conversation(turns, 1000)
        long.append(f"| {turns} | {whole / 1024:,.0f} | {compact / 1024:,.0f} | {whole / compact:.1f}× |")
    body = (f"## span_inputs — model spans keep their input\n\n{machine()}\n\n"
            f"`core` with the mock adapter, {args.attempts} attempts per task, seed {args.seed} "
            "(`.venv/bin/python benchmarks/span_inputs.py --write`). The digest covers every attempt's "
            "success, bucket and grader verdicts: equal digests, equal grades.\n\n"
            f"{head}\n{rows}\n\nOne react-style attempt whose every call adds a tool call and a 1,000-character "
            "result (model-span attribute bytes, as JSON):\n\n" + "\n".join(long) + "\n")
    publish("span_inputs", body, args.write)


if __name__ == "__main__":
    main()
