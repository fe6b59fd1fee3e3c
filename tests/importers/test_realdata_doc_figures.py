"""The figures docs/realdata.md quotes, recomputed from the real files: the doc cannot go stale.
Skipped when ../shared/realdata is absent."""

from __future__ import annotations

from pathlib import Path

import pytest
from realdata_paths import GPT5, tb_runs

import aeh

DOC = (Path(__file__).resolve().parents[2] / "docs" / "realdata.md").read_text()


def _rate(rid: str, db: str, decimals: int) -> str:
    attrs = aeh.load_run(rid, db=db)
    return f"{attrs.suite_rate:.{decimals}f} [{attrs.suite_low:.3f}, {attrs.suite_high:.3f}]"


def test_tau_bench_pass_k_and_suite_rate(tau_run: tuple[str, str]) -> None:
    db, rid = tau_run
    suite = aeh.pass_k(rid, db=db).table.query("task_id == '<suite>'").set_index("k")
    for k in (2, 3, 4):
        assert f"| {k} | {suite.loc[k, 'pass_hat_k']:.4f} | {suite.loc[k, 'pass_at_k']:.4f} |" in DOC
    attrs = aeh.load_run(rid, db=db)
    assert f"Suite rate {attrs.suite_rate:.3f}, 95% CI [{attrs.suite_low:.3f}, {attrs.suite_high:.3f}]" in DOC


def test_terminal_bench_suite_rates(tb_pair: tuple[str, str, str], tb_pair_excluding_nulls: tuple[str, str, str],
                                    tmp_path: Path) -> None:
    from aeh.importers import import_terminal_bench

    db, opus, sonnet = tb_pair
    gpt5 = import_terminal_bench(tb_runs(GPT5), db=db)
    default = [_rate(opus, db, 4), _rate(sonnet, db, 3), _rate(gpt5, db, 3)]
    assert f"| suite rate, default (= leaderboard mean accuracy) | {' | '.join(default)} |" in DOC
    db_x, opus_x, sonnet_x = tb_pair_excluding_nulls
    gpt5_x = import_terminal_bench(tb_runs(GPT5), db=db_x, null_as="harness_error")
    excl = [_rate(r, db_x, 3) for r in (opus_x, sonnet_x, gpt5_x)]
    assert all(e in DOC for e in excl), excl


@pytest.mark.parametrize(("rate", "drop", "n_tasks", "phrase"), [
    (1.0, 1.0, 80, "a 1.0 → 0.0 collapse needs {n} attempts per task"),
    (0.8, 0.5, 80, "a 0.8 → 0.3 drop needs {n}"),
])
def test_power_plans_quoted(rate: float, drop: float, n_tasks: int, phrase: str) -> None:
    n = int(aeh.power(rate, drop=drop, n_tasks=n_tasks)["attempts_needed"].iloc[0])
    assert phrase.format(n=n) in " ".join(DOC.split())


def _signed(x: float, digits: int) -> str:
    return f"{x:+.{digits}f}".replace("-", "−")


def test_compare_suite_row_quoted(tb_pair: tuple[str, str, str]) -> None:
    from aeh.analysis import SUITE_ROW

    db, opus, sonnet = tb_pair
    frame = aeh.compare(opus, sonnet, db=db).table
    suite = frame[frame.task_id == SUITE_ROW].iloc[0]
    quoted = (f"delta **{_signed(suite.delta, 4)}**, SE {suite.se:.3f}, 95% CI "
              f"[{_signed(suite.delta_low, 3)}, {_signed(suite.delta_high, 3)}]")
    assert quoted in " ".join(DOC.split())
