"""Statistics for aeh: rates and intervals, regression tests, agreement, power, calibration."""

from ._agreement import KAPPA_TRUST_THRESHOLD, Agreement, cohens_kappa
from ._drift import DRIFT_METHOD, DriftTrend, drift_trend
from ._calibration import SimResult, simulate_aa, simulate_drop
from ._compare import (
    PAIRED_DIFF_METHOD,
    PAIRED_DIFF_WITHIN_METHOD,
    PairedDiff,
    TaskComparison,
    TaskCounts,
    compare_tasks,
    paired_suite_difference,
    two_sample_test,
)
from ._power import (
    attempts_for_power,
    minimum_detectable_drop,
    power_of_comparison,
    rejection_region,
)
from ._rates import (
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

__all__ = [
    "DRIFT_METHOD",
    "DriftTrend",
    "drift_trend",
    "KAPPA_TRUST_THRESHOLD",
    "PAIRED_DIFF_METHOD",
    "PAIRED_DIFF_WITHIN_METHOD",
    "SUITE_RATE_DEGENERATE_METHOD",
    "SUITE_RATE_METHOD",
    "Agreement",
    "PairedDiff",
    "Rate",
    "SimResult",
    "SuiteRate",
    "TaskComparison",
    "TaskCounts",
    "attempts_for_power",
    "cohens_kappa",
    "compare_tasks",
    "minimum_detectable_drop",
    "paired_suite_difference",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_table",
    "power_of_comparison",
    "rate",
    "rejection_region",
    "simulate_aa",
    "simulate_drop",
    "suite_rate",
    "two_sample_test",
    "wilson_interval",
]
