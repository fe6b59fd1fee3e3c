"""The gate: a run against a committed baseline, each trajectory dimension against its own measured
noise band, beside the family rules it applies (`_gate_family`) and the success-rate gate of
`aeh compare`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from aeh.analysis._baseline import (
    Baseline,
    BaselineSummaries,
    BaselineSummary,
    load_baseline,
    validate_baseline,
)
from aeh.analysis._dimensions import (
    OVERALL,
    _load_suite_for,
    _success_counts,
    _summaries,
    score_run,
    task_weighted,
)
from aeh.analysis._gate_family import SUITE_FAMILY_ALPHA, NewlyFailing, family_q, suite_family_q
from aeh.analysis._result_frame import ResultFrame
from aeh.analysis._results import header_html
from aeh.analysis._validity import (
    CANNOT_JUDGE,
    MIN_SHARED_TASKS,
    Refusal,
    cannot_judge_markdown,
    cannot_judge_text,
    check_range,
    measurement,
    measurement_refusals,
    overlap_refusals,
)
from aeh.errors import ConfigError, ExitCode
from aeh.grading import DEFAULT_PROFILE
from aeh.models import Task
from aeh.stats import (
    ScoreSummary,
    TaskCounts,
    band_drop_p,
    drop_p_values,
    noise_band,
    regression_gate,
    two_sample_test,
)
from aeh.store import StoreLike, using_store
from aeh.suite import EvalSuite

__all__ = [
    "DEFAULT_OVERALL_THRESHOLD",
    "DEFAULT_THRESHOLD",
    "GATE_SUCCESS_SUITE_ALPHA",
    "BaselineMismatchError",
    "GateFinding",
    "GateResult",
    "NewlyFailing",
    "gate",
    "gate_frame",
    "gate_summaries",
]

DEFAULT_THRESHOLD = 0.05
DEFAULT_OVERALL_THRESHOLD = 0.03
#: The gate is the union of three rules (suite bands, the per-task family, the success-rate
#: gate), so its success-rate part runs the paired suite test at 97.5%, not `aeh compare`'s 95%:
#: each rule spends part of one 5% false-alarm budget (benchmarks/gate_dimensions.py,
#: docs/trajectory.md).
GATE_SUCCESS_SUITE_ALPHA = 0.025


class BaselineMismatchError(ConfigError):
    """The baseline was recorded on a different suite: its scores are not comparable."""

    exit_code = ExitCode.BASELINE_MISMATCH  # of `aeh gate`


@dataclass(frozen=True)
class GateFinding:
    """One dimension (or `overall`) of the suite or of one task: baseline vs candidate.

    A task's finding also carries the one-sided p-value of its drop and its q-value over the
    gate's whole family of per-task tests; `significant` is q < the family's level. A suite
    finding carries the normal p-value of its drop over the band's σ and its Holm-adjusted value
    over the suite's checks (`SUITE_FAMILY_ALPHA`).
    """

    task_id: str | None
    dimension: str
    base: float
    new: float
    band: float
    threshold: float
    p: float = math.nan
    q: float = math.nan
    significant: bool = True

    @property
    def delta(self) -> float:
        return self.new - self.base

    @property
    def cleared_band(self) -> bool:
        """The drop exceeds its threshold and its band (the rule as designed, before the family)."""
        return -self.delta > self.threshold and -self.delta > self.band

    @property
    def regressed(self) -> bool:
        return self.cleared_band and self.significant

    def mark(self, family: int) -> str:
        """The suite line's verdict word: a band cleared by a drop the family does not uphold says so."""
        if self.regressed:
            return "REGRESSION"
        if self.cleared_band:
            return f"noise (band cleared, Holm p {self.q:.3f} over {family} suite checks)"
        return "noise" if self.delta < 0 else "ok"


