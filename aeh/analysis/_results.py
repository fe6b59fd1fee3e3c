"""What the front-door calls return: pandas DataFrames that carry typed, read-only fields.

`aeh.run`, `aeh.load_run`, `aeh.compare`, `aeh.drift`, `aeh.agreement`, `aeh.matrix`,
`aeh.scores` and `aeh.pass_k` return one of these (`aeh.gate` its `GateResult`, alike). Each is
the per-row table itself (`isinstance(r, pd.DataFrame)`) and holds the verdict, reasons, figures
and warnings as typed fields (`r.run_id`, `r.suite_rate`, `r.verdict`): a renamed or missing
field is an AttributeError (and a type error under mypy) where a key of `DataFrame.attrs` read
with `.get(..., default)` quietly blanked a report section. How the fields live through slicing,
concat, copies and pickling: `aeh.analysis._result_frame`.

In a notebook each renders itself (`_repr_html_`): a short header with the verdict, figures and
warnings, then the table; `print(result)` is the CLI's text. `result.table` is the rows as a
plain DataFrame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

from aeh._util.figure import UNPRICED, figure, money
from aeh.analysis._result_frame import ResultFrame
from aeh.errors import HARNESS_ERROR_LIMIT
from aeh.models import RunInfo

if TYPE_CHECKING:
    from aeh.analysis._validity import Refusal

__all__ = [
    "BUCKET_ABBREVIATIONS",
    "BUCKET_LEGEND",
    "AgreementResult",
    "CompareResult",
    "CompareVerdict",
    "DriftResult",
    "FailUnder",
    "MatrixResult",
    "MinimumDetectable",
    "PassKResult",
    "ResultFrame",
    "ResumeNote",
    "RunResult",
    "ScoresResult",
    "SuiteRate",
    "header_html",
    "resumed",
    "evaluation_cost_text",
    "format_run_table",
    "judge_verdicts_text",
    "suite_interval_text",
    "with_fail_under",
]



def header_html(title: str, verdict: str | None, figures: list[tuple[str, str]], warnings: list[str],
                reasons: list[str] | None = None) -> str:
    """The header every result shows above its table: title, verdict, figures, warnings."""
    parts = [f"<div class='aeh-result'><b>{escape(title)}</b>"]
    if verdict is not None:
        parts.append(f"<div class='aeh-verdict' data-verdict='{escape(verdict)}'>verdict: <b>{escape(verdict)}</b>"
                     "</div>")
    parts += [f"<div class='aeh-reason'>{escape(r)}</div>" for r in reasons or []]
    if figures:
        parts.append(" · ".join(f"{escape(k)} {escape(v)}" for k, v in figures))
    parts += [f"<div class='aeh-warning'>⚠ {escape(w)}</div>" for w in warnings]
    return "".join(parts) + "</div>"


@dataclass(frozen=True)
class SuiteRate:
    """A suite rate: the mean of per-task rates, with its 95% interval (nan without tasks)."""

    rate: float
    low: float
    high: float


@dataclass(frozen=True)
class ResumeNote:
    """What a resumed run did: attempts run now and stored before."""

    ran: int
    stored_before: int
    note: str


class RunResult(ResultFrame):
    """One run: one row per task, with the suite summary, cost, checks and warnings as fields."""

    run_id: str
    run: RunInfo
    suite_rate: float
    suite_low: float
    suite_high: float
    suite_se: float
    suite_rate_method: str
    n_tasks: int
    attempts_total: int
    harness_errors: int
    harness_error_rate: float
    #: harness errors above the limit: the run is not a valid measurement
    invalid_measurement: bool
    warnings: list[str] = field(default_factory=list)
    #: the run's live checks as stored at run end (faults, tool probe, judge verdicts, time split)
    live_checks: dict[str, Any] = field(default_factory=dict)
    faults_planned_rate: float | None = None
    faults_injected: int | None = None
    tool_calls: int | None = None
    judge_verdicts: dict[str, Any] | None = None
    #: agent / queue / grading seconds
    time_split_s: dict[str, float] | None = None
    harness_health: dict[str, Any] | None = None
    #: `[{"cause", "attempts"}]`, most common first
    harness_error_causes: list[dict[str, Any]] = field(default_factory=list)
    priced: bool = True
    total_cost_usd: float | None = None
    cost_per_success_usd: float | None = None
    evaluation_spend: dict[str, Any] | None = None
    evaluation_cost_usd: float | None = None
    run_cost_usd: float | None = None
    price_table_version: str | None = None
    price_table_date: str | None = None
    #: how an imported run's source results were counted
    import_policy: str | None = None
    #: set when the call resumed a stored run
    resume: ResumeNote | None = None
    #: set when the run was given `fail_under=RATE`
    fail_under: FailUnder | None = None

    @property
    def suite(self) -> SuiteRate:
        return SuiteRate(self.suite_rate, self.suite_low, self.suite_high)

    @property
    def verdict(self) -> str:
        """"not a valid measurement" above the harness-error limit, else "valid measurement"."""
        return "not a valid measurement" if self.invalid_measurement else "valid measurement"

    def _header(self) -> str:
        figures = [("suite rate", f"{figure(self.suite_rate, '{:.3f}')} [{figure(self.suite_low, '{:.3f}')}, "
                                  f"{figure(self.suite_high, '{:.3f}')}] over {self.n_tasks} tasks"),
                   ("harness errors", f"{self.harness_errors}/{self.attempts_total}"),
                   ("cost", money(self.total_cost_usd) if self.priced else UNPRICED)]
        return header_html(f"run {self.run_id} · {self.run.suite}", self.verdict, figures, self.warnings)

    def _text(self) -> str:
        return format_run_table(self)


@dataclass(frozen=True)
class FailUnder:
    """The `--fail-under` gate: did the suite success rate reach the threshold?"""

    rate: float
    threshold: float
    met: bool


def with_fail_under(result: RunResult, threshold: float) -> RunResult:
    """`result` with the verdict of `fail_under=threshold` on its suite rate."""
    rate = result.suite_rate if result.suite_rate == result.suite_rate else 0.0  # nan: nothing succeeded
    return result.with_fields(fail_under=FailUnder(rate, threshold, rate >= threshold))


def resumed(result: RunResult, stored_before: int, *, already_finished: bool = False) -> RunResult:
    """`result` with the note of the resume that produced it (`aeh.run(resume=...)`)."""
    if already_finished:
        note = ResumeNote(0, stored_before, f"run {result.run_id} is already finished — nothing to resume")
    else:
        ran = result.attempts_total - stored_before
        note = ResumeNote(ran, stored_before, f"resumed run {result.run_id}: {stored_before} attempts were "
                                              f"stored, {ran} ran now")
    return result.with_fields(resume=note)


@dataclass(frozen=True)
class MinimumDetectable:
    """The per-task drop the comparison could detect at its attempts and tasks."""

    drop: float
    n: int
    base_rate: float
    n_tasks: int
    power: float
    lone_task_flaggable: bool
    text: str


@dataclass(frozen=True)
class CompareVerdict:
    """The two-level regression verdict: per task (BH) and the paired suite row."""

    #: "regressed", "no regression" or "cannot judge"
    status: str
    #: None when the comparison cannot judge
    regressed: bool | None
    headline: str
    reasons: list[str]
    #: why there is no verdict; empty when there is one
    cannot_judge: list[Refusal]
    task_level: list[str]
    suite_level: bool
    fdr: float
    suite_alpha: float
    mde: MinimumDetectable | None


class CompareResult(ResultFrame):
    """`compare(run_a, run_b)`: one row per task and a `<suite>` row, the verdict and warnings."""

    _renamed_attrs: ClassVar[dict[str, str]] = {"regressed": "regressed_tasks", "improved": "improved_tasks"}

    run_a: str
    run_b: str
    run_a_info: RunInfo
    run_b_info: RunInfo
    fdr: float
    method: str
    verdict: CompareVerdict
    warnings: list[str]
    regressed_tasks: list[str]
    improved_tasks: list[str]
    #: 100% in A and below 100% in B
    newly_failing: list[str]
    #: each run's own suite rate (over all its tasks)
    suite_a: SuiteRate
    suite_b: SuiteRate
    #: tasks the paired suite row leaves out: only_in_a, only_in_b, no_valid_attempts
    suite_dropped: dict[str, list[str]]
    suite_dropped_note: str

    def _earlier_attr(self, key: Any) -> tuple[str, Any] | None:
        found = super()._earlier_attr(key)
        if found is not None and found[0] in ("suite_a", "suite_b"):  # SuiteRate's names were suite_*
            rate: SuiteRate = getattr(self, found[0])
            return found[0], {"suite_rate": rate.rate, "suite_low": rate.low, "suite_high": rate.high}
        return found

    def _header(self) -> str:
        suite = self[self["task_id"] == "<suite>"]
        delta = suite["delta"].iloc[0] if len(suite) else math.nan
        figures = [("paired suite delta", figure(delta, "{:+.3f}")),
                   ("regressed tasks", ", ".join(self.regressed_tasks) or "none")]
        return header_html(f"B = {self.run_b} vs baseline A = {self.run_a}", self.verdict.status, figures,
                           self.warnings, self.verdict.reasons)

    def _text(self) -> str:
        lines = [f"B = {self.run_b} vs baseline A = {self.run_a}: {self.verdict.headline}"]
        lines += [f"  {r}" for r in self.verdict.reasons] + [f"WARNING: {w}" for w in self.warnings]
        return "\n".join(lines + ["", str(self.table.to_string(index=False))])


class DriftResult(ResultFrame):
    """`drift(suite)`: one row per run in the window (oldest first), the trend and its verdict."""

    suite: str | None
    window: int
    threshold: float
    slope: float
    slope_se: float
    slope_low: float
    slope_high: float
    p_value: float
    cumulative: float
    #: "drifting", "no significant drift", "not enough runs to judge" or "cannot judge"
    status: str
    drifting: bool
    mixed: list[str]
    cannot_judge: list[Refusal]
    method: str
    notes: list[str]
    #: the same trend per trajectory dimension (empty without dimensions)
    dimensions: pd.DataFrame
    dimension_threshold: float
    dimension_method: str
    drifting_dimensions: list[str]

    def _header(self) -> str:
        figures = [("trend per run", figure(self.slope, "{:+.3f}")),
                   ("95% CI", f"[{figure(self.slope_low, '{:+.3f}')}, {figure(self.slope_high, '{:+.3f}')}]"),
                   ("change over the window", figure(self.cumulative, "{:+.3f}"))]
        return header_html(f"drift of {self.suite} over {len(self.table)} runs", self.status, figures,
                           self.notes, [str(r) for r in self.cannot_judge])

    def _text(self) -> str:
        # _validity reads the harness-error limit from the run table, which builds these results
        from aeh.analysis._validity import CANNOT_JUDGE, cannot_judge_text

        lines = [f"drift of {self.suite}: {self.status}"]
        if self.status == CANNOT_JUDGE:
            lines.append(cannot_judge_text(None, self.cannot_judge))
        lines += [f"trend {figure(self.slope, '{:+.3f}')} per run (95% CI [{figure(self.slope_low, '{:+.3f}')}, "
                  f"{figure(self.slope_high, '{:+.3f}')}]); change over the window "
                  f"{figure(self.cumulative, '{:+.3f}')}"]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines + ["", str(self.table.to_string(index=False))])


class AgreementResult(ResultFrame):
    """`agreement(run_id)`: κ per rater against the programmatic graders, and the judge's verdicts."""

    #: κ at or above which a rater is trusted
    threshold: float
    #: fewer paired verdicts than this and κ is "not enough data"
    min_n: int
    #: judge verdicts attempted, valid, failed (by reason), unparseable, automatic
    judge_verdicts: dict[str, Any]
    table_orientation: str

    @property
    def verdict(self) -> str:
        """"trusted" when every rater with enough data is, "not trusted" or "not enough data"."""
        rows = self[self["enough_data"]] if len(self) else self
        if not len(rows):
            return "not enough data"
        return "trusted" if bool(rows["trusted"].all()) else "not trusted"

    def _header(self) -> str:
        figures = [(f"κ {r.rater}", f"{figure(r.kappa, '{:.3f}')} (n = {r.n})") for r in self.itertuples()]
        return header_html("judge agreement", self.verdict, figures, [])

    def _text(self) -> str:
        return f"judge agreement: {self.verdict}\n\n" + str(self.table.to_string(index=False))


