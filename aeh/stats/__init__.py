"""Statistics for aeh: rates and intervals, regression tests, agreement, power, calibration.

Each name is imported from its module on first use (module `__getattr__`): a run's Wilson
intervals do not load agreement's, calibration's or power's modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aeh._util.lazy import lazy_getattr

if TYPE_CHECKING:
    from aeh.stats._agreement import KAPPA_TRUST_THRESHOLD, Agreement, cohens_kappa
    from aeh.stats._bands import (
        BAND_FLOOR,
        BAND_SIGMAS,
        ScoreSummary,
        band_drop_p,
        drop_p_values,
        noise_band,
        summarize_scores,
    )
    from aeh.stats._calibration import GateSimResult, SimResult, simulate_aa, simulate_drop, simulate_gate
    from aeh.stats._compare import (
        PAIRED_DIFF_METHOD,
        PAIRED_DIFF_WITHIN_METHOD,
        SUITE_ALPHA,
        GateVerdict,
        PairedDiff,
        TaskComparison,
        TaskCounts,
        compare_tasks,
        paired_suite_difference,
        regression_gate,
        task_difference_interval,
        two_sample_test,
    )
    from aeh.stats._dist import wilson_confint
    from aeh.stats._drift import DRIFT_METHOD, MIN_DRIFT_RUNS, DriftTrend, drift_trend
    from aeh.stats._power import (
        TaskMDE,
        attempts_for_power,
        minimum_detectable_drop,
        per_task_mde,
        power_of_comparison,
        rejection_region,
    )
    from aeh.stats._rates import (
        SUITE_RATE_DEGENERATE_METHOD,
        SUITE_RATE_METHOD,
        Rate,
        SuiteRate,
        pass_at_k,
        pass_hat_k,
        pass_k_table,
        rate,
        suite_rate,
        wilson_interval,
    )

_LAZY = {
    "MIN_DRIFT_RUNS": "aeh.stats._drift",
    "KAPPA_TRUST_THRESHOLD": "aeh.stats._agreement",
    "Agreement": "aeh.stats._agreement",
    "cohens_kappa": "aeh.stats._agreement",
    "BAND_FLOOR": "aeh.stats._bands",
    "BAND_SIGMAS": "aeh.stats._bands",
    "ScoreSummary": "aeh.stats._bands",
    "band_drop_p": "aeh.stats._bands",
    "drop_p_values": "aeh.stats._bands",
    "noise_band": "aeh.stats._bands",
    "summarize_scores": "aeh.stats._bands",
    "GateSimResult": "aeh.stats._calibration",
    "SimResult": "aeh.stats._calibration",
    "simulate_aa": "aeh.stats._calibration",
    "simulate_drop": "aeh.stats._calibration",
    "simulate_gate": "aeh.stats._calibration",
    "PAIRED_DIFF_METHOD": "aeh.stats._compare",
    "PAIRED_DIFF_WITHIN_METHOD": "aeh.stats._compare",
    "SUITE_ALPHA": "aeh.stats._compare",
    "GateVerdict": "aeh.stats._compare",
    "PairedDiff": "aeh.stats._compare",
    "TaskComparison": "aeh.stats._compare",
    "TaskCounts": "aeh.stats._compare",
    "compare_tasks": "aeh.stats._compare",
    "paired_suite_difference": "aeh.stats._compare",
    "regression_gate": "aeh.stats._compare",
    "task_difference_interval": "aeh.stats._compare",
    "two_sample_test": "aeh.stats._compare",
    "wilson_confint": "aeh.stats._dist",
    "DRIFT_METHOD": "aeh.stats._drift",
    "DriftTrend": "aeh.stats._drift",
    "drift_trend": "aeh.stats._drift",
    "TaskMDE": "aeh.stats._power",
    "attempts_for_power": "aeh.stats._power",
    "minimum_detectable_drop": "aeh.stats._power",
    "per_task_mde": "aeh.stats._power",
    "power_of_comparison": "aeh.stats._power",
    "rejection_region": "aeh.stats._power",
    "SUITE_RATE_DEGENERATE_METHOD": "aeh.stats._rates",
    "SUITE_RATE_METHOD": "aeh.stats._rates",
    "Rate": "aeh.stats._rates",
    "SuiteRate": "aeh.stats._rates",
    "pass_at_k": "aeh.stats._rates",
    "pass_hat_k": "aeh.stats._rates",
    "pass_k_table": "aeh.stats._rates",
    "rate": "aeh.stats._rates",
    "suite_rate": "aeh.stats._rates",
    "wilson_interval": "aeh.stats._rates",
}

__getattr__ = lazy_getattr(__name__, _LAZY, cache=True)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "BAND_FLOOR",
    "BAND_SIGMAS",
    "DRIFT_METHOD",
    "KAPPA_TRUST_THRESHOLD",
    "MIN_DRIFT_RUNS",
    "PAIRED_DIFF_METHOD",
    "PAIRED_DIFF_WITHIN_METHOD",
    "SUITE_ALPHA",
    "SUITE_RATE_DEGENERATE_METHOD",
    "SUITE_RATE_METHOD",
    "Agreement",
    "DriftTrend",
    "GateSimResult",
    "GateVerdict",
    "PairedDiff",
    "Rate",
    "ScoreSummary",
    "SimResult",
    "SuiteRate",
    "TaskComparison",
    "TaskCounts",
    "TaskMDE",
    "attempts_for_power",
    "cohens_kappa",
    "compare_tasks",
    "drift_trend",
    "band_drop_p",
    "drop_p_values",
    "minimum_detectable_drop",
    "noise_band",
    "paired_suite_difference",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_table",
    "per_task_mde",
    "power_of_comparison",
    "rate",
    "regression_gate",
    "rejection_region",
    "simulate_aa",
    "simulate_drop",
    "simulate_gate",
    "suite_rate",
    "summarize_scores",
    "task_difference_interval",
    "two_sample_test",
    "wilson_confint",
    "wilson_interval",
]
