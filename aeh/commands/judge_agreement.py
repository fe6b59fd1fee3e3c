"""`aeh judge-agreement --run-id ID`: Cohen's κ of the judge (and human labels) vs programmatic."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

NAME = "judge-agreement"
HELP = "Cohen's κ between the LLM judge (and imported human labels) and the programmatic graders"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--run-id", required=True, help="run id (or unique prefix)")
    add_db(parser)


def _f(value: Any, fmt: str = "{:.3f}") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return fmt.format(value)


def format_agreement(frame: Any) -> str:
    threshold = frame.attrs.get("threshold", 0.7)
    rows = [r for r in frame.to_dict("records") if r["n"] > 0]
    if not rows:
        return "no judge verdicts in this run (and no human labels): nothing to compare"
    lines = []
    if not any(r["rater"] == "judge" for r in rows):
        lines.append("no judge verdicts in this run")
    for r in rows:
        lines += [
            f"rater: {r['rater']} vs programmatic   (run {r['run_id']})",
            f"  κ = {_f(r['kappa'])}   95% CI [{_f(r['kappa_low'])}, {_f(r['kappa_high'])}]   n = {r['n']}",
            f"  raw agreement {_f(r['raw_agreement'])}   base rate: programmatic "
            f"{_f(r['base_rate_programmatic'])}, {r['rater']} {_f(r['base_rate_rater'])}",
            f"  {'':<20}{r['rater'] + ' pass':>12}{r['rater'] + ' fail':>12}",
            f"  {'programmatic pass':<20}{r['both_pass']:>12}{r['prog_pass_rater_fail']:>12}",
            f"  {'programmatic fail':<20}{r['prog_fail_rater_pass']:>12}{r['both_fail']:>12}",
            f"  trusted (κ ≥ {threshold}): {'yes' if r['trusted'] else 'no'}"
            + (f"   note: {r['note']}" if r["note"] else ""),
        ]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use
    from aeh.analysis import agreement

    print(format_agreement(agreement(args.run_id, db=args.db)))
    return 0
