"""Regenerate the recovery-curve table in docs/faults.md (core suite, mock adapter).

    .venv/bin/python benchmarks/recovery_curve.py [--attempts 5] [--db /tmp/recovery.db] [--png out.png]

Runs `aeh.recovery_curve` on suites/core with the strong mock profile at fail rates 0, 0.1,
0.3 and 0.5, in burst mode and in uniform mode, and prints one Markdown table with the two
modes side by side (the table pasted into docs/faults.md). Every run is stored in --db.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from aeh.experiments import format_recovery_table, recovery_curve
from aeh.report.views import plot_recovery_curve

CORE = Path(__file__).resolve().parents[1] / "suites" / "core"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--model", default="mock-strong")
    parser.add_argument("--db", default=str(Path(tempfile.gettempdir()) / "aeh-recovery.db"))
    parser.add_argument("--png", help="also save the side-by-side chart here")
    args = parser.parse_args()
    frames = []
    started = time.monotonic()
    for mode in ("burst", "uniform"):
        frames.append(recovery_curve(CORE, "mock", rates=(0, 0.1, 0.3, 0.5), mode=mode,
                                     attempts=args.attempts, seed=args.seed, db=args.db,
                                     concurrency=args.concurrency, model=args.model))
    print(format_recovery_table(*frames))
    print(f"\n{args.attempts} attempts × 32 tasks per cell, seed {args.seed}, model {args.model}; "
          f"{time.monotonic() - started:.0f} s; runs stored in {args.db}")
    if args.png:
        import matplotlib
        import pandas as pd

        matplotlib.use("Agg")
        axes = plot_recovery_curve(pd.concat(frames, ignore_index=True))
        (axes[0] if isinstance(axes, list) else axes).figure.savefig(args.png, dpi=120)
        print(f"chart saved to {args.png}")


if __name__ == "__main__":
    main()
