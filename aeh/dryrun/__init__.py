"""`aeh run --dry-run`: validate, resolve the config, estimate tokens and cost, call no model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aeh._util.figure import UNPRICED, money
from aeh.adapters import DECLINE_TOOL, make_adapter
from aeh.engine.runplan import plan_run
from aeh.grading import preflight_problems
from aeh.pricing import load_price_table
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import load_suite, suite_hash
from aeh.tools import ToolRegistry

__all__ = ["dry_run", "estimate_tokens"]

#: Characters per token for English prose and JSON; a deliberate, stated approximation.
CHARS_PER_TOKEN = 4
_SYSTEM_PROMPT_TOKENS = 150
_OUTPUT_TOKENS_PER_TURN = 80
_TOOL_RESULT_TOKENS = 120


def estimate_tokens(prompt: str, tool_schemas: list[dict[str, Any]], expected_turns: int) -> tuple[int, int]:
    """(input, output) tokens for one attempt: each turn resends the growing conversation."""
    base = _SYSTEM_PROMPT_TOKENS + len(prompt) // CHARS_PER_TOKEN
    base += len(json.dumps(tool_schemas)) // CHARS_PER_TOKEN
    growth = _OUTPUT_TOKENS_PER_TURN + _TOOL_RESULT_TOKENS
    tokens_in = sum(base + turn * growth for turn in range(expected_turns))
    return tokens_in, expected_turns * _OUTPUT_TOKENS_PER_TURN


def _offered_schemas(adapter: str, registry: ToolRegistry, tools: list[str]) -> list[dict[str, Any]]:
    """The function schemas a request carries: live adapters add their `decline` tool, and
    single_shot offers nothing else."""
    if adapter not in ("react", "single_shot"):
        return registry.schemas(tools)
    return [DECLINE_TOOL] if adapter == "single_shot" else [*registry.schemas(tools), DECLINE_TOOL]


def _describe_faults(profile: dict[str, Any]) -> str:
    rates = ", ".join(f"{k} {v:g}" for k, v in (profile.get("rates") or {}).items() if v)
    return f"{profile.get('mode')} mode, per-call rates: {rates or 'none'}, tools: {profile.get('tools') or 'all'}"


def _preflight_lines(suite: EvalSuite) -> list[str]:
    """What `aeh run` would refuse to start on, said before anything is spent."""
    problems = preflight_problems(suite)
    if not problems:
        return ["preflight: ok"]
    return ["preflight: a run would refuse to start —", *(f"  ✗ {p}" for p in problems)]


def dry_run(suite: str | Path, *, adapter: str = "mock", model: str | None = None, attempts: int = 5,
            price_table: str | Path | None = None, fault_profile: str | None = None,
            fault_rate: float | None = None, fault_mode: str | None = None) -> str:
    """Resolve everything a run would use and return a printable plan with estimates."""
    loaded = load_suite(suite)
    _spec, wiring = plan_run(attempts=attempts, fault_profile=fault_profile, fault_rate=fault_rate,
                             fault_mode=fault_mode)
    agent = make_adapter(adapter, model=model) if adapter != "replay" else None
    model_name = agent.model if agent is not None else model
    prices = load_price_table(price_table)
    registry = loaded.tool_registry()
    goldens = loaded.golden_traces()
    lines = [
        f"dry run — suite {loaded.name} (hash {suite_hash(loaded)}), {len(loaded.tasks())} tasks valid",
        f"adapter {adapter}, model {model_name or '-'}, attempts {attempts} per task",
        f"price table {prices.version} ({prices.date})",
        "faults: " + (_describe_faults(wiring.fault_profile) if wiring.fault_profile else "none"),
        *_preflight_lines(loaded),
        "",
        f"{'task':<34} {'turns':>5} {'tokens in':>10} {'tokens out':>10} {'est. cost':>10}",
    ]
    total_in = total_out = 0
    for task in loaded.tasks():
        steps = len(task.plan) or (len(goldens[task.golden].steps) if task.golden in goldens else 0)
        turns = (1 if adapter == "single_shot" else max(2, steps + 1))
        t_in, t_out = estimate_tokens(task.prompt, _offered_schemas(adapter, registry, task.tools), turns)
        cost = prices.price(model_name, t_in, t_out)
        total_in += t_in
        total_out += t_out
        lines.append(f"{task.id:<34} {turns:>5} {t_in:>10} {t_out:>10} "
                     f"{money(cost, none=UNPRICED):>10}")
    run_in, run_out = total_in * attempts, total_out * attempts
    run_cost = prices.price(model_name, run_in, run_out)
    lines += [
        "",
        f"ESTIMATE per attempt (mean): {total_in // max(1, len(loaded.tasks()))} in / "
        f"{total_out // max(1, len(loaded.tasks()))} out tokens",
        f"ESTIMATE whole run ({len(loaded.tasks())} tasks × {attempts}): {run_in} in / {run_out} out tokens, "
        + ("cost unpriced: model not in the price table" if run_cost is None else f"cost ≈ {money(run_cost)}"),
        f"(estimated from prompt and tool-schema lengths at ~{CHARS_PER_TOKEN} characters per token; "
        "no model was called)",
    ]
    return "\n".join(lines)
