"""Inspect AI eval logs (`.eval` or `.json`) → one stored run.

The logs are read with Inspect's own reader (`inspect_ai.log.read_eval_log`), so every log
format Inspect writes imports; it needs the `inspect` extra. Mapping (see docs/importing.md):

- one task per dataset sample (its id), one attempt per epoch; several logs of the same task and
  model are one run, epochs numbered across the logs in the order given (log 2's epoch 1 follows
  log 1's last);
- success from ONE scorer (`_inspect_score.py`); sample errors and unscored samples are harness
  errors, limits are `budget_exhausted` (`_inspect_sample.py`);
- events as spans (`_inspect_spans.py`), usage priced (`_inspect_usage.py`);
- the suite is `inspect:TASK`, hashed from the task, its version, the dataset and its sample ids,
  so two models' logs of one task compare cleanly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeh._util.optional import require_extra
from aeh.engine import EvaluationSpend
from aeh.errors import Problem, ValidationError
from aeh.importers._common import new_run_id, run_info, short_hash, write_run
from aeh.importers._inspect_score import ScorePolicy, choose_scorer, score_number, scorer_names
from aeh.pricing import load_price_table
from aeh.store import StoreLike

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

__all__ = ["ADAPTER", "import_inspect_logs", "read_inspect_logs"]

ADAPTER = "import:inspect"
_WHAT = "Inspect log"


def read_inspect_logs(paths: Sequence[str | Path]) -> list[tuple[Path, EvalLog]]:
    """Each log read whole (attachments resolved) with Inspect's reader; ValidationError listing
    every path that is missing or not an Inspect log."""
    require_extra("importing an Inspect log", ("inspect_ai",), "inspect")
    from inspect_ai.log import read_eval_log  # heavy: loaded on first use (the inspect extra)

    logs: list[tuple[Path, EvalLog]] = []
    problems: list[Problem] = []
    for path in map(Path, paths):
        if not path.is_file():
            problems.append(Problem(str(path), "-", "file not found" if not path.exists() else "not a file",
                                    "pass Inspect log files (.eval or .json), e.g. from logs/"))
            continue
        try:
            log = read_eval_log(str(path), resolve_attachments=True)
        except Exception as exc:  # the reader raises zip, JSON and schema errors of many types
            problems.append(Problem(str(path), "-", f"not an Inspect log Inspect can read: {type(exc).__name__}: "
                                    f"{str(exc)[:300]}", "pass a .eval or .json log written by Inspect AI"))
            continue
        if not log.samples:
            problems.append(Problem(str(path), "samples", "the log holds no samples",
                                    "pass a log of an eval that ran (not a header-only log)"))
            continue
        logs.append((path, log))
    if problems:
        raise ValidationError(problems, _WHAT)
    return logs


def _one(logs: Sequence[tuple[Path, EvalLog]], what: str, value: Any) -> None:
    """Refuse logs that disagree on the task or model: they are not one run's attempts."""
    seen = {str(value(log)) for _, log in logs}
    if len(seen) > 1:
        raise ValidationError([Problem(str(logs[0][0]), what, f"the logs are of {len(seen)} {what}s: "
                                       f"{', '.join(sorted(seen))}",
                                       "import each task's and model's logs as its own run")], _WHAT)


