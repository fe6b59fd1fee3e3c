"""DataFrame builders over the store: polars inside, pandas at the public edge."""

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
    weighted_overall,
)
from aeh.analysis._drift import DRIFTING, NOT_ENOUGH_RUNS, drift
from aeh.analysis._format import (
    BUCKET_ABBREVIATIONS,
    BUCKET_LEGEND,
    evaluation_cost_text,
    format_run_table,
    judge_verdicts_text,
    suite_interval_text,
)
from aeh.analysis._judged import JudgedRunSummary, judge_run, judge_run_async
from aeh.analysis._matrix import format_matrix, matrix
from aeh.analysis._power import power
from aeh.analysis._read import attempts, load_run, pass_k, run_table, runs
from aeh.analysis._recovery import recovery_by_fault
from aeh.analysis._results import (
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
    resumed,
    with_fail_under,
)
from aeh.analysis._run_table import HARNESS_ERROR_LIMIT
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
    "scores",
    "span_attributes",
    "spans",
    "suite_interval_text",
    "trajectory_diff",
    "validate_baseline",
    "verdict_differences",
    "weighted_overall",
]
