"""τ-bench historical trajectories (OpenAI chat messages, `task_id` × `trial`) → one stored run.

Mapping (see docs/realdata.md):
- one Attempt per record: task_id as a string, attempt = trial, success = reward == 1.0;
- status "answered", except records cut at τ-bench's message cap (`reward_info` null): those
  are "budget_exhausted" — the episode ran out of turns, it did not end on its own;
- tool calls from the assistant `tool_calls`, arguments JSON-decoded (undecodable → {"_raw": s},
  error_kind "invalid_args"), results from the `tool` message with the same `tool_call_id`;
- tokens 0 and cost None: the file has no agent token counts, so the run is *unpriced*, not free;
- spans: a root `attempt` span, a `model` span per assistant message, a `tools` span per call
  (child of its model span), with OpenTelemetry GenAI attribute names. The file has no clock
  times, so span timestamps are message positions (0, 1, 2 …), kept only for ordering.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aeh.errors import Problem, ValidationError
from aeh.grading.classify import classify_failure
from aeh.importers._common import load_json, new_run_id, run_info, short_hash, write_run
from aeh.models import Attempt, GraderResult, Span, ToolCall
from aeh.pricing import load_price_table
from aeh.store import StoreLike
from aeh.trajectory.formats import looks_like, refusal_fix

__all__ = ["DEFAULT_MODEL", "import_tau_bench", "records_to_attempts"]

SUITE = "tau-bench-airline"
ADAPTER = "import:tau-bench"
#: The agent model of the only shipped file (`gpt-4o-airline.json`): taken from the file name.
DEFAULT_MODEL = "gpt-4o"
_WHAT = "τ-bench trajectory file"


def import_tau_bench(path: str | Path, db: StoreLike = None, run_id: str | None = None,
                     model: str | None = None, price_table: str | Path | None = None) -> str:
    """Import a τ-bench trajectory file as one finished run; returns the run id.

    `model` defaults to the file name's prefix before the domain (`gpt-4o-airline.json` →
    "gpt-4o"). The file records no agent tokens, so `price_table` only stamps the run with the
    table it was imported under. Raises `aeh.errors.ValidationError` listing every problem on bad input.
    """
    file = Path(path)
    records, raw = load_json(file, _WHAT)
    _validate(file, records)
    model = model or _model_from_name(file.name)
    rid = run_id or new_run_id("tau")
    batch = records_to_attempts(records, rid, model)
    info = run_info(
        run_id=rid, suite=SUITE, suite_hash=short_hash(raw), adapter=ADAPTER, model=model,
        attempts=max(r["trial"] for r in records) + 1 if records else 0, concurrency=1,
        config={"source": str(file.resolve()), "source_format": "tau-bench historical_trajectories",
                "user_cost_usd": sum((r.get("info") or {}).get("user_cost") or 0.0 for r in records),
                "import_policy": ("every record counts, success = reward 1.0 (source definition); records cut "
                                  "at the message cap are budget_exhausted failures"),
                "cost_note": "no agent token counts in the file: unpriced (cost None), not free"},
        prices=load_price_table(price_table),
    )
    return write_run(db, info, batch)


def _model_from_name(name: str) -> str:
    stem = name.removesuffix(".json")
    for domain in ("-airline", "-retail"):
        if stem.endswith(domain):
            return stem.removesuffix(domain)
    return DEFAULT_MODEL if not stem else stem


def _validate(file: Path, records: Any) -> None:
    if looks_like(records) not in (None, "tau-bench"):  # another known format: one refusal naming its command
        raise ValidationError([Problem(str(file), "-", "not τ-bench trajectories", refusal_fix(records, "tau-bench"))],
                              _WHAT)
    if not isinstance(records, list):
        raise ValidationError([Problem(str(file), "-", f"top level is {type(records).__name__}, not a list",
                                       "pass a τ-bench historical_trajectories file (a JSON list of records)")], _WHAT)
    problems: list[Problem] = []
    seen: set[tuple[Any, Any]] = set()
    for i, r in enumerate(records):
        where = f"[{i}]"
        if not isinstance(r, dict):
            problems.append(
                Problem(str(file), where, "record is not an object", "each record needs task_id, trial, reward, traj")
            )
            continue
        for key, kind in (("task_id", int), ("trial", int), ("reward", (int, float)), ("traj", list)):
            if not isinstance(r.get(key), kind) or isinstance(r.get(key), bool):
                problems.append(
                    Problem(
                        str(file),
                        f"{where}.{key}",
                        f"missing or not {getattr(kind, '__name__', 'a number')}",
                        "see docs/realdata.md for the record shape",
                    )
                )
        if (r.get("task_id"), r.get("trial")) in seen:
            problems.append(
                Problem(
                    str(file),
                    where,
                    f"duplicate task {r.get('task_id')} trial {r.get('trial')}",
                    "each (task_id, trial) may appear once",
                )
            )
        seen.add((r.get("task_id"), r.get("trial")))
    if problems:
        raise ValidationError(problems, _WHAT)


def records_to_attempts(
    records: list[dict[str, Any]], run_id: str, model: str = DEFAULT_MODEL
) -> list[tuple[Attempt, list[Span]]]:
    """The (Attempt, spans) batch for `Store.write_attempts`, one per record."""
    return [_record(r, run_id, model) for r in records]


def _decode_args(text: Any) -> tuple[dict[str, Any], str | None]:
    if isinstance(text, dict):
        return text, None
    try:
        args = json.loads(text)
    except (TypeError, json.JSONDecodeError):
        return {"_raw": text}, "invalid_args"
    return (args, None) if isinstance(args, dict) else ({"_raw": text}, "invalid_args")


def _record(r: dict[str, Any], run_id: str, model: str) -> tuple[Attempt, list[Span]]:
    task_id, trial = str(r["task_id"]), int(r["trial"])
    info = r.get("info") or {}
    capped = info.get("reward_info", {}) is None
    reward = float(r["reward"])
    success = reward == 1.0
    status = "budget_exhausted" if capped else "answered"
    prefix = f"{task_id}-{trial}"
    root_id = f"{prefix}-root"
    spans: list[Span] = []
    calls: list[ToolCall] = []
    pending: dict[str, tuple[ToolCall, Span]] = {}  # tool_call_id → its call and span
    final_output: str | None = None

    def span(i: int, **kw: Any) -> Span:
        return Span(run_id=run_id, task_id=task_id, attempt=trial, start_ts=float(i), end_ts=float(i), **kw)

    for i, msg in enumerate(r["traj"]):
        role = msg.get("role")
        if role == "assistant":
            if msg.get("content"):
                final_output = msg["content"]
            model_id = f"{prefix}-m{i}"
            tool_calls = msg.get("tool_calls") or []
            spans.append(
                span(
                    i,
                    span_id=model_id,
                    parent_span_id=root_id,
                    category="model",
                    name="model:call",
                    attributes={
                        "gen_ai.operation.name": "chat",
                        "gen_ai.system": "openai",
                        "gen_ai.request.model": model,
                        "message_index": i,
                        "n_tool_calls": len(tool_calls),
                    },
                )
            )
            for j, tc in enumerate(tool_calls):
                fn = tc.get("function") or {}
                name = fn.get("name") or "?"
                args, kind = _decode_args(fn.get("arguments"))
                call = ToolCall(
                    name=name,
                    args=args,
                    error_kind=kind,
                    error="arguments are not a JSON object" if kind else None,
                    span_id=f"{prefix}-t{i}.{j}",
                )
                s = span(
                    i,
                    span_id=call.span_id,
                    parent_span_id=model_id,
                    category="tools",
                    name=f"tool:{name}",
                    status="error" if kind else "ok",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": name,
                        "gen_ai.tool.call.id": tc.get("id"),
                        "gen_ai.tool.type": "function",
                        "args": args,
                    },
                )
                calls.append(call)
                spans.append(s)
                pending[tc.get("id")] = (call, s)
        elif role == "tool" and msg.get("tool_call_id") in pending:
            call, s = pending.pop(msg["tool_call_id"])
            call.result = msg.get("content")
            s.attributes["result"] = call.result
            s.end_ts = float(i)
            # τ-bench's environment answers "Error: …" to bad requests (unknown id, wrong state):
            # a domain answer to the agent's own input, not a tool-side fault, so no error_kind.
            if isinstance(call.result, str) and call.result.startswith("Error:"):
                call.error = call.result
                s.attributes["tau.env_error"] = True
    n_msgs = len(r["traj"])
    bucket = classify_failure(success=success, status=status, tool_calls=calls, final_output=final_output)
    root = Span(
        run_id=run_id,
        task_id=task_id,
        attempt=trial,
        span_id=root_id,
        category="scheduler",
        name="attempt",
        start_ts=0.0,
        end_ts=float(n_msgs),
        status="ok" if success else "error",
        attributes={
            "task_id": task_id,
            "attempt": trial,
            "gen_ai.request.model": model,
            "messages": n_msgs,
            "episode_ended_by": info.get("source"),
            "user_cost_usd": info.get("user_cost"),
            "reward": reward,
            "success": success,
            "status": status,
            "failure_bucket": bucket.value if bucket else None,
        },
    )
    grader = GraderResult(
        tier=0,
        kind="imported_reward",
        name="tau_bench_reward",
        passed=success,
        evidence={"reward": reward, "reward_info": info.get("reward_info")},
    )
    attempt = Attempt(
        run_id=run_id,
        task_id=task_id,
        attempt=trial,
        seed=0,
        success=success,
        status=status,
        failure_bucket=bucket,
        final_output=final_output,
        error="stopped at the message cap (reward_info null)" if capped else None,
        tokens_in=0,
        tokens_out=0,
        cost_usd=None,
        latency_s=0.0,
        steps=len(calls),
        tool_calls=calls,
        grader_results=[grader],
        root_span_id=root_id,
    )
    return attempt, [root, *spans]