def import_inspect_logs(paths: Sequence[str | Path], db: StoreLike = None, run_id: str | None = None, *,
                        scorer: str | None = None, success_threshold: float = 1.0,
                        price_table: str | Path | None = None) -> str:
    """Import Inspect eval logs of one task and model as one finished run; returns its id.

    `scorer` names the scorer whose value decides success (default: the log's only scorer;
    several are refused without it); success is that value read as a number ≥
    `success_threshold` (default 1.0: CORRECT, true, 1). Model usage is priced from
    `price_table` (default: the shipped table) unless Inspect recorded a cost. Raises
    `aeh.errors.ValidationError` listing every problem, `MissingExtraError` without inspect-ai.
    """
    if not paths:
        raise ValidationError([Problem("-", "paths", "no log given", "pass Inspect log files (.eval or .json)")],
                              _WHAT)
    logs = read_inspect_logs(paths)
    _one(logs, "task", lambda log: log.eval.task)
    _one(logs, "model", lambda log: log.eval.model)
    declared = [s.name for _, log in logs for s in (log.eval.scorers or [])]
    available = scorer_names(((s.scores or {}).keys() for _, log in logs for s in log.samples or []), declared)
    policy = ScorePolicy(scorer=choose_scorer(available, scorer, str(logs[0][0])), threshold=success_threshold)
    _check_values(logs, policy)
    prices = load_price_table(price_table)
    rid = run_id or new_run_id("inspect")
    from aeh.importers._inspect_sample import sample_to_attempt  # needs inspect_ai: after the extra check

    batch, offset = [], 0
    for _, log in logs:
        samples = log.samples or []
        for sample in samples:
            batch.append(sample_to_attempt(sample, rid, offset + sample.epoch - 1, policy, prices))
        offset += max(s.epoch for s in samples)
    spend = EvaluationSpend()
    for _, spans in batch:
        spend.add_spans(spans)
    first = logs[0][1].eval
    ids = sorted({str(s.id) for _, log in logs for s in log.samples or []})
    suite_key = f"{first.task}@{first.task_version}|{first.dataset.name}|{','.join(ids)}".encode()
    accuracy = [a for a in (_source_accuracy(log, policy.scorer) for _, log in logs) if a is not None]
    info = run_info(
        run_id=rid, suite=f"inspect:{first.task}", suite_hash=short_hash(suite_key), adapter=ADAPTER,
        model=first.model, attempts=offset, concurrency=first.config.max_samples or 1,
        config={"sources": [str(p.resolve()) for p, _ in logs], "source_format": "inspect-ai eval log",
                "inspect_version": first.packages.get("inspect_ai"), "inspect_task": first.task,
                "inspect_task_version": first.task_version, "inspect_dataset": first.dataset.name,
                "inspect_eval_ids": [log.eval.eval_id for _, log in logs],
                "inspect_status": [log.status for _, log in logs],
                "scorer": policy.scorer, "success_threshold": policy.threshold, "scorers": available,
                "import_policy": policy.describe(),
                **({"source_accuracy": {"per_file": accuracy, "mean": sum(accuracy) / len(accuracy),
                                        "definition": f"Inspect's accuracy metric of scorer {policy.scorer!r}"}}
                   if accuracy else {}),
                **({"price_table": str(price_table)} if price_table is not None else {}),
                # a model-graded scorer's calls: shown beside the agent's cost, never inside it
                **({"live_checks": {"evaluation_spend": spend.summary()}} if spend.calls else {}),
                "cost_note": ("cost is Inspect's recorded total_cost where present, else model_usage priced from "
                              f"price table {prices.version}; a model not in the table leaves the attempt "
                              "unpriced; scorers' model calls are evaluation spend, not in the cost")},
        prices=prices,
    )
    return write_run(db, info, batch)


def _check_values(logs: Sequence[tuple[Path, EvalLog]], policy: ScorePolicy) -> None:
    """Every value of the chosen scorer must read as a number: refuse the rest, listed."""
    problems: list[Problem] = []
    for path, log in logs:
        for sample in log.samples or []:
            score = (sample.scores or {}).get(policy.scorer)
            if score is not None and score_number(score.value) is None:
                problems.append(Problem(str(path), f"samples[id={sample.id}, epoch={sample.epoch}].scores."
                                        f"{policy.scorer}", f"value {score.value!r} is not one score",
                                        "choose a scorer with one value per sample (--scorer NAME): C/I/P/N, a "
                                        "boolean or a number"))
    if problems:
        raise ValidationError(problems, _WHAT)


def _source_accuracy(log: EvalLog, scorer: str) -> float | None:
    """Inspect's own accuracy for `scorer`, when the log's results hold one."""
    for score in (log.results.scores if log.results else []):
        if score.name == scorer and "accuracy" in score.metrics:
            return float(score.metrics["accuracy"].value)
    return None