class GateResult(ResultFrame):
    """`gate(baseline, run)`: the findings per dimension (suite and task), the verdict and why.

    One row per finding (suite rows have no task_id): base, new, delta, band, p, q, regressed; in
    a notebook it renders as a header with the verdict, then those rows; `str()` is the gate's
    terminal text.
    """

    _rows_from_fields = True

    baseline: BaselineSummaries
    run_id: str
    suite: list[GateFinding]
    tasks: list[GateFinding]
    success_verdict: Any
    reasons: list[str] = field(default_factory=list)
    #: Why there is no verdict (`aeh.analysis._validity`): when non-empty the gate cannot judge.
    cannot_judge: list[Refusal] = field(default_factory=list)
    #: the newly failing tasks with their overall score change and worst dimension
    failing: list[NewlyFailing] = field(default_factory=list)
    #: level and size of the per-task family (task × dimension bands + newly-failing tests)
    family_alpha: float = math.nan
    family_size: int = 0
    #: task bands left untested: the baseline (saved before) has no per-attempt scores
    untested_bands: int = 0
    #: the suite's task weights (task → weight) as the run recorded them; empty when unweighted
    task_weights: dict[str, float] = field(default_factory=dict)
    #: per task, (baseline, run) overall mean, for the task-weighted overall
    task_overall: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: the scoring profile both sides were scored with (the baseline's)
    scoring: str = DEFAULT_PROFILE
    #: per dimension (and overall), (baseline, run) task-weighted means as agent-eval-harness prints them
    weighted: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: what the reader should know about how the figures were made (optimal step counts …)
    notes: list[str] = field(default_factory=list)

    def weighted_overall(self) -> tuple[float, float] | None:
        """(baseline, run) Σ weight × task overall / Σ weight over the tasks both scored (a task
        without a weight counts 1); None when the suite has no task weights. Shown beside the
        unweighted overall; the gate's verdict does not use it."""
        if not self.task_weights or not self.task_overall:
            return None
        pairs = [(float(self.task_weights.get(t, 1.0)), b, n) for t, (b, n) in self.task_overall.items()]
        total = sum(w for w, _, _ in pairs)
        return sum(w * b for w, b, _ in pairs) / total, sum(w * n for w, _, n in pairs) / total

    def _weighted_text(self) -> str | None:
        pair = self.weighted_overall()
        if pair is None:
            return None
        named = ", ".join(f"{t} {w:g}" for t, w in sorted(self.task_weights.items()) if w != 1) or "all 1"
        return (f"overall, task-weighted: {pair[0]:.3f} -> {pair[1]:.3f} ({pair[1] - pair[0]:+.3f}; Σ weight × "
                f"task overall / Σ weight, weights {named}, other tasks 1; shown only, the gate tests the "
                "unweighted overall)")

    def _weighted_lines(self) -> list[str]:
        """Per dimension, the task-weighted figures as agent-eval-harness prints its comparison."""
        if not self.weighted or (not self.task_weights and self.scoring == DEFAULT_PROFILE):
            return []
        lines = [f"  task-weighted per dimension, as agent-eval-harness prints them (scoring {self.scoring}; "
                 "shown only, the gate tests the figures above):"]
        for dim in [OVERALL] + sorted(d for d in self.weighted if d != OVERALL):
            if dim in self.weighted:
                b, n = self.weighted[dim]  # the delta rounded to 4 decimals first, as that harness does
                lines.append(f"    {dim:<24} {b:.3f} -> {n:.3f} ({round(n - b, 4):+.3f})")
        return lines

    @property
    def regressed(self) -> bool:
        return bool(self.reasons) and not self.cannot_judge

    @property
    def newly_failing(self) -> list[str]:
        """The names of the newly failing tasks (`failing` holds their figures)."""
        return [f.task_id for f in self.failing]

    @property
    def verdict(self) -> str:
        """"cannot judge", "regressed" or "no regression"."""
        return CANNOT_JUDGE if self.cannot_judge else "regressed" if self.regressed else "no regression"

    @property
    def regressed_dimensions(self) -> list[str]:
        return sorted({f.dimension for f in self.suite + self.tasks if f.regressed and f.dimension != OVERALL})

    @classmethod
    def _rows(cls, fields: Mapping[str, Any]) -> pd.DataFrame:
        """One row per finding (suite rows have no task_id): base, new, delta, band, p, q, regressed."""
        return pd.DataFrame(
            [{"task_id": f.task_id, "dimension": f.dimension, "base": f.base, "new": f.new, "delta": f.delta,
              "band": f.band, "threshold": f.threshold, "p": f.p, "q": f.q, "regressed": f.regressed}
             for f in [*fields["suite"], *fields["tasks"]]],
            columns=["task_id", "dimension", "base", "new", "delta", "band", "threshold", "p", "q", "regressed"])

    def _header(self) -> str:
        figures = [("newly failing", ", ".join(self.newly_failing) or "none"),
                   ("success rate", str(self.success_verdict.headline))]
        reasons = [str(r) for r in self.cannot_judge] or self.reasons
        title = f"baseline {self.baseline.run_id or '?'} vs run {self.run_id}"
        return header_html(title, self.verdict, figures, [], reasons)

    def _text(self) -> str:
        return self.text()

    def worst(self) -> tuple[str, str, float] | None:
        """(task, dimension, delta) of the worst task's worst dimension."""
        overall = [f for f in self.tasks if f.dimension == OVERALL]
        if not overall:
            return None
        task = min(overall, key=lambda f: f.delta).task_id
        dims = [f for f in self.tasks if f.task_id == task and f.dimension != OVERALL]
        if not dims:
            return None
        w = min(dims, key=lambda f: f.delta)
        return str(task), w.dimension, w.delta

    def text(self) -> str:
        if self.cannot_judge:
            return cannot_judge_text(f"baseline {self.baseline.run_id or '?'} vs run {self.run_id}",
                                     self.cannot_judge)
        lines = [f"baseline {self.baseline.run_id or '?'} vs run {self.run_id}"]
        for f in self.suite:
            lines.append(f"  {f.dimension:<18} {f.base:.3f} -> {f.new:.3f} ({f.delta:+.3f} ±{f.band:.3f})  "
                         f"{f.mark(len(self.suite))}")
        if (weighted := self._weighted_text()) is not None:
            lines.append(f"  {weighted}")
        lines += self._weighted_lines()
        hit = [f for f in self.tasks if f.regressed]
        for f in hit:
            lines.append(f"  task {f.task_id}: {f.dimension} {f.base:.3f} -> {f.new:.3f} "
                         f"({f.delta:+.3f} ±{f.band:.3f})")
        if self.failing:
            lines.append("  newly failing tasks:")
            lines += [f"    {f.line()}" for f in self.failing]
        lines.append(f"  success rate: {self.success_verdict.headline}")
        if self.untested_bands:
            lines.append(f"  note: {self.untested_bands} task bands not tested — the baseline has no per-attempt "
                         "scores; re-save it with `aeh baseline save`")
        w = self.worst()
        if w is not None and w[2] < 0:
            lines.append(f"  worst: task {w[0]}, {w[1]} {w[2]:+.3f}")
        lines += [f"  note: {n}" for n in self.notes]
        if self.regressed:
            lines.append("HARD REGRESSION: " + "; ".join(self.reasons))
        else:
            lines.append("no hard regression")
        return "\n".join(lines)

    def markdown(self) -> str:
        if self.cannot_judge:
            return cannot_judge_markdown(f"Baseline `{self.baseline.run_id or '?'}` vs run `{self.run_id}`",
                                         self.cannot_judge)
        head = "❌ **Hard regression**" if self.regressed else "✅ **No hard regression**"
        out = [f"### Trajectory gate: {head}", "",
               f"Baseline `{self.baseline.run_id or '?'}` ({self.baseline.model}) vs run "
               f"`{self.run_id}`. Bands are 2σ of the difference of means (floor 0.01); a suite drop that "
               "clears its band also needs Holm p < 0.05 over the suite's checks.", "",
               "| dimension | baseline | run | Δ | band | verdict |", "|---|---|---|---|---|---|"]
        for f in self.suite:
            verdict = "**regression**" if f.regressed else f.mark(len(self.suite)) if f.cleared_band \
                else "within noise" if f.delta < 0 else "ok"
            out.append(f"| {f.dimension} | {f.base:.3f} | {f.new:.3f} | {f.delta:+.3f} | ±{f.band:.3f} | {verdict} |")
        if (weighted := self._weighted_text()) is not None:
            out += ["", weighted[0].upper() + weighted[1:] + "."]
        hit = [f for f in self.tasks if f.regressed]
        if hit:
            out += ["", f"**Task-level regressions** (each task against its own band, Benjamini–Hochberg "
                        f"over {self.family_size} per-task tests):", ""]
            out += [f"- `{f.task_id}`: {f.dimension} {f.base:.3f} → {f.new:.3f} ({f.delta:+.3f}, band ±{f.band:.3f})"
                    for f in hit]
        if self.failing:
            out += ["", "**Newly failing tasks:**", ""] + [f"- `{f.line()}`" for f in self.failing]
        out += ["", f"**Success rate:** {self.success_verdict.headline}"]
        w = self.worst()
        if w is not None and w[2] < 0:
            out += ["", f"**Worst:** task `{w[0]}`, dimension `{w[1]}` ({w[2]:+.3f})"]
        if self.reasons:
            out += ["", "Reasons: " + "; ".join(self.reasons)]
        return "\n".join(out) + "\n"


def _summary(d: BaselineSummary | Mapping[str, Any]) -> ScoreSummary:
    """A baseline's summary (the model) or the run's (a dict of the same fields)."""
    if isinstance(d, BaselineSummary):
        return ScoreSummary(d.mean, d.sd, d.n)
    return ScoreSummary(float(d["mean"]), float(d["sd"]), int(d["n"]))


def _compare(task: str | None, base: Mapping[str, BaselineSummary], new: dict[str, Any], threshold: float,
             overall_threshold: float) -> list[GateFinding]:
    out = []
    for dim in sorted(set(base) & set(new)):
        a, b = _summary(base[dim]), _summary(new[dim])
        if a.n == 0 or b.n == 0 or math.isnan(a.mean) or math.isnan(b.mean):
            continue
        out.append(GateFinding(task, dim, a.mean, b.mean, noise_band(a, b),
                               overall_threshold if dim == OVERALL else threshold))
    return out


def _suite_family(findings: list[GateFinding], base: Mapping[str, BaselineSummary],
                  new: dict[str, Any]) -> list[GateFinding]:
    """The suite findings with their band p-values, Holm-adjusted over the suite's checks."""
    p = [band_drop_p(_summary(base[f.dimension]), _summary(new[f.dimension])) for f in findings]
    q = suite_family_q(p)
    return [replace(f, p=pf, q=qf, significant=qf < SUITE_FAMILY_ALPHA)
            for f, pf, qf in zip(findings, p, q, strict=True)]


def _with_p(findings: list[GateFinding], base: BaselineSummaries,
            new_tasks: dict[str, dict[str, Any]]) -> list[GateFinding]:
    """Each task finding with the one-sided p-value of its drop. A baseline saved without the
    per-attempt scores (before they were kept) leaves its task findings untested (p nan)."""
    a = [base.tasks[str(f.task_id)].dimensions[f.dimension].scores or [] for f in findings]
    b = [new_tasks[str(f.task_id)][f.dimension].get("scores") or [] for f in findings]
    return [replace(f, p=p) for f, p in zip(findings, drop_p_values(a, b), strict=True)]


def gate(baseline: str | Path | dict[str, Any] | Baseline, run_id: str | None = None, db: StoreLike = None, *,
         threshold: float = DEFAULT_THRESHOLD, overall_threshold: float = DEFAULT_OVERALL_THRESHOLD,
         fdr: float = 0.05, suite: str | Path | EvalSuite | None = None, allow_unfinished: bool = False,
         min_tasks: int = MIN_SHARED_TASKS) -> GateResult:
    """Compare a run (default: the newest) against a committed baseline.

    A hard regression is: a dimension (or `overall`) of the suite dropping by more than its
    threshold *and* its noise band, upheld by Holm over the suite's checks; the same for one
    task, when its drop is also significant after Benjamini–Hochberg at `fdr` over the whole
    per-task family; a task that passed in the baseline (majority of attempts) now failing
    (majority), significant in the same family (exact test); or the success-rate gate of
    `aeh compare` run on the stored counts.
    A baseline from another suite hash raises BaselineMismatchError; a malformed baseline or an
    out-of-range threshold raises (exit 2). A run that is not a valid measurement (harness errors
    over the limit, unfinished unless `allow_unfinished`) or fewer than `min_tasks` tasks shared
    with the baseline give no verdict: `result.cannot_judge` lists why, `result.verdict` is
    "cannot judge" and `result.regressed` is False.
    """
    check_range("--threshold", threshold, 0, 1, example="--threshold 0.05")
    check_range("--overall-threshold", overall_threshold, 0, 1, example="--overall-threshold 0.03")
    check_range("--fdr", fdr, 0, 1, low_open=True, example="--fdr 0.05")
    base = (baseline if isinstance(baseline, Baseline) else validate_baseline(baseline)
            if isinstance(baseline, dict) else load_baseline(baseline))
    with using_store(db) as store:
        if run_id is None:
            run_id = store.latest_run_id()
            if run_id is None:
                raise ConfigError(f"no runs in {store.path} — run `aeh run` first or pass --run")
        full = store.resolve_run_id(run_id)
        info = store.run_info(full)
        if info.suite_hash != base.suite_hash:
            raise BaselineMismatchError(
                f"cannot judge: the baseline was recorded on suite {base.suite!r} "
                f"(hash {base.suite_hash[:12]}) but run {full[:12]} ran {info.suite!r} "
                f"(hash {info.suite_hash[:12]}): the tasks differ, so "
                "their scores are not comparable — refresh the baseline with `aeh baseline save`")
        refusals = measurement_refusals(measurement(store, full), allow_unfinished=allow_unfinished)
        scoring = base.scoring or DEFAULT_PROFILE
        learned = dict(base.learned_optimal_steps)
        frame = score_run(full, store, suite=suite, loop_n=base.loop_n,
                          optimal_steps=learned, write=False, scoring=scoring)
        counts = _success_counts(store, full)
        tasks, _ = _load_suite_for(store, full, suite)
    shared = sum(1 for t, e in base.tasks.items() if e.attempts and counts.get(t, {}).get("attempts"))
    refusals += overlap_refusals(shared, min_tasks, what="both the baseline and the run", already=refusals)
    result = gate_frame(base, frame, counts, full, threshold=threshold, overall_threshold=overall_threshold, fdr=fdr)
    weights = dict(info.config.task_weights)
    return result.with_fields(cannot_judge=refusals, task_weights=weights, scoring=scoring,
                              weighted=_weighted_pairs(base, frame, weights), notes=_optimal_step_notes(base, tasks))


def _weighted_pairs(base: BaselineSummaries, frame: pd.DataFrame,
                    weights: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Per dimension, (baseline, run) task-weighted means over the tasks both scored."""
    new_tasks, _ = _summaries(frame)
    rows = [{"side": "base", "task_id": t, "dimension": d, "mean": s.mean}
            for t, e in base.tasks.items() if t in new_tasks for d, s in e.dimensions.items()]
    rows += [{"side": "new", "task_id": t, "dimension": d, "mean": float(v["mean"])}
             for t, dims in new_tasks.items() if t in base.tasks for d, v in dims.items()]
    if not rows:
        return {}
    table = pd.DataFrame(rows)
    before = task_weighted(table[table["side"] == "base"], weights)
    after = task_weighted(table[table["side"] == "new"], weights)
    return {d: (before[d], after[d]) for d in sorted(set(before) & set(after))}


def _optimal_step_notes(base: BaselineSummaries, tasks: dict[str, Task]) -> list[str]:
    """Where step_efficiency's optimal step counts came from, said in the gate's output."""
    learned = dict(base.learned_optimal_steps)
    declared = sorted(t for t, task in tasks.items() if task.optimal_steps)
    stale = sorted(t for t in learned if t in declared)
    notes = []
    if stale:
        notes.append(f"the baseline scored step_efficiency with learned optimal steps for {len(stale)} task(s) that "
                     f"declare optimal_steps ({', '.join(stale[:5])}{', …' if len(stale) > 5 else ''}); the run is "
                     "scored with the declared counts — re-save the baseline with `aeh baseline save`")
    used = {t: n for t, n in learned.items() if t not in declared}
    if used:
        shown = ", ".join(f"{t}={n}" for t, n in sorted(used.items())[:8]) + (", …" if len(used) > 8 else "")
        notes.append(f"step_efficiency: optimal steps learned from the baseline's passing attempts for {len(used)} "
                     f"task(s) that declare none ({shown}); {len(declared)} task(s) use their declared count")
    return notes


def gate_frame(base: BaselineSummaries | Mapping[str, Any], frame: pd.DataFrame, counts: dict[str, dict[str, int]],
               run_id: str = "?", *, threshold: float = DEFAULT_THRESHOLD,
               overall_threshold: float = DEFAULT_OVERALL_THRESHOLD, fdr: float = 0.05) -> GateResult:
    """The gate on already-scored attempts (`frame`: task_id, attempt, dimension, score) and
    success counts (task → successes, attempts); `gate` and the tests share it. A dict for `base`
    is validated as `BaselineSummaries` first."""
    new_tasks, new_dims = _summaries(frame)
    return gate_summaries(base, new_tasks, new_dims, counts, run_id, threshold=threshold,
                          overall_threshold=overall_threshold, fdr=fdr)


def gate_summaries(baseline: BaselineSummaries | Mapping[str, Any], new_tasks: dict[str, dict[str, Any]],
                   new_dims: dict[str, dict[str, Any]], counts: dict[str, dict[str, int]], run_id: str = "?", *,
                   threshold: float = DEFAULT_THRESHOLD, overall_threshold: float = DEFAULT_OVERALL_THRESHOLD,
                   fdr: float = 0.05) -> GateResult:
    """The gate on the candidate's summaries (task → dimension → mean/sd/n, and per dimension),
    shaped like a baseline's; the benchmarks call it on simulated summaries. A dict for `baseline`
    is validated as `BaselineSummaries` first."""
    base = baseline if isinstance(baseline, BaselineSummaries) else BaselineSummaries.model_validate(baseline)
    suite_findings = _suite_family(_compare(None, base.dimensions, new_dims, threshold, overall_threshold),
                                   base.dimensions, new_dims)
    raw: list[GateFinding] = []
    for t, entry in sorted(base.tasks.items()):
        if t in new_tasks:
            raw += _compare(t, entry.dimensions, new_tasks[t], threshold, overall_threshold)
    raw = _with_p(raw, base, new_tasks)
    rows, candidates = [], []
    for t, entry in sorted(base.tasks.items()):
        k_a, n_a = entry.successes, entry.attempts
        c = counts.get(t)
        if c is None or n_a == 0:
            continue
        k_b, n_b = c["successes"], c["attempts"]
        rows.append(TaskCounts(t, k_a, n_a, k_b, n_b))
        if n_b:
            # every task asked "passing → failing?" is in the family; one that was not passing
            # before, or is not failing now, answers no (p = 1)
            flips = k_a / n_a >= 0.5 > k_b / n_b
            candidates.append((t, two_sample_test(k_a, n_a, k_b, n_b) if flips else 1.0))
    q = family_q([f.p for f in raw] + [p for _, p in candidates], fdr)
    task_findings = [replace(f, q=qf, significant=qf < fdr) for f, qf in zip(raw, q, strict=False)]
    failing = [_newly_failing(t, p, qt, base, new_tasks, task_findings)
               for (t, p), qt in zip(candidates, q[len(raw):], strict=True) if qt < fdr]
    verdict = regression_gate(rows, fdr=fdr, suite_alpha=GATE_SUCCESS_SUITE_ALPHA)
    reasons = []
    dims = sorted({f.dimension for f in suite_findings + task_findings if f.regressed})
    if dims:
        reasons.append("dimension(s) cleared their noise band: " + ", ".join(dims))
    if failing:
        reasons.append("previously passing task(s) now failing: " + ", ".join(str(f.task_id) for f in failing))
    if verdict.regressed:
        reasons.append("success rate: " + verdict.headline)
    task_overall = {t: (e.dimensions[OVERALL].mean, float(new_tasks[t][OVERALL]["mean"]))
                    for t, e in base.tasks.items()
                    if t in new_tasks and OVERALL in e.dimensions and OVERALL in new_tasks[t]}
    return GateResult(baseline=base, run_id=run_id, suite=suite_findings, tasks=task_findings,
                      success_verdict=verdict, reasons=reasons,
                      failing=failing, family_alpha=fdr, family_size=sum(not math.isnan(v) for v in q),
                      untested_bands=sum(base.tasks[str(f.task_id)].dimensions[f.dimension].scores is None
                                         for f in raw),
                      task_overall=task_overall)


def _newly_failing(task: str, p: float, q: float, base: BaselineSummaries, new_tasks: dict[str, dict[str, Any]],
                   findings: list[GateFinding]) -> NewlyFailing:
    summary = base.tasks[task].dimensions.get(OVERALL)
    before = summary.mean if summary is not None else math.nan
    after = new_tasks.get(task, {}).get(OVERALL, {}).get("mean", math.nan)
    own = [f for f in findings if f.task_id == task and f.dimension != OVERALL]
    worst = min(own, key=lambda f: f.delta) if own else None
    return NewlyFailing(task, float(before), float(after), worst.dimension if worst else None,
                        worst.delta if worst else math.nan, p, q)