class MatrixResult(ResultFrame):
    """`matrix(run_ids)`: one row per solver label, and what could not be computed."""

    #: what could not be computed and why (no floor, partial cost …)
    warnings: list[str]
    run_ids: list[str]
    #: the labels of the noop floor and the reference ceiling, when the matrix has them
    floor: str | None
    ceiling: str | None

    def _header(self) -> str:
        return header_html(f"solver matrix over {len(self.run_ids)} runs", None,
                           [("floor", str(self.floor)), ("ceiling", str(self.ceiling))], self.warnings)

    def _text(self) -> str:
        return "\n".join([*(f"WARNING: {w}" for w in self.warnings), str(self.table.to_string(index=False))])


class ScoresResult(ResultFrame):
    """`scores(run_id)`: one row per attempt × dimension, with the summaries the report reads."""

    run_id: str
    #: per task × dimension: mean, sd, n
    tasks: pd.DataFrame
    #: per dimension: mean, sd, n
    suite: pd.DataFrame
    #: the suite's task weights (task → weight) as the run recorded them; empty when unweighted
    task_weights: dict[str, float] = field(default_factory=dict)

    def _header(self) -> str:
        means = ([(str(r.dimension), figure(r.mean, '{:.3f}')) for r in self.suite.itertuples()]
                 if len(self.suite) else [])
        return header_html(f"trajectory scores of run {self.run_id}", None, means, [])

    def _text(self) -> str:
        return f"trajectory scores of run {self.run_id}\n\n" + str(self.suite.to_string(index=False))


