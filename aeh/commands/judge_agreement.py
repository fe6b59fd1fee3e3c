"""`aeh judge-agreement --run-id ID`: Cohen's κ of the judge (and human labels) vs programmatic."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aeh._util.figure import figure
from aeh.errors import ExitCode

if TYPE_CHECKING:
    from aeh.analysis import AgreementResult

NAME = "judge-agreement"
HELP = "Cohen's κ between the LLM judge (and imported human labels) and the programmatic graders"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--run-id", required=True, help="run id (or unique prefix)")
    add_db(parser)



def _verdict_line(counts: dict[str, Any]) -> str:
    failed = counts.get("failed_by_reason") or {}
    reasons = ", ".join(f"{k} {v}" for k, v in failed.items())
    return (f"judge verdicts: {counts.get('attempted', 0)} attempted, {counts.get('valid', 0)} valid, "
            f"{counts.get('failed', 0)} failed" + (f" ({reasons})" if reasons else "")
            + (f", {counts['unparseable']} unparseable (left out of κ)" if counts.get("unparseable") else "")
            + f"; {counts.get('automatic', 0)} automatic (no judge call, left out of κ)")


def _kappa_line(r: dict[str, Any], min_n: int) -> str:
    if r["n"] < min_n:
        return f"  κ: not enough data (n = {r['n']} < {min_n})"
    return (f"  κ = {figure(r['kappa'], '{:.3f}')}   95% CI [{figure(r['kappa_low'], '{:.3f}')}, "
            f"{figure(r['kappa_high'], '{:.3f}')}]   n = {r['n']}")


def format_agreement(result: AgreementResult) -> str:
    threshold, min_n, counts = result.threshold, result.min_n, result.judge_verdicts
    rows = [r for r in result.table.to_dict("records") if r["n"] > 0]
    head = [_verdict_line(counts)] if counts and (counts.get("attempted") or counts.get("automatic")) else []
    if counts and counts.get("failed"):
        head.append(f"WARNING: {counts['failed']} of {counts['attempted']} judge verdicts failed — "
                    "κ below covers only the valid ones")
    if not rows:
        what = "no valid judge verdicts" if counts and counts.get("attempted") else "no judge verdicts"
        return "\n".join(head + [f"{what} in this run (and no human labels): nothing to compare"])
    lines = list(head)
    if not any(r["rater"] == "judge" for r in rows):
        lines.append("no judge verdicts in this run")
    for r in rows:
        note = r["note"] if r["n"] >= min_n else ""
        lines += [
            f"rater: {r['rater']} vs programmatic   (run {r['run_id']})",
            _kappa_line(r, min_n),
            f"  raw agreement {figure(r['raw_agreement'], '{:.3f}')}   base rate: programmatic "
            f"{figure(r['base_rate_programmatic'], '{:.3f}')}, "
            f"{r['rater']} {figure(r['base_rate_rater'], '{:.3f}')}",
            f"  {'':<20}{r['rater'] + ' pass':>12}{r['rater'] + ' fail':>12}",
            f"  {'programmatic pass':<20}{r['both_pass']:>12}{r['prog_pass_rater_fail']:>12}",
            f"  {'programmatic fail':<20}{r['prog_fail_rater_pass']:>12}{r['both_fail']:>12}",
            f"  trusted (κ ≥ {threshold}, n ≥ {min_n}): {'yes' if r['trusted'] else 'no'}"
            + (f"   note: {note}" if note else ""),
        ]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use
    from aeh.analysis import agreement

    print(format_agreement(agreement(args.run_id, db=args.db)))
    return ExitCode.OK
