"""`agreement(run_id)`: does the LLM judge agree with the programmatic graders? Cohen's κ.

Raters: `judge` (tier-0 `judge` verdicts) and, once labels are imported with `aeh review
--import`, `human` — each compared with the programmatic verdict on the attempts both cover.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import polars as pl

from aeh.analysis._results import AgreementResult
from aeh.engine.fidelity import judge_verdict_status
from aeh.stats import KAPPA_TRUST_THRESHOLD, cohens_kappa
from aeh.store import JUDGE_KINDS, StoreLike, human_label_pairs, programmatic_verdicts, using_store

__all__ = ["MIN_KAPPA_N", "agreement", "judge_verdict_counts", "verdict_pairs"]


def verdict_pairs(grader_rows: pl.DataFrame, judge_kinds: tuple[str, ...] = JUDGE_KINDS) -> pl.DataFrame:
    """Per attempt: the programmatic verdict (all tier-0 non-judge graders passed) and the
    judge verdict; only attempts that have both (the overlap set)."""
    programmatic = programmatic_verdicts(grader_rows, judge_kinds)
    # A verdict decided without a judge call (e.g. no final output) is not the judge's opinion.
    judge = (grader_rows.filter((pl.col("tier") == 0) & pl.col("passed").is_not_null()
                                & pl.col("kind").is_in(list(judge_kinds)) & ~_automatic()
                                & ~_unparseable())
             .group_by("task_id", "attempt").agg(pl.col("passed").all().alias("judge")))
    return programmatic.join(judge, on=["task_id", "attempt"], how="inner").sort("task_id", "attempt")


MIN_KAPPA_N = 10
"""Below this many paired verdicts κ is reported as "not enough data", not as a number."""


def _automatic() -> pl.Expr:
    return pl.col("evidence").fill_null("").str.contains('"automatic":true', literal=True)


def _unparseable() -> pl.Expr:
    # Its `passed=False` is the harness's rule, not the judge's opinion: it has no place in κ.
    return pl.col("evidence").fill_null("").str.contains('"judge_unparseable":true', literal=True)


def judge_verdict_counts(grader_rows: pl.DataFrame,
                         judge_kinds: tuple[str, ...] = ("judge", "judge_shadow")) -> dict[str, Any]:
    """Judge verdicts attempted (a judge call was made), valid, failed by reason, automatic."""
    rows = grader_rows.filter(pl.col("kind").is_in(list(judge_kinds)))
    counts: dict[str, int] = {}
    for passed, evidence, error in rows.select("passed", "evidence", "error").iter_rows():
        try:
            ev = json.loads(evidence) if evidence else {}
        except ValueError:
            ev = {}
        status = judge_verdict_status(passed, ev if isinstance(ev, dict) else {}, error)
        counts[status] = counts.get(status, 0) + 1
    failed = {k.split(":", 1)[1]: v for k, v in sorted(counts.items()) if k.startswith("failed:")}
    automatic = counts.get("automatic", 0)
    return {"attempted": sum(counts.values()) - automatic, "valid": counts.get("valid", 0),
            "failed": sum(failed.values()), "failed_by_reason": failed,
            "unparseable": counts.get("unparseable", 0), "automatic": automatic}


def agreement(run_id: str, db: StoreLike = None) -> AgreementResult:
    """κ on the overlap set, with n, raw agreement, base rates, the 2×2 table, κ's interval
    (one row per rater in `.table`), and the run's judge verdict counts."""
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        graders = store.grader_frame(full)
        pairs = verdict_pairs(graders)
        counts = judge_verdict_counts(graders)
        sources = [("judge", pairs)]
        human = human_label_pairs(store, full)  # labels imported with `aeh review --import`
        if human.height:
            sources.append(("human", human))
        rows = []
        for source, frame in sources:
            prog = frame["programmatic"].to_list()
            other = frame["judge"].to_list()
            result = cohens_kappa(prog, other)
            rows.append({
                "run_id": full, "rater": source, "n": result.n, "kappa": result.kappa,
                "kappa_low": result.kappa_low, "kappa_high": result.kappa_high,
                "raw_agreement": result.raw_agreement,
                "base_rate_programmatic": result.base_rate_programmatic,
                "base_rate_rater": result.base_rate_judge,
                "both_pass": result.table[0][0], "prog_pass_rater_fail": result.table[0][1],
                "prog_fail_rater_pass": result.table[1][0], "both_fail": result.table[1][1],
                "trusted": result.trusted and result.n >= MIN_KAPPA_N,
                "enough_data": result.n >= MIN_KAPPA_N,
                "note": (f"not enough data (n = {result.n} < {MIN_KAPPA_N})" if result.n < MIN_KAPPA_N
                         else result.note),
            })
        return AgreementResult(
            table=pd.DataFrame(rows), threshold=KAPPA_TRUST_THRESHOLD, min_n=MIN_KAPPA_N, judge_verdicts=counts,
            table_orientation="rows = programmatic (pass, fail); columns = rater (pass, fail)")
