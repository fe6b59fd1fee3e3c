"""Terminal-Bench run directories (`results.json`, one trial per task each) → one stored run.

Each run directory is one independent trial of every task, so the directory's position in
`run_dirs` becomes the attempt index: 5 runs × 80 tasks → 80 tasks × 5 attempts.

- `is_resolved` true/false → success; null (the test output could not be parsed:
  `parser_results` null, failure_mode test_timeout or parse_error) → a **harness_error**
  attempt: we do not know whether the agent succeeded, so it leaves n and is counted beside it;
- failure_mode agent_timeout → status "budget_exhausted" (success still follows the tests:
  some timed-out agents had already solved the task);
- a failure whose tests ran and failed → wrong_answer (the end state was wrong);
- latency = agent_ended_at − agent_started_at; tokens are 0 in droid submissions, so cost is
  None (unpriced), never 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aeh.errors import Problem, ValidationError
from aeh.grading.classify import classify_failure
from aeh.importers._common import iso_to_epoch, load_json, new_run_id, run_info, short_hash, write_run
from aeh.models import Attempt, FailureBucket, GraderResult, Span

__all__ = ["import_terminal_bench", "model_from_submission"]

ADAPTER = "import:terminal-bench"
_WHAT = "Terminal-Bench results"
_RESULT_KEYS = {"task_id": str, "failure_mode": str}


def model_from_submission(name: str) -> str:
    """`20250923_droid_claude-4-1-opus` → "claude-4-1-opus" (date, then agent, then model)."""
    parts = name.split("_")
    if parts and re.fullmatch(r"\d{8}", parts[0]):
        parts = parts[1:]
    return "_".join(parts[1:]) if len(parts) > 1 else "_".join(parts)


def import_terminal_bench(run_dirs: Sequence[str | Path], db: Any = None, run_id: str | None = None,
                          model: str | None = None) -> str:
    """Import several Terminal-Bench run directories of one model as one run; returns its id.

    Raises `aeh.errors.ValidationError` listing every problem (missing file, wrong schema,
    runs of different models mixed without `model=`).
    """
    dirs = [Path(d) for d in run_dirs]
    if not dirs:
        raise ValidationError([Problem("-", "run_dirs", "no run directory given",
                                       "pass one or more directories holding results.json")], _WHAT)
    loaded, problems = [], []
    for d in dirs:
        try:
            loaded.append(_load_run_dir(d))
        except ValidationError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ValidationError(problems, _WHAT)
    if model is None:
        names = {model_from_submission(d.resolve().parent.name) for d in dirs}
        if len(names) > 1:
            raise ValidationError([Problem(str(d), "-", f"runs come from different submissions ({sorted(names)})",
                                           "import each model separately, or pass model= / --model")
                                   for d in dirs[:1]], _WHAT)
        model = names.pop()
    rid = run_id or new_run_id("tb")
    batch = [_trial(res, rid, position, d.name, model)
             for position, (d, (results, _meta, _raw)) in enumerate(zip(dirs, loaded, strict=True))
             for res in results["results"]]
    metas = [meta for _r, meta, _raw in loaded]
    tasks = sorted({res["task_id"] for results, _m, _r in loaded for res in results["results"]})
    dataset = {(m.get("dataset_name"), m.get("dataset_version")) for m in metas if m}
    # The suite is the dataset (name, version, task ids), not the results bytes, so two models'
    # imports of the same dataset compare without a "suite changed" warning.
    suite_key = f"{sorted(dataset, key=str)}|{','.join(tasks)}".encode()
    name, version = next(iter(dataset)) if len(dataset) == 1 else (None, None)
    info = run_info(
        run_id=rid, suite=f"terminal-bench:{name or 'unknown'}@{version or '?'}", suite_hash=short_hash(suite_key),
        adapter=ADAPTER, model=model, attempts=len(dirs),
        concurrency=max([int(m.get("n_concurrent_trials") or 1) for m in metas if m] or [1]),
        config={"sources": [str(d.resolve()) for d in dirs],
                "source_sha256": [short_hash(raw) for _r, _m, raw in loaded],
                "agent_name": sorted({str(m.get("agent_name")) for m in metas if m}),
                "original_run_ids": [d.name for d in dirs],
                "cost_note": "tokens not reported (0): unpriced (cost None), not free"},
    )
    return write_run(db, info, batch)


def _load_run_dir(d: Path) -> tuple[dict[str, Any], dict[str, Any] | None, bytes]:
    if not d.is_dir():
        raise ValidationError([Problem(str(d), "-", "not a directory",
                                       "pass Terminal-Bench run directories (each holds results.json)")], _WHAT)
    results, raw = load_json(d / "results.json", _WHAT,
                             "pass a Terminal-Bench run directory (one that holds results.json)")
    file = str(d / "results.json")
    if not isinstance(results, dict) or not isinstance(results.get("results"), list):
        raise ValidationError([Problem(file, "results", "missing or not a list",
                                       "pass a run-level results.json of terminal-bench")], _WHAT)
    problems, seen = [], set()
    for i, res in enumerate(results["results"]):
        where = f"results[{i}]"
        if not isinstance(res, dict):
            problems.append(Problem(file, where, "entry is not an object", "each entry is one trial"))
            continue
        for key, kind in _RESULT_KEYS.items():
            if not isinstance(res.get(key), kind):
                problems.append(Problem(file, f"{where}.{key}", f"missing or not a {kind.__name__}",
                                        "see docs/realdata.md for the results.json shape"))
        if res.get("is_resolved", "?") not in (True, False, None):
            problems.append(Problem(file, f"{where}.is_resolved", f"{res.get('is_resolved', 'missing')!r} is not true/false/null",
                                    "is_resolved must be present and boolean or null"))
        if res.get("task_id") in seen:
            problems.append(Problem(file, f"{where}.task_id", f"task {res.get('task_id')!r} appears twice",
                                    "a run-level results.json holds one trial per task (n_attempts 1)"))
        seen.add(res.get("task_id"))
    if problems:
        raise ValidationError(problems, _WHAT)
    meta_file = d / "run_metadata.json"
    meta = load_json(meta_file, _WHAT)[0] if meta_file.exists() else None
    return results, meta if isinstance(meta, dict) else None, raw


def _trial(res: dict[str, Any], run_id: str, position: int, run_name: str,
           model: str) -> tuple[Attempt, list[Span]]:
    task_id, resolved, mode = res["task_id"], res.get("is_resolved"), res["failure_mode"]
    parsed = res.get("parser_results")
    if resolved is None:
        status, success = "harness_error", False
        error = f"test result could not be parsed (failure_mode {mode}, parser_results null)"
    else:
        status = "budget_exhausted" if mode == "agent_timeout" else "answered"
        success, error = bool(resolved), None if mode == "unset" else f"failure_mode {mode}"
    bucket = classify_failure(success=success, status=status, tool_calls=[], final_output=None)
    if bucket == FailureBucket.no_answer and parsed is not None:
        bucket = FailureBucket.wrong_answer  # the tests ran on the end state and failed
    a0, a1 = iso_to_epoch(res.get("agent_started_at")), iso_to_epoch(res.get("agent_ended_at"))
    t0, t1 = iso_to_epoch(res.get("test_started_at")), iso_to_epoch(res.get("test_ended_at"))
    s0, s1 = iso_to_epoch(res.get("trial_started_at")), iso_to_epoch(res.get("trial_ended_at"))
    prefix = f"{task_id}-{position}"
    root_id = f"{prefix}-root"

    def span(suffix: str, category: str, name: str, start: float | None, end: float | None,
             ok: bool, **attributes: Any) -> Span:
        return Span(run_id=run_id, task_id=task_id, attempt=position, span_id=f"{prefix}-{suffix}",
                    parent_span_id=None if suffix == "root" else root_id, category=category, name=name,
                    start_ts=start if start is not None else 0.0, end_ts=end, status="ok" if ok else "error",
                    attributes=attributes)

    spans = [
        span("root", "scheduler", "attempt", s0 or a0, s1 or a1, success, task_id=task_id, attempt=position,
             trial_name=res.get("trial_name"), source_run=run_name, **{"gen_ai.request.model": model},
             success=success, status=status, failure_mode=mode,
             failure_bucket=bucket.value if bucket else None),
        span("agent", "scheduler", "agent", a0, a1, mode != "agent_timeout",
             **{"gen_ai.agent.name": "Factory Droid", "gen_ai.request.model": model},
             recording_path=res.get("recording_path")),
        span("tests", "grading", "tests", t0, t1, resolved is True, parser_results=parsed, is_resolved=resolved),
    ]
    grader = GraderResult(tier=0, kind="imported_reward", name="terminal_bench_tests", passed=resolved,
                          evidence={"is_resolved": resolved, "failure_mode": mode, "parser_results": parsed},
                          error=error if resolved is None else None)
    attempt = Attempt(
        run_id=run_id, task_id=task_id, attempt=position, seed=0, success=success, status=status,
        failure_bucket=bucket, error=error, tokens_in=int(res.get("total_input_tokens") or 0),
        tokens_out=int(res.get("total_output_tokens") or 0), cost_usd=None,
        latency_s=(a1 - a0) if a0 is not None and a1 is not None else 0.0,
        grader_results=[grader], root_span_id=root_id,
    )
    return attempt, spans
