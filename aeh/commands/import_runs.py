"""`aeh import tau-bench FILE` / `aeh import terminal-bench PATH [PATH …]`: other harnesses' runs
become stored aeh runs, so `aeh compare`, `aeh.load_run`, `aeh.pass_k` … work on them."""

from __future__ import annotations

import argparse
from collections.abc import Callable

NAME = "import"
HELP = "import recorded runs of another harness (tau-bench, terminal-bench) as one stored run"

_NULL_AS_HELP = ("how a trial with is_resolved null counts: 'failure' (default: the leaderboard's definition, "
                 "so the suite rate reproduces the submission's accuracy; each failure_mode goes to its bucket, "
                 "see docs/realdata.md), 'harness_error' (every null leaves n), or "
                 "'harness_error:MODE[,MODE…]' (only those modes leave n, e.g. harness_error:test_timeout,parse_error)")


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    sub = parser.add_subparsers(dest="source", required=True, metavar="SOURCE")
    tau = sub.add_parser("tau-bench", help="a τ-bench historical trajectories JSON file (task × trial)")
    tau.add_argument("file", help="e.g. gpt-4o-airline.json")
    tau.add_argument("--model", help="agent model (default: from the file name, e.g. gpt-4o)")
    tb = sub.add_parser("terminal-bench", help="Terminal-Bench results of ONE model: submission folders, "
                                               "run folders or results files")
    tb.add_argument("dirs", nargs="+", metavar="PATH",
                    help="a submission folder (run folders, flat <timestamp>_results.json files, or one "
                         "results.json with several trials per task), run folders or results files, in attempt order")
    tb.add_argument("--model", help="model name (default: from the submission folder, e.g. claude-4-1-opus, "
                                    "else run_metadata.json's model_name)")
    tb.add_argument("--agent", help="agent name (default: run_metadata.json's agent_name, else the submission folder)")
    tb.add_argument("--dataset", metavar="NAME@VERSION",
                    help="the dataset, when neither run_metadata.json nor the enclosing folder names it")
    tb.add_argument("--null-as", default="failure", metavar="POLICY", help=_NULL_AS_HELP)
    for p in (tau, tb):
        p.add_argument("--run-id", help="id for the new run (default: generated)")
        add_db(p)


def main(args: argparse.Namespace) -> int:
    from aeh.analysis import run_table
    from aeh.importers import import_tau_bench, import_terminal_bench

    if args.source == "tau-bench":
        run_id = import_tau_bench(args.file, db=args.db, run_id=args.run_id, model=args.model)
    else:
        run_id = import_terminal_bench(args.dirs, db=args.db, run_id=args.run_id, model=args.model,
                                       null_as=args.null_as, dataset=args.dataset, agent=args.agent)
    print(run_id)
    print(summary_line(run_table(run_id, args.db)))
    return 0


def summary_line(table) -> str:  # type: ignore[no-untyped-def]
    """One line: tasks, attempts, suite rate with its interval, harness errors, cost, and the import policy."""
    a = table.attrs
    config = a.get("run", {}).get("config") or {}
    errors = f"harness errors {a['harness_errors']}/{a['attempts_total']}"
    if a["invalid_measurement"]:
        errors += f" ({a['harness_error_rate']:.1%} > 2%: not a valid measurement)"
    cost = "cost unpriced (no token counts)" if not a["priced"] else f"cost ${a['total_cost_usd']:.4f}"
    line = (f"{a['n_tasks']} tasks, {a['attempts_total']} attempts: suite rate {a['suite_rate']:.3f} "
            f"95% CI [{a['suite_low']:.3f}, {a['suite_high']:.3f}] ({a['suite_rate_method']}); {errors}; {cost}")
    source = config.get("source_accuracy")
    if source:
        line += f"; source accuracy {source['mean']:.4f}"
    if config.get("import_policy"):
        line += f"; {config['import_policy']}"
    return line