class PassKResult(ResultFrame):
    """`pass_k(run_id)`: pass^k and pass@k per task and k, and the suite rows over one task set."""

    run_id: str
    #: the tasks every suite row averages (those with n ≥ the largest suite k)
    suite_tasks: list[str]
    note: str

    def _header(self) -> str:
        return header_html(f"pass^k of run {self.run_id}", None, [("suite tasks", str(len(self.suite_tasks)))],
                           [], [self.note] if self.note else [])

    def _text(self) -> str:
        return f"{self.note}\n\n" + str(self.table.to_string(index=False))


# Plain-text rendering for the terminal (print(result) is the CLI's text).

#: Short names for the compact failure column (`wa:2 te:1`) of the CLI table and the report.
BUCKET_ABBREVIATIONS = {"tool_error": "te", "malformed_tool_call": "mtc", "hallucinated_tool": "ht",
                        "budget_exhausted": "be", "judge_unparseable": "ju", "wrong_answer": "wa",
                        "no_answer": "na", "refusal": "ref"}

#: The key to those short names, as the CLI prints it under the table.
BUCKET_LEGEND = " · ".join(f"{short} {bucket}" for bucket, short in BUCKET_ABBREVIATIONS.items())


def suite_interval_text(result: RunResult) -> str:
    """`95% CI [0.412, 0.655]`, or why there is none: a suite interval needs tasks to spread across."""
    low, high, n_tasks = result.suite_low, result.suite_high, result.n_tasks
    if n_tasks < 2 or math.isnan(low) or math.isnan(high):
        return f"no interval with {'one task' if n_tasks == 1 else f'{n_tasks} tasks'} (a suite interval needs ≥ 2)"
    return f"95% CI [{low:.3f}, {high:.3f}]"


