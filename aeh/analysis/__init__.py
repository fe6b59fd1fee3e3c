"""DataFrame builders over the store: polars inside, pandas at the public edge.

Each name is imported from its module on first use (module `__getattr__`): a command loads what
it uses and no more. `aeh run`'s closing table needs the run table and its formatting, not
agreement's or drift's statistics; importing them all cost a one-attempt run more than its attempt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aeh._util.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    # one unwrapped line a module, so these imports read as the `_NAMES` table below does
    # isort: off
    from aeh.analysis._agreement import agreement
    from aeh.analysis._baseline import Baseline, BaselineSummaries, load_baseline, validate_baseline
    from aeh.analysis._compare import SUITE_ROW, compare
    from aeh.analysis._dimensions import build_baseline, save_baseline, score_run, scores, task_weighted
    from aeh.analysis._dimensions import weighted_overall, within_task_sd
    from aeh.analysis._drift import DRIFTING, NOT_ENOUGH_RUNS, drift
    from aeh.analysis._gate import BaselineMismatchError, GateResult, gate
    from aeh.analysis._judged import JudgedRunSummary, judge_run, judge_run_async
    from aeh.analysis._matrix import format_matrix, matrix
    from aeh.analysis._power import power
    from aeh.analysis._read import attempts, load_run, pass_k, run_table, runs
    from aeh.analysis._recovery import recovery_by_fault
    from aeh.analysis._results import BUCKET_ABBREVIATIONS, BUCKET_LEGEND, AgreementResult, CompareResult
    from aeh.analysis._results import CompareVerdict, DriftResult, FailUnder, MatrixResult, MinimumDetectable
    from aeh.analysis._results import PassKResult, ResumeNote, RunResult, ScoresResult, SuiteRate
    from aeh.analysis._results import evaluation_cost_text, format_run_table, judge_verdicts_text, resumed
    from aeh.analysis._results import suite_interval_text, with_fail_under
    from aeh.analysis._run_table import HARNESS_ERROR_LIMIT
    from aeh.analysis._scorecard import ScorecardPage, scorecard_page
    from aeh.analysis._spans import span_attributes, spans
    from aeh.analysis._trajectory_diff import CHANGED_STEP, ONLY_A_STEP, ONLY_B_STEP, SAME_STEP, AlignedStep, Step
    from aeh.analysis._trajectory_diff import TrajectoryDiff, align_steps, diff_attempts, trajectory_diff
    from aeh.analysis._validity import CANNOT_JUDGE, MIN_SHARED_TASKS, CannotJudgeError, Refusal, cannot_judge_text
    from aeh.analysis._verdicts import verdict_differences
    # isort: on

_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.analysis._agreement": ("agreement",),
    "aeh.analysis._baseline": ("Baseline", "BaselineSummaries", "load_baseline", "validate_baseline"),
    "aeh.analysis._compare": ("SUITE_ROW", "compare"),
    "aeh.analysis._dimensions": ("build_baseline", "save_baseline", "score_run", "scores", "task_weighted",
                                 "weighted_overall", "within_task_sd"),
    "aeh.analysis._drift": ("DRIFTING", "NOT_ENOUGH_RUNS", "drift"),
    "aeh.analysis._gate": ("BaselineMismatchError", "GateResult", "gate"),
    "aeh.analysis._judged": ("JudgedRunSummary", "judge_run", "judge_run_async"),
    "aeh.analysis._matrix": ("format_matrix", "matrix"),
    "aeh.analysis._power": ("power",),
    "aeh.analysis._read": ("attempts", "load_run", "pass_k", "run_table", "runs"),
    "aeh.analysis._recovery": ("recovery_by_fault",),
    "aeh.analysis._results": ("BUCKET_ABBREVIATIONS", "BUCKET_LEGEND", "AgreementResult", "CompareResult",
                              "CompareVerdict", "DriftResult", "FailUnder", "MatrixResult", "MinimumDetectable",
                              "PassKResult", "ResumeNote", "RunResult", "ScoresResult", "SuiteRate",
                              "evaluation_cost_text", "format_run_table", "judge_verdicts_text", "resumed",
                              "suite_interval_text", "with_fail_under"),
    "aeh.analysis._run_table": ("HARNESS_ERROR_LIMIT",),
    "aeh.analysis._scorecard": ("ScorecardPage", "scorecard_page"),
    "aeh.analysis._spans": ("span_attributes", "spans"),
    "aeh.analysis._trajectory_diff": ("CHANGED_STEP", "ONLY_A_STEP", "ONLY_B_STEP", "SAME_STEP", "AlignedStep", "Step",
                                      "TrajectoryDiff", "align_steps", "diff_attempts", "trajectory_diff"),
    "aeh.analysis._validity": ("CANNOT_JUDGE", "MIN_SHARED_TASKS", "CannotJudgeError", "Refusal", "cannot_judge_text"),
    "aeh.analysis._verdicts": ("verdict_differences",),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES, cache=True)


def __dir__() -> list[str]:
    return list(__all__)
