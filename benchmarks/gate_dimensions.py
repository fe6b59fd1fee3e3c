"""The trajectory gate's false-alarm rate (A/A) and its power on the loopy mock profile.

    .venv/bin/python benchmarks/gate_dimensions.py [--pairs 1000] [--pool 100] [--attempts 5]

Method: run the smoke suite once per profile with a large number of attempts per task (the
pool: real mock trajectories, scored by the six deterministic scorers), then simulate CI pairs by
drawing `--attempts` attempts per task without replacement from the pools: baseline from the
`strong` pool, candidate from the same pool (A/A) or from the `loopy` pool (power). Each pair goes
through the whole gate (`gate_frame`: suite and per-task bands, newly failing tasks, the
success-rate gate of `aeh compare`). Appends the figures to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd

import aeh
from aeh.analysis._trajectory import baseline_from_frame, gate_frame, score_run


def pool(profile: str, attempts: int, db: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    table = aeh.run("smoke", "mock", model=f"mock-{profile}", attempts=attempts, seed=seed, db=db, progress=False)
    rid = table.attrs["run_id"]
    scores = score_run(rid, db, write=False)
    att = aeh.attempts(rid, db=db)[["task_id", "attempt", "success", "failure_bucket"]]
    return scores, att[att["failure_bucket"] != "harness_error"]


def draw(scores: pd.DataFrame, att: pd.DataFrame, k: int,
         rng: random.Random) -> tuple[pd.DataFrame, dict[str, dict[str, int]]]:
    picked, counts = [], {}
    for task, group in att.groupby("task_id"):
        rows = group.sample(n=k, random_state=rng.randrange(2**31))
        counts[str(task)] = {"successes": int(rows["success"].sum()), "attempts": k}
        picked += [(str(task), int(a)) for a in rows["attempt"]]
    keys = pd.DataFrame(picked, columns=["task_id", "attempt"])
    return scores.merge(keys, on=["task_id", "attempt"]), counts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--pool", type=int, default=100)
    ap.add_argument("--attempts", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        db = str(Path(d) / "pool.db")
        strong = pool("strong", args.pool, db, 1)
        loopy = pool("loopy", args.pool, db, 2)
    rng = random.Random(7)
    results: dict[str, tuple[int, Counter[str]]] = {}
    for name, cand in (("A/A (strong vs strong)", strong), ("power (strong vs loopy)", loopy)):
        fired, why = 0, Counter[str]()
        for _ in range(args.pairs):
            b_scores, b_counts = draw(*strong, args.attempts, rng)
            c_scores, c_counts = draw(*cand, args.attempts, rng)
            result = gate_frame(baseline_from_frame(b_scores, b_counts), c_scores, c_counts)
            if result.regressed:
                fired += 1
                why.update(result.regressed_dimensions)
                if result.newly_failing:
                    why["newly failing task"] += 1
                if result.success_verdict.regressed:
                    why["success-rate gate"] += 1
        results[name] = (fired, why)
    elapsed = time.time() - t0
    lines = [
        f"## gate_dimensions — {dt.date.today()} (`benchmarks/gate_dimensions.py --pairs {args.pairs} "
        f"--pool {args.pool} --attempts {args.attempts}`)", "",
        f"Smoke suite (5 tasks), pools of {args.pool} mock attempts per task per profile, pairs of "
        f"{args.attempts} attempts per task drawn without replacement; the whole gate per pair "
        f"(threshold 0.05, overall 0.03, bands 2σ with a 0.01 floor). {elapsed:.0f} s.", "",
        "| pairs | gate fired | rate | what fired (pairs) |", "| --- | --- | --- | --- |",
    ]
    for name, (fired, why) in results.items():
        detail = ", ".join(f"{k} {v}" for k, v in why.most_common()) or "—"
        lines.append(f"| {name}, {args.pairs} | {fired} | {fired / args.pairs:.3f} | {detail} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        path = Path(__file__).with_name("RESULTS.md")
        path.write_text(path.read_text().rstrip("\n") + "\n\n" + text)


if __name__ == "__main__":
    main()