def judge_verdicts_text(judge: dict[str, object]) -> str:
    """`12 attempted, 10 valid, 1 failed (timeout 1), 1 unparseable (…), 0 automatic`."""
    reasons = ", ".join(f"{k} {v}" for k, v in (judge.get("failed_by_reason") or {}).items())  # type: ignore[attr-defined]
    text = (f"{judge.get('attempted', 0)} attempted, {judge.get('valid', 0)} valid, "
            f"{judge.get('failed', 0)} failed" + (f" ({reasons})" if reasons else ""))
    shadow = int(judge.get("shadow_unparseable") or 0)  # type: ignore[call-overload]
    deciding = int(judge.get("unparseable") or 0) - shadow  # type: ignore[call-overload]
    if deciding:
        text += (f", {deciding} unparseable (the agent's answer derailed the judge: counted as "
                 "not passed, bucket judge_unparseable, flagged for review)")
    if shadow:
        text += (f", {shadow} shadow verdicts unparseable (left out of agreement; the attempts keep "
                 "their graders' verdicts, not flagged)")
    return text + f", {judge.get('automatic', 0)} automatic"


def evaluation_cost_text(result: RunResult) -> str | None:
    """`evaluation $0.0006 (12 judge calls: judge grader 10, …), run total $0.1911`, or None when
    the run made no evaluation model call."""
    spend: dict[str, Any] | None = result.evaluation_spend
    if not spend or not spend.get("calls"):
        return None
    purposes = ", ".join(f"{k} {v}" for k, v in (spend.get("by_purpose") or {}).items())
    calls = f"{spend['calls']} judge call{'s' if spend['calls'] != 1 else ''}" + (f": {purposes}" if purposes else "")
    if spend.get("usd") is None:
        return (f"evaluation unpriced ({calls}; {spend.get('unpriced_calls', 0)} with a judge model missing "
                "from the price table)")
    total = result.run_cost_usd
    return (f"evaluation {money(spend['usd'])} ({calls}), run total "
            + (money(total) if total is not None else "unknown (the agent's cost is unpriced)"))


