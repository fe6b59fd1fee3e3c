"""`aeh run` options for coding suites and the command adapter, kept apart from cli.py.

cli.py calls `add_run_arguments(parser)` while building `run`, `run_options(args)` before the
run and `run_notes(table)` after it; nothing else there knows about coding runs.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from aeh.errors import ConfigError

if TYPE_CHECKING:
    from aeh.analysis import RunResult

__all__ = ["CODING_GROUP", "add_run_arguments", "run_notes", "run_options"]

#: The help group of the coding flags (run options declare it as their `group`).
CODING_GROUP = "coding suites (--adapter command)"


def add_run_arguments(r: argparse.ArgumentParser) -> None:
    g = r.add_argument_group(CODING_GROUP)
    g.add_argument("--solver", help="shell command run in each attempt's workspace (prompt in $AEH_PROMPT), "
                                    "or noop (the floor) / reference (the ceiling)")
    g.add_argument("--label", help="the solver's name in the matrix (default: the solver)")
    g.add_argument("--price-in", type=float, help="price per million input tokens (in --currency), applied to "
                                                  "solver-reported usage")
    g.add_argument("--price-out", type=float, help="price per million output tokens (in --currency), applied to "
                                                   "solver-reported usage")
    g.add_argument("--currency", type=str.upper, choices=("USD", "EUR"),
                   help="the run's one currency: usage files report cost_usd or cost_eur to match (default USD)")
    g.add_argument("--sandbox-solver", action="store_true", help="deny the solver the network (local solvers)")
    g.add_argument("--solver-timeout", type=float, help="seconds before the solver's process group is killed")
    from aeh.commands._spec_flags import add_spec_flags, flag_names  # the spec loads pydantic: not for `aeh --help`

    # --no-grading-sandbox, --no-grading-confinement, --no-solver-confinement, --workspace-retention
    add_spec_flags(g, flag_names(CODING_GROUP))


def run_options(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """(adapter options, run options) from the coding flags; ConfigError for a bad mix. The run
    options are the command adapter's defaults; the flags of run options come with the others."""
    from aeh.engine.runspec import DEFAULT_RETENTION  # the spec loads pydantic: not for `aeh --help`

    adapter_options: dict[str, Any] = {}
    options: dict[str, Any] = {}
    solver_flags = {"solver": args.solver, "label": args.label, "price_in": args.price_in,
                    "price_out": args.price_out, "timeout_s": args.solver_timeout,
                    "currency": getattr(args, "currency", None)}
    if args.adapter == "command":
        if not args.solver:
            raise ConfigError("--adapter command needs --solver CMD (or --solver noop / --solver reference)")
        adapter_options = {k: v for k, v in solver_flags.items() if v is not None}
        if args.sandbox_solver:
            adapter_options["sandbox_solver"] = True
        if getattr(args, "solver_confinement", True) is False:  # --no-solver-confinement (a run option too)
            adapter_options["confine_solver"] = False
        if args.workspace_retention is None and not args.keep_workspaces:
            options["workspace_retention"] = DEFAULT_RETENTION
    elif (any(v is not None for v in solver_flags.values()) or args.sandbox_solver
          or getattr(args, "solver_confinement", True) is False):
        raise ConfigError("--solver, --label, --price-in/--price-out, --currency, --solver-timeout, --sandbox-solver "
                          "and --no-solver-confinement belong to --adapter command")
    return adapter_options, options


def run_notes(table: RunResult) -> list[str]:
    """Lines printed after a coding run: the grading sandbox, never silently off; kept workspaces."""
    config = table.run.config
    mode = config.get("grading_sandbox")
    if mode is None:
        return []
    lines = [f"grading sandbox: {mode}" + ("" if mode == "unshare" else
                                            "  (WARNING: graded code ran with the network available)")]
    from aeh.importers import hidden_set_lines  # heavy: loaded on first use

    lines += hidden_set_lines(config)
    from aeh.grading import CONFINED, unconfined_lines

    for key in ("solver_confinement", "grading_confinement"):
        mode = config.get(key)
        if mode and not str(mode).startswith("none") and mode in CONFINED:
            lines.append(f"{key.replace('_', ' ')}: {mode}")
    lines += unconfined_lines(config)
    if config.get("workspace_root"):
        lines.append(f"workspaces kept in {config['workspace_root']}")
    return lines + _ceiling_note(table, config)


def _ceiling_note(table: RunResult, config: dict[str, Any]) -> list[str]:
    """The reference solution must solve everything: anything less is the suite's or the
    environment's fault, and is said so rather than left as a low score."""
    if config.get("solver_role") != "ceiling" or not len(table):
        return []
    total = table.attempts_total
    solved = int(table["successes"].sum())
    if solved == total:
        return []
    return [f"WARNING: the reference solution (the ceiling) solved {solved} of {total} attempts "
            f"({table.harness_errors} harness errors): the fixtures or the grading environment "
            "are broken, not an agent — `aeh tasks validate --suite SUITE` runs the fixture contract"]
