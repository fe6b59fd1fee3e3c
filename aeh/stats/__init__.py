"""Statistics for aeh: rates and intervals, regression tests, agreement, power, calibration.

Each name is imported from its module on first use (module `__getattr__`): a run's Wilson
intervals do not load agreement's, calibration's or power's modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aeh._util.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    # one unwrapped line a module, so these imports read as the `_NAMES` table below does
    # isort: off
    from aeh.stats._agreement import KAPPA_TRUST_THRESHOLD, Agreement, cohens_kappa
    from aeh.stats._bands import BAND_FLOOR, BAND_SIGMAS, ScoreSummary, band_drop_p, drop_p_values, noise_band
    from aeh.stats._bands import summarize_scores
    from aeh.stats._calibration import GateSimResult, SimResult, simulate_aa, simulate_drop, simulate_gate
    from aeh.stats._compare import PAIRED_DIFF_METHOD, PAIRED_DIFF_WITHIN_METHOD, SUITE_ALPHA, GateVerdict, PairedDiff
    from aeh.stats._compare import TaskComparison, TaskCounts, compare_tasks, paired_suite_difference, regression_gate
    from aeh.stats._compare import task_difference_interval, two_sample_test
    from aeh.stats._dist import wilson_confint
    from aeh.stats._drift import DRIFT_METHOD, MIN_DRIFT_RUNS, DriftTrend, drift_trend
    from aeh.stats._power import TaskMDE, attempts_for_power, minimum_detectable_drop, per_task_mde
    from aeh.stats._power import power_of_comparison, rejection_region
    from aeh.stats._rates import SUITE_RATE_DEGENERATE_METHOD, SUITE_RATE_METHOD, Rate, SuiteRate, pass_at_k
    from aeh.stats._rates import pass_hat_k, pass_k_table, rate, suite_rate, wilson_interval
    # isort: on

_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.stats._agreement": ("KAPPA_TRUST_THRESHOLD", "Agreement", "cohens_kappa"),
    "aeh.stats._bands": ("BAND_FLOOR", "BAND_SIGMAS", "ScoreSummary", "band_drop_p", "drop_p_values", "noise_band",
                         "summarize_scores"),
    "aeh.stats._calibration": ("GateSimResult", "SimResult", "simulate_aa", "simulate_drop", "simulate_gate"),
    "aeh.stats._compare": ("PAIRED_DIFF_METHOD", "PAIRED_DIFF_WITHIN_METHOD", "SUITE_ALPHA", "GateVerdict",
                           "PairedDiff", "TaskComparison", "TaskCounts", "compare_tasks", "paired_suite_difference",
                           "regression_gate", "task_difference_interval", "two_sample_test"),
    "aeh.stats._dist": ("wilson_confint",),
    "aeh.stats._drift": ("DRIFT_METHOD", "MIN_DRIFT_RUNS", "DriftTrend", "drift_trend"),
    "aeh.stats._power": ("TaskMDE", "attempts_for_power", "minimum_detectable_drop", "per_task_mde",
                         "power_of_comparison", "rejection_region"),
    "aeh.stats._rates": ("SUITE_RATE_DEGENERATE_METHOD", "SUITE_RATE_METHOD", "Rate", "SuiteRate", "pass_at_k",
                         "pass_hat_k", "pass_k_table", "rate", "suite_rate", "wilson_interval"),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES, cache=True)


def __dir__() -> list[str]:
    return list(__all__)