def format_run_table(result: RunResult) -> str:
    """The per-task table, the suite line, harness errors and the run id."""
    a, table = result, result.table
    cur = a.run.config.currency
    lines = [f"⚠ {w}" for w in a.warnings] + ([""] if a.warnings else [])
    lines.append(f"{'task':<34} {'n':>3} {'k':>3} {'rate':>5}  {'wilson 95%':<13} {'clean':>5} "
                 f"{'h.err':>5} {'cost/attempt':>12} {'cost/succ':>10} {'p50 s':>6}  failures")
    for row in table.itertuples(index=False):
        interval = f"[{row.low:.2f}, {row.high:.2f}]" if row.n else "—"
        rate = f"{row.rate:.2f}" if row.n else "—"
        failures = getattr(row, "failures", "") or ("—" if row.n == row.successes else "")
        lines.append(
            f"{row.task_id:<34} {row.n:>3} {row.successes:>3} {rate:>5}  {interval:<13} "
            f"{row.clean_successes:>5} {row.harness_errors:>5} {money(row.cost_per_attempt_usd, cur):>12} "
            f"{money(row.cost_per_success_usd, cur):>10} {row.latency_p50_s:>6.2f}  {failures}"
        )
    if "failures" in table.columns and any(table["failures"]):
        lines.append(f"failures: {BUCKET_LEGEND}")
    lines.append("")
    if a.n_tasks == 1:
        # No spread across tasks to build a suite interval from: show the task's own Wilson interval.
        only = table[table["n"] > 0].iloc[0]
        lines.append(
            f"suite rate {a.suite_rate:.3f} over 1 task — a suite interval needs ≥ 2 tasks; "
            f"the task's Wilson 95% CI [{only['low']:.3f}, {only['high']:.3f}] (n = {only['n']})"
        )
    elif a.n_tasks:
        lines.append(
            f"suite rate {a.suite_rate:.3f}  95% CI [{a.suite_low:.3f}, {a.suite_high:.3f}] "
            f"over {a.n_tasks} tasks — {a.suite_rate_method}"
        )
    per_success = (money(a.cost_per_success_usd, cur) if a.cost_per_success_usd is not None
                   else "— (no success)")
    unpriced = "unpriced (a model missing from the price table, or an agent that reported no model usage)"
    cost = unpriced if not a.priced else (
        f"total {money(a.total_cost_usd, cur)}, per success {per_success}")
    if cur != "USD":
        cost = f"{cost} (in {cur})"
    evaluation = evaluation_cost_text(a)
    if evaluation:  # the harness's spend beside the agent's, never inside its cost per success
        cost = f"{cost} (agent) · {evaluation}"
    lines.append(f"cost {cost} — price table {a.price_table_version} ({a.price_table_date})")
    errors = f"harness errors {a.harness_errors}/{a.attempts_total}"
    if a.invalid_measurement:
        errors += f" ({a.harness_error_rate:.1%} > {HARNESS_ERROR_LIMIT:.0%}): NOT A VALID MEASUREMENT"
    causes = a.harness_error_causes
    if causes:
        top = causes[0]
        errors += (
            f" — most common cause: {top['cause']} ({top['attempts']} attempt{'s' if top['attempts'] != 1 else ''})"
        )
        if len(causes) > 1:
            errors += f"; {len(causes) - 1} other cause{'s' if len(causes) > 2 else ''}"
    lines.append(errors)
    split = a.time_split_s
    if split:
        lines.append(f"time: agent {split.get('agent', 0):.2f} s (model + tools; latency columns and "
                     f"budgets), queued {split.get('queue', 0):.2f} s, grading {split.get('grading', 0):.2f} s")
    if a.faults_planned_rate:
        lines.append(f"faults: planned rate {a.faults_planned_rate:g}, injected {a.faults_injected or 0} "
                     f"over {a.tool_calls or 0} tool calls")
    judge = a.judge_verdicts or {}
    if judge.get("attempted") or judge.get("automatic"):
        lines.append(f"judge verdicts: {judge_verdicts_text(judge)}")
    if a.import_policy:
        lines.append(f"import policy: {a.import_policy}")
    lines.append(f"run id {a.run_id}")
    return "\n".join(lines)
