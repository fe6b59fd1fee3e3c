"""`aeh import tau-bench FILE` / `aeh import terminal-bench PATH [PATH …]`: other harnesses' runs
become stored aeh runs, so `aeh compare`, `aeh.load_run`, `aeh.pass_k` … work on them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from aeh._util.figure import money
from aeh.commands._secrets import add_secret_argument
from aeh.commands.run import key_values
from aeh.errors import HARNESS_ERROR_LIMIT, ExitCode

if TYPE_CHECKING:
    from aeh.analysis import RunResult

NAME = "import"
HELP = "import recorded runs of another harness (tau-bench, terminal-bench, Inspect …) as one stored run"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    from aeh.importers import importers  # only when `aeh import` is the command

    sub = parser.add_subparsers(dest="source", required=True, metavar="SOURCE")
    for name in importers.names():
        importer = importers.get(name)
        p = sub.add_parser(name, help=getattr(importer, "help", None))
        if hasattr(importer, "add_arguments"):
            importer.add_arguments(p)
        else:
            p.add_argument("paths", nargs="+", metavar="PATH", help="what to import")
            p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                           help="an importer option (repeatable)")
        p.add_argument("--run-id", help="id for the new run (default: generated)")
        add_secret_argument(p, "a value to redact from the imported run (repeatable)")
        add_db(p)


def main(args: argparse.Namespace) -> int:
    from aeh.analysis import run_table  # heavy: loaded on first use
    from aeh.commands._new_store import check_new_run_id, store_for_write
    from aeh.importers import importers

    check_new_run_id(args.run_id)
    scoring = getattr(args, "scoring", None)  # the importers that grade trajectories offer --scoring
    if scoring:
        # loaded when the command runs, so `aeh --help` stays fast
        from aeh.grading import scoring_profile

        scoring_profile(scoring)  # an unknown profile is refused before anything is imported
    importer = importers.get(args.source)
    if hasattr(importer, "cli_call"):
        paths, options = importer.cli_call(args)
    else:
        paths, options = list(args.paths), key_values(args.option, "--option")
    # The importer writes through a store that already knows the --secret values; a refused
    # import removes the store it created.
    with store_for_write(args.db, secrets=args.secrets) as store:
        run_id = importer.import_(paths, store, run_id=args.run_id, **options)
    if scoring:
        # loaded when the command runs, so `aeh --help` stays fast
        from aeh.analysis import score_run

        score_run(run_id, args.db, scoring=scoring)
    table = run_table(run_id, args.db)
    print(run_id)
    print(summary_line(table) + (f"; scored with {scoring}" if scoring else ""))
    for warning in table.warnings:  # e.g. recordings that ran over the suite's budget
        print(f"warning: {warning}", file=sys.stderr)
    return ExitCode.OK


def summary_line(table: RunResult) -> str:
    """One line: tasks, attempts, suite rate with its interval, harness errors, cost, and the import policy."""
    from aeh.analysis import suite_interval_text  # heavy: loaded on first use (pandas)

    a = table
    facts = a.run.config.facts  # what the importer recorded of its source
    errors = f"harness errors {a.harness_errors}/{a.attempts_total}"
    if a.invalid_measurement:
        errors += f" ({a.harness_error_rate:.1%} > {HARNESS_ERROR_LIMIT:.0%}: not a valid measurement)"
    cost = f"cost {money(a.total_cost_usd or 0)}" if a.priced else unpriced_text(table)
    line = (f"{a.n_tasks} tasks, {a.attempts_total} attempts: suite rate {a.suite_rate:.3f} "
            f"{suite_interval_text(a)} ({a.suite_rate_method}); {errors}; {cost}")
    if facts.get("trajectory_format"):
        line += f"; read as {facts['trajectory_format']}"
    source = facts.get("source_accuracy")
    if source:
        line += f"; source accuracy {source['mean']:.4f}"
    if facts.get("import_policy"):
        line += f"; {facts['import_policy']}"
    return line


def unpriced_text(table: RunResult) -> str:
    """Why an imported run is unpriced: no token counts at all, or counts the price table cannot price."""
    tokens = int(table["tokens_in"].sum() + table["tokens_out"].sum()) if len(table) else 0
    if not tokens:
        return "cost unpriced (no token counts)"
    model = table.run.model
    named = f" of model {model!r}" if model else ""
    return (f"cost unpriced ({tokens} tokens recorded{named}, but a model is not in the price table "
            "or a model call has no counts: pass --price-table YAML)")
