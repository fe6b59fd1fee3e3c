"""The per-task half of the trajectory gate under one Benjamini–Hochberg family."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from aeh.analysis._dimensions import baseline_from_frame
from aeh.analysis._gate import GateResult, gate_frame, gate_summaries
from aeh.analysis._gate_family import NewlyFailing, family_q, suite_family_q
from aeh.stats import ScoreSummary, band_drop_p, drop_p_values

DIMS = ["error_recovery", "loop_detection", "step_efficiency", "task_completion", "tool_selection"]


def _frame(rng: np.random.Generator, trouble: np.ndarray, n: int, loopy: bool = False) -> pd.DataFrame:
    """Attempts of len(trouble) tasks: a troubled attempt scores U[0.2, 0.9] on every dimension;
    `loopy` sets loop_detection to 0.5 on every attempt."""
    rows = []
    for t, share in enumerate(trouble):
        for a in range(n):
            bad = rng.random() < share
            for d in DIMS:
                score = rng.uniform(0.2, 0.9) if bad else 1.0
                rows.append((f"t{t:02d}", a, d, 0.5 if loopy and d == "loop_detection" else score))
    return pd.DataFrame(rows, columns=["task_id", "attempt", "dimension", "score"])


def _counts(frame: pd.DataFrame) -> dict[str, dict[str, int]]:
    n = frame.groupby("task_id")["attempt"].nunique()
    return {t: {"successes": int(k), "attempts": int(k)} for t, k in n.items()}


def test_noisy_same_agent_frame_passes_though_uncorrected_bands_would_fire() -> None:
    rng = np.random.default_rng(4)
    trouble = np.linspace(0.0, 0.6, 32)
    fired_uncorrected = 0
    for _ in range(5):
        base, new = _frame(rng, trouble, 5), _frame(rng, trouble, 5)
        result = gate_frame(baseline_from_frame(base, _counts(base)), new, _counts(new))
        # the seed's per-task rule read one check at a time: threshold and band alone
        fired_uncorrected += any(-f.delta > f.threshold and -f.delta > f.band for f in result.tasks)
        assert not any(f.regressed for f in result.tasks), [f for f in result.tasks if f.regressed]
        assert result.family_size >= 32 * len(DIMS)
    assert fired_uncorrected >= 2  # what the family correction is for


def test_a_loopy_candidate_still_fails_task_by_task() -> None:
    rng = np.random.default_rng(5)
    trouble = np.linspace(0.0, 0.3, 32)
    base, new = _frame(rng, trouble, 5), _frame(rng, trouble, 5, loopy=True)
    result = gate_frame(baseline_from_frame(base, _counts(base)), new, _counts(new))
    hit = {f.task_id for f in result.tasks if f.regressed and f.dimension == "loop_detection"}
    assert result.regressed and len(hit) >= 20
    assert "loop_detection" in result.regressed_dimensions


def test_newly_failing_lists_score_change_and_worst_dimension() -> None:
    rows = []
    for a in range(10):
        for d in DIMS:
            rows.append(("steady", a, d, 1.0))
            rows.append(("unbounded_exploration", a, d, 1.0))
    base = pd.DataFrame(rows, columns=["task_id", "attempt", "dimension", "score"])
    new = base.copy()
    hit = new["task_id"] == "unbounded_exploration"
    new.loc[hit & (new["dimension"] == "loop_detection"), "score"] = 0.0
    new.loc[hit & (new["dimension"] == "task_completion"), "score"] = 0.4
    counts_a = {"steady": {"successes": 10, "attempts": 10}, "unbounded_exploration": {"successes": 10, "attempts": 10}}
    counts_b = {"steady": {"successes": 10, "attempts": 10}, "unbounded_exploration": {"successes": 0, "attempts": 10}}
    result = gate_frame(baseline_from_frame(base, counts_a), new, counts_b)
    assert result.newly_failing == ["unbounded_exploration"]
    assert result.failing[0].line() == "unbounded_exploration: 1.000 -> 0.680 (worst: loop_detection -1.000)"
    assert "    unbounded_exploration: 1.000 -> 0.680 (worst: loop_detection -1.000)" in result.text()
    assert "`unbounded_exploration: 1.000 -> 0.680 (worst: loop_detection -1.000)`" in result.markdown()


def test_newly_failing_is_corrected_over_the_family() -> None:
    # 5/5 -> 1/5 on one of 32 tasks: p ≈ 0.02 on its own, nowhere near significant among 32+ tests
    frame = pd.DataFrame([(f"t{t:02d}", a, "loop_detection", 1.0) for t in range(32) for a in range(5)],
                         columns=["task_id", "attempt", "dimension", "score"])
    counts_a = {f"t{t:02d}": {"successes": 5, "attempts": 5} for t in range(32)}
    counts_b = {**counts_a, "t00": {"successes": 1, "attempts": 5}}
    result = gate_frame(baseline_from_frame(frame, counts_a), frame, counts_b)
    assert result.newly_failing == [] and result.failing == []


def test_rank_test_p_values() -> None:
    ties, short, split = drop_p_values([[1.0] * 5, [1.0], [1.0] * 5], [[1.0] * 5, [0.0] * 5, [0.2] * 5])
    assert ties == 1.0 and math.isnan(short)
    assert split == pytest.approx(0.002, abs=5e-4)  # 5 v 5 completely separated
    # five uniformly bad attempts with a small spread are not near-certain evidence, unlike a t-test
    assert drop_p_values([[0.95, 0.96, 1.0, 0.97, 0.99]], [[0.35, 0.36, 0.4, 0.37, 0.39]])[0] > 1e-3


def test_family_q_keeps_untested_out() -> None:
    q = family_q([0.01, math.nan, 0.04], 0.05)
    assert math.isnan(q[1]) and q[0] == pytest.approx(0.02) and q[2] == pytest.approx(0.04)


def test_newly_failing_line_without_dimensions() -> None:
    assert NewlyFailing("t", 1.0, 0.5, None, math.nan, 0.0, 0.0).line() == "t: 1.000 -> 0.500"


def test_a_baseline_without_scores_says_its_task_bands_went_untested() -> None:
    frame = pd.DataFrame([("t0", a, "loop_detection", 1.0) for a in range(5)],
                         columns=["task_id", "attempt", "dimension", "score"])
    counts = {"t0": {"successes": 5, "attempts": 5}}
    base = baseline_from_frame(frame, counts)
    assert gate_frame(base, frame, counts).untested_bands == 0
    for dims in base["tasks"]["t0"]["dimensions"].values():
        del dims["scores"]  # a baseline saved before the scores were kept
    result = gate_frame(base, frame, counts)
    assert result.untested_bands == 2 and "2 task bands not tested" in result.text()


# -- the suite's own family ----------------------------------------------------------------------

SUITE_DIMS = ["budget_adherence", "error_recovery", "loop_detection", "overall", "step_efficiency",
              "task_completion", "tool_selection"]


def _suite_gate(drops_in_sigma: dict[str, float], sd: float = 0.3, n: int = 160) -> GateResult:
    """The gate on suite summaries alone: every dimension at 0.8, the named ones lower by that
    many σ of the difference of means."""
    se = math.sqrt(2 * sd ** 2 / n)
    base = {"dimensions": {d: {"mean": 0.8, "sd": sd, "n": n} for d in SUITE_DIMS}, "tasks": {}}
    new = {d: {"mean": 0.8 - drops_in_sigma.get(d, 0.0) * se, "sd": sd, "n": n} for d in SUITE_DIMS}
    return gate_summaries(base, {}, new, {})


def test_one_suite_dimension_just_past_its_band_is_not_a_regression_among_seven() -> None:
    result = _suite_gate({"step_efficiency": 2.2})
    f = next(f for f in result.suite if f.dimension == "step_efficiency")
    assert f.cleared_band and -f.delta > f.threshold  # the seed's rule alone would fire
    assert f.p == pytest.approx(0.0139, abs=1e-4)
    assert f.q == pytest.approx(7 * f.p, rel=1e-9)  # Holm: the smallest of seven p-values × 7
    assert not f.regressed and not result.regressed
    assert "noise (band cleared, Holm p 0.097 over 7 suite checks)" in result.text()


def test_a_suite_drop_far_past_its_band_still_fails_the_gate() -> None:
    result = _suite_gate({"step_efficiency": 3.5})
    assert result.regressed and result.regressed_dimensions == ["step_efficiency"]
    assert "step_efficiency" in result.reasons[0]


def test_several_dimensions_moving_together_are_upheld_by_holm_step_down() -> None:
    # Holm steps down from the smallest p-value: at 2.3σ (p 0.011 × 7 = 0.075) the first fails,
    # so none fires however many dimensions moved
    assert not _suite_gate({d: 2.3 for d in SUITE_DIMS[:4]}).regressed
    # at 2.9σ (p 0.0019 × 7 = 0.013) the first survives and the rest follow
    hit = _suite_gate({d: 2.9 for d in SUITE_DIMS[:4]})
    assert hit.regressed and {f.dimension for f in hit.suite if f.regressed} == set(SUITE_DIMS[:4])


def test_no_spread_on_either_side_leaves_the_floor_and_threshold_to_decide() -> None:
    result = _suite_gate({"tool_selection": 0.0}, sd=0.0)
    assert not result.regressed
    base = {"dimensions": {d: {"mean": 1.0, "sd": 0.0, "n": 80} for d in SUITE_DIMS}, "tasks": {}}
    new = {d: {"mean": 0.907 if d == "tool_selection" else 1.0, "sd": 0.0, "n": 80} for d in SUITE_DIMS}
    fired = gate_summaries(base, {}, new, {})
    f = next(f for f in fired.suite if f.dimension == "tool_selection")
    assert f.band == 0.01 and f.p == 0.0 and f.regressed


def test_band_drop_p_is_the_normal_tail_on_the_bands_sigma() -> None:
    a, b = ScoreSummary(0.8, 0.3, 160), ScoreSummary(0.8 - 2 * math.sqrt(2 * 0.09 / 160), 0.3, 160)
    assert band_drop_p(a, b) == pytest.approx(0.02275, abs=1e-5)  # exactly at the band
    assert band_drop_p(b, a) == pytest.approx(1 - 0.02275, abs=1e-5)
    assert math.isnan(band_drop_p(a, ScoreSummary(math.nan, 0.0, 0)))


def test_suite_family_q_equals_statsmodels_holm() -> None:
    rng = np.random.default_rng(7)
    for size in (1, 2, 7, 12):
        p = list(rng.uniform(0, 0.2, size) ** 2)
        expected = multipletests(p, alpha=0.05, method="holm")[1]
        assert suite_family_q(p) == pytest.approx(list(expected), abs=1e-12)
    assert math.isnan(suite_family_q([0.01, math.nan, 0.02])[1])  # nothing to test: not in the family
    assert suite_family_q([0.01, math.nan, 0.02])[::2] == pytest.approx([0.02, 0.02])
