"""`aeh run --suite S --adapter A`: run a suite against an adapter and print the per-task table."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from aeh.commands._fixture_form import add_fixture_arguments, is_fixture_form, run_fixtures, run_notes
from aeh.errors import ConfigError, ExitCode

NAME = "run"
HELP = "run a suite against an adapter and print the per-task table"


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    # the spec loads pydantic: not for `aeh --help`
    from aeh.commands._spec_flags import add_adapter_flags, add_spec_flags, flag_names

    r = parser
    add_spec_flags(r, flag_names())  # every run option's flag, from its declaration in RunSpec
    r.add_argument("--dry-run", action="store_true",
                   help="validate, resolve config, estimate tokens and cost; call no model")
    r.add_argument("--log-only", type=_csv, default=[],
                   help="only these span categories (tools,model,grading,faults,scheduler,cost)")
    r.add_argument("--log-exclude", type=_csv, default=[], help="hide these span categories")
    r.add_argument("--log-format", default="pretty", help="pretty | jsonl")
    add_adapter_flags(r)  # each adapter's own options (the command adapter's --solver, --label, …)
    add_fixture_arguments(r)  # the coding harness's form: aeh run FIXTURE… --noop | --ref | --solver CMD
    add_db(r)


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use (pandas, polars and the engine stay out of `aeh --help`)
    from aeh.analysis import format_run_table
    from aeh.api import run_async, run_sync
    from aeh.logs import RunLogger

    if is_fixture_form(args):  # that harness's exit codes, not aeh's (docs/coding.md)
        return run_fixtures(args)
    if args.suite is None and args.resume is None:
        raise ConfigError("aeh run needs --suite NAME_OR_DIR (or --resume RUN_ID to finish a stored run)")
    if args.dry_run:
        if args.suite is None:
            raise ConfigError("--dry-run needs --suite")
        from aeh.dryrun import dry_run  # heavy: loaded on first use (its HTTP client)

        print(dry_run(args.suite, adapter=args.adapter or "mock", model=args.model, attempts=args.attempts or 5,
                      price_table=args.price_table, fault_profile=args.fault_profile,
                      fault_rate=args.fault_rate, fault_mode=args.fault_mode))
        return ExitCode.OK
    logger = RunLogger(args.log_level, args.log_format, args.log_only, args.log_exclude)
    options = _spec_options(args)
    try:
        table = run_sync(run_async(db=args.db, progress=logger, **options))
    except KeyboardInterrupt:
        if logger.run_id is None:  # e.g. while suite.py was imported: no run exists to resume
            print("aeh: interrupted before the run started; nothing was stored", file=sys.stderr)
        else:
            print("aeh: interrupted — the attempts that finished are stored; finish the run with "
                  f"`aeh run --resume {logger.run_id}` (`aeh runs` lists it as interrupted)", file=sys.stderr)
        return ExitCode.INTERRUPTED
    if table.resume is not None:
        print(table.resume.note)
    print(format_run_table(table))
    for line in run_notes(table):
        print(line)
    if getattr(args, "run_card", None):
        print(f"run cards (results.json + run_card.md) for each attempt under {args.run_card}")
    if table.invalid_measurement:
        return ExitCode.INVALID_RUN
    gate = table.fail_under
    if gate is not None and not gate.met:
        print(f"suite rate {gate.rate:.3f} is below {gate.threshold:g}: failed the --fail-under gate")
        return ExitCode.REGRESSION
    return ExitCode.OK


def _spec_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run options the flags give, with the CLI's own forms turned into the library's:
    `--agent MODULE:FN` into the function, `--adapter-option K=V` into a dict."""
    from aeh.adapters.callable import load_agent  # heavy: loaded on first use
    from aeh.adapters.options import options_models
    from aeh.commands._spec_flags import adapter_flag_values, flag_names, spec_values

    options = spec_values(args, flag_names())
    for model in options_models().values():
        options |= spec_values(args, flag_names(getattr(model, "group", None)))
    if args.agent:
        if args.adapter not in (None, "mock"):
            raise ConfigError("give either --agent MODULE:FN or --adapter, not both")
        options["agent"] = load_agent(args.agent)
    elif args.model_free:
        raise ConfigError("--model-free describes a function agent: pass it together with --agent MODULE:FN")
    adapter_options = key_values(args.adapter_options or [], "--adapter-option")
    adapter_options.update(adapter_flag_values(args))
    options.update(adapter_options=adapter_options or None)
    return options


def key_values(items: list[str], flag: str) -> dict[str, Any]:
    """KEY=VALUE pairs; values are parsed as YAML scalars (256 → int, true → bool)."""
    import yaml  # here, not at the top: every `aeh` command line imports this module for its help

    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} {item!r} is not KEY=VALUE — e.g. {flag} max_output_tokens=256")
        parsed[key.strip()] = yaml.safe_load(value)
    return parsed
