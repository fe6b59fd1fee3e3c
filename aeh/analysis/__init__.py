"""DataFrame builders over the store: polars inside, pandas at the public edge."""

from aeh.analysis._agreement import agreement
from aeh.analysis._baseline import Baseline, validate_baseline
from aeh.analysis._compare import SUITE_ROW, compare
from aeh.analysis._drift import drift
from aeh.analysis._format import format_run_table
from aeh.analysis._judged import JudgedRunSummary, judge_run, judge_run_async
from aeh.analysis._matrix import matrix
from aeh.analysis._power import power
from aeh.analysis._read import attempts, load_run, pass_k, run_table, runs
from aeh.analysis._recovery import recovery_by_fault
from aeh.analysis._results import (
    AgreementResult,
    CompareResult,
    CompareVerdict,
    DriftResult,
    MatrixResult,
    MinimumDetectable,
    PassKResult,
    ResumeNote,
    RunResult,
    ScoresResult,
    SuiteRate,
    resumed,
)
from aeh.analysis._run_table import HARNESS_ERROR_LIMIT
from aeh.analysis._spans import span_attributes, spans
from aeh.analysis._trajectory import (
    BaselineMismatchError,
    GateResult,
    build_baseline,
    gate,
    load_baseline,
    save_baseline,
    score_run,
    scores,
)
from aeh.analysis._validity import CANNOT_JUDGE, MIN_SHARED_TASKS, CannotJudgeError, Refusal
from aeh.analysis._verdicts import verdict_differences

__all__ = ["CANNOT_JUDGE", "HARNESS_ERROR_LIMIT", "MIN_SHARED_TASKS", "SUITE_ROW", "AgreementResult", "Baseline",
           "BaselineMismatchError", "CannotJudgeError", "CompareResult", "CompareVerdict", "DriftResult",
           "GateResult", "JudgedRunSummary", "MatrixResult", "MinimumDetectable", "PassKResult", "Refusal",
           "ResumeNote", "RunResult", "ScoresResult", "SuiteRate", "agreement",
           "attempts", "build_baseline", "compare", "drift", "format_run_table", "gate", "judge_run", "judge_run_async",
           "load_baseline", "load_run", "matrix",
           "pass_k", "power", "recovery_by_fault", "resumed", "run_table", "runs", "save_baseline", "score_run",
           "scores",
           "span_attributes", "spans", "validate_baseline", "verdict_differences"]
