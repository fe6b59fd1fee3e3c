"""DataFrame builders over the store: polars inside, pandas at the public edge.

Each name is imported from its module on first use (module `__getattr__`): a command loads what
it uses and no more. `aeh run`'s closing table needs the run table and its formatting, not
agreement's or drift's statistics; importing them all cost a one-attempt run more than its attempt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aeh._util.lazy import lazy_getattr

if TYPE_CHECKING:
    from aeh.analysis._agreement import agreement
    from aeh.analysis._baseline import Baseline, validate_baseline
    from aeh.analysis._compare import SUITE_ROW, compare
    from aeh.analysis._dimensions import (
        BaselineMismatchError,
        GateResult,
        build_baseline,
        gate,
        load_baseline,
        save_baseline,
        score_run,
        scores,
        task_weighted,
        weighted_overall,
        within_task_sd,
    )
    from aeh.analysis._drift import DRIFTING, NOT_ENOUGH_RUNS, drift
    from aeh.analysis._judged import JudgedRunSummary, judge_run, judge_run_async
    from aeh.analysis._matrix import format_matrix, matrix
    from aeh.analysis._power import power
    from aeh.analysis._read import attempts, load_run, pass_k, run_table, runs
    from aeh.analysis._recovery import recovery_by_fault
    from aeh.analysis._results import (
        BUCKET_ABBREVIATIONS,
        BUCKET_LEGEND,
        AgreementResult,
        CompareResult,
        CompareVerdict,
        DriftResult,
        FailUnder,
        MatrixResult,
        MinimumDetectable,
        PassKResult,
        ResumeNote,
        RunResult,
        ScoresResult,
        SuiteRate,
        evaluation_cost_text,
        format_run_table,
        judge_verdicts_text,
        resumed,
        suite_interval_text,
        with_fail_under,
    )
    from aeh.analysis._run_table import HARNESS_ERROR_LIMIT
    from aeh.analysis._scorecard import ScorecardPage, scorecard_page
    from aeh.analysis._spans import span_attributes, spans
    from aeh.analysis._trajectory_diff import (
        CHANGED_STEP,
        ONLY_A_STEP,
        ONLY_B_STEP,
        SAME_STEP,
        AlignedStep,
        Step,
        TrajectoryDiff,
        align_steps,
        diff_attempts,
        trajectory_diff,
    )
    from aeh.analysis._validity import CANNOT_JUDGE, MIN_SHARED_TASKS, CannotJudgeError, Refusal, cannot_judge_text
    from aeh.analysis._verdicts import verdict_differences

_LAZY = {
    "agreement": "aeh.analysis._agreement",
    "Baseline": "aeh.analysis._baseline",
    "validate_baseline": "aeh.analysis._baseline",
    "SUITE_ROW": "aeh.analysis._compare",
    "compare": "aeh.analysis._compare",
    "BaselineMismatchError": "aeh.analysis._dimensions",
    "GateResult": "aeh.analysis._dimensions",
    "build_baseline": "aeh.analysis._dimensions",
    "gate": "aeh.analysis._dimensions",
    "load_baseline": "aeh.analysis._dimensions",
    "save_baseline": "aeh.analysis._dimensions",
    "score_run": "aeh.analysis._dimensions",
    "scores": "aeh.analysis._dimensions",
    "task_weighted": "aeh.analysis._dimensions",
    "weighted_overall": "aeh.analysis._dimensions",
    "within_task_sd": "aeh.analysis._dimensions",
    "DRIFTING": "aeh.analysis._drift",
    "NOT_ENOUGH_RUNS": "aeh.analysis._drift",
    "drift": "aeh.analysis._drift",
    "BUCKET_ABBREVIATIONS": "aeh.analysis._results",
    "BUCKET_LEGEND": "aeh.analysis._results",
    "evaluation_cost_text": "aeh.analysis._results",
    "format_run_table": "aeh.analysis._results",
    "judge_verdicts_text": "aeh.analysis._results",
    "suite_interval_text": "aeh.analysis._results",
    "JudgedRunSummary": "aeh.analysis._judged",
    "judge_run": "aeh.analysis._judged",
    "judge_run_async": "aeh.analysis._judged",
    "format_matrix": "aeh.analysis._matrix",
    "matrix": "aeh.analysis._matrix",
    "power": "aeh.analysis._power",
    "attempts": "aeh.analysis._read",
    "load_run": "aeh.analysis._read",
    "pass_k": "aeh.analysis._read",
    "run_table": "aeh.analysis._read",
    "runs": "aeh.analysis._read",
    "recovery_by_fault": "aeh.analysis._recovery",
    "AgreementResult": "aeh.analysis._results",
    "CompareResult": "aeh.analysis._results",
    "CompareVerdict": "aeh.analysis._results",
    "DriftResult": "aeh.analysis._results",
    "FailUnder": "aeh.analysis._results",
    "MatrixResult": "aeh.analysis._results",
    "MinimumDetectable": "aeh.analysis._results",
    "PassKResult": "aeh.analysis._results",
    "ResumeNote": "aeh.analysis._results",
    "RunResult": "aeh.analysis._results",
    "ScoresResult": "aeh.analysis._results",
    "SuiteRate": "aeh.analysis._results",
    "resumed": "aeh.analysis._results",
    "with_fail_under": "aeh.analysis._results",
    "HARNESS_ERROR_LIMIT": "aeh.analysis._run_table",
    "ScorecardPage": "aeh.analysis._scorecard",
    "scorecard_page": "aeh.analysis._scorecard",
    "span_attributes": "aeh.analysis._spans",
    "spans": "aeh.analysis._spans",
    "CHANGED_STEP": "aeh.analysis._trajectory_diff",
    "ONLY_A_STEP": "aeh.analysis._trajectory_diff",
    "ONLY_B_STEP": "aeh.analysis._trajectory_diff",
    "SAME_STEP": "aeh.analysis._trajectory_diff",
    "AlignedStep": "aeh.analysis._trajectory_diff",
    "Step": "aeh.analysis._trajectory_diff",
    "TrajectoryDiff": "aeh.analysis._trajectory_diff",
    "align_steps": "aeh.analysis._trajectory_diff",
    "diff_attempts": "aeh.analysis._trajectory_diff",
    "trajectory_diff": "aeh.analysis._trajectory_diff",
    "CANNOT_JUDGE": "aeh.analysis._validity",
    "MIN_SHARED_TASKS": "aeh.analysis._validity",
    "CannotJudgeError": "aeh.analysis._validity",
    "Refusal": "aeh.analysis._validity",
    "cannot_judge_text": "aeh.analysis._validity",
    "verdict_differences": "aeh.analysis._verdicts",
}

__getattr__ = lazy_getattr(__name__, _LAZY, cache=True)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "BUCKET_ABBREVIATIONS",
    "BUCKET_LEGEND",
    "CANNOT_JUDGE",
    "CHANGED_STEP",
    "DRIFTING",
    "HARNESS_ERROR_LIMIT",
    "MIN_SHARED_TASKS",
    "NOT_ENOUGH_RUNS",
    "ONLY_A_STEP",
    "ONLY_B_STEP",
    "SAME_STEP",
    "SUITE_ROW",
    "AgreementResult",
    "AlignedStep",
    "Baseline",
    "BaselineMismatchError",
    "CannotJudgeError",
    "CompareResult",
    "CompareVerdict",
    "DriftResult",
    "FailUnder",
    "GateResult",
    "JudgedRunSummary",
    "MatrixResult",
    "MinimumDetectable",
    "PassKResult",
    "Refusal",
    "ResumeNote",
    "RunResult",
    "ScorecardPage",
    "ScoresResult",
    "Step",
    "SuiteRate",
    "TrajectoryDiff",
    "agreement",
    "align_steps",
    "attempts",
    "build_baseline",
    "cannot_judge_text",
    "diff_attempts",
    "compare",
    "drift",
    "evaluation_cost_text",
    "format_matrix",
    "format_run_table",
    "gate",
    "judge_run",
    "judge_run_async",
    "judge_verdicts_text",
    "load_baseline",
    "load_run",
    "matrix",
    "pass_k",
    "power",
    "recovery_by_fault",
    "resumed",
    "with_fail_under",
    "run_table",
    "runs",
    "save_baseline",
    "score_run",
    "scorecard_page",
    "scores",
    "span_attributes",
    "spans",
    "suite_interval_text",
    "trajectory_diff",
    "validate_baseline",
    "verdict_differences",
    "task_weighted",
    "weighted_overall",
    "within_task_sd",
]
