"""Cohen's kappa between programmatic and judge verdicts."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._dist import norm_isf

__all__ = ["Agreement", "KAPPA_TRUST_THRESHOLD", "cohens_kappa"]

KAPPA_TRUST_THRESHOLD = 0.7


@dataclass(frozen=True)
class Agreement:
    """Judge-vs-programmatic agreement.

    ``table`` is [[both pass, prog pass & judge fail], [prog fail & judge pass, both fail]]:
    rows = programmatic (pass, fail), columns = judge (pass, fail).
    """

    n: int
    kappa: float
    kappa_low: float
    kappa_high: float
    raw_agreement: float
    base_rate_programmatic: float
    base_rate_judge: float
    table: list[list[int]]
    trusted: bool
    note: str = ""


def cohens_kappa(
    programmatic: Sequence[bool], judge: Sequence[bool], alpha: float = 0.05
) -> Agreement:
    """Cohen's kappa (statsmodels) on the overlap set, with asymptotic (1-alpha) interval.

    Trusted iff kappa >= 0.7. If both graders use the same single label throughout, chance
    agreement is 1 and kappa is undefined (nan, untrusted); if they use opposite single labels
    (every attempt failed by one and passed by the other), chance and observed agreement are both
    0 and kappa is 0, its interval undefined.
    """
    prog = np.asarray(programmatic, dtype=bool)
    jud = np.asarray(judge, dtype=bool)
    if prog.shape != jud.shape or prog.ndim != 1:
        raise ValueError("programmatic and judge must be 1-D and the same length")
    n = int(prog.size)
    table = [
        [int(np.sum(prog & jud)), int(np.sum(prog & ~jud))],
        [int(np.sum(~prog & jud)), int(np.sum(~prog & ~jud))],
    ]
    if n == 0:
        return Agreement(0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan,
                         table, False, "no overlap: nothing to compare")
    raw = (table[0][0] + table[1][1]) / n
    base_p = float(prog.mean())
    base_j = float(jud.mean())
    prog_const = base_p in (0.0, 1.0)
    judge_const = base_j in (0.0, 1.0)
    if prog_const and judge_const and base_p == base_j:
        note = ("kappa undefined: both graders gave the same one label throughout "
                "(chance agreement = 1)")
        return Agreement(n, math.nan, math.nan, math.nan, raw, base_p, base_j, table,
                         False, note)
    if prog_const and judge_const:  # opposite single labels: chance agreement 0, observed 0
        note = ("kappa = 0: the graders gave opposite single labels throughout (agreement 0, chance "
                "agreement 0), interval undefined")
        return Agreement(n, 0.0, math.nan, math.nan, raw, base_p, base_j, table, False, note)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from statsmodels.stats import inter_rater  # heavy: loaded on first use

        res = inter_rater.cohens_kappa(np.asarray(table, dtype=float))
    kappa = float(res.kappa)
    note = ""
    if prog_const or judge_const:
        # kappa is 0 by construction; the asymptotic variance degenerates to 0 or nan.
        low = high = math.nan
        note = "one grader gave a single label throughout: kappa = 0, interval undefined"
    else:
        half = norm_isf(alpha / 2) * float(res.std_kappa)
        low, high = kappa - half, kappa + half
    return Agreement(n, kappa, low, high, raw, base_p, base_j, table,
                     kappa >= KAPPA_TRUST_THRESHOLD, note)
