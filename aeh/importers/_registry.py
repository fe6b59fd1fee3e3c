"""The importer contract and registry: `aeh import KIND PATH…` resolves KIND here.

Built-ins (τ-bench, Terminal-Bench, trajectories, OTel, Inspect) are registered below; other formats arrive through the
`aeh.importers` entry-point group and get a generic `aeh import KIND PATH… [--option K=V]` command.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from aeh._util.registry import Registry
from aeh.errors import ConfigError

if TYPE_CHECKING:
    from aeh.store import StoreLike  # the store (and polars) load with the importer that needs them

__all__ = ["Importer", "importers"]

_NULL_AS_HELP = ("how a trial with is_resolved null counts: 'failure' (default: the leaderboard's definition, "
                 "so the suite rate reproduces the submission's accuracy; each failure_mode goes to its bucket, "
                 "see docs/realdata.md), 'harness_error' (every null leaves n), or "
                 "'harness_error:MODE[,MODE…]' (only those modes leave n, e.g. harness_error:test_timeout,parse_error)")


@runtime_checkable
class Importer(Protocol):
    """Turns another harness's recorded run into ONE stored aeh run and returns its id.

    `store` is a Store, a path or None (the default store); an importer that opens the store
    closes it. `options` are the importer's own (the CLI passes `--option KEY=VALUE` pairs and
    `run_id`). Optional: `add_arguments(parser)` and `cli_call(args) -> (paths, options)` for
    a command line of its own.
    """

    name: str
    help: str

    def import_(self, paths: Sequence[str | Path], store: StoreLike = None, **options: Any) -> str: ...


class TauBenchImporter:
    name = "tau-bench"
    help = "a τ-bench historical trajectories JSON file (task × trial)"

    def import_(self, paths: Sequence[str | Path], store: StoreLike = None, **options: Any) -> str:
        if len(paths) != 1:
            raise ConfigError(f"tau-bench imports one trajectories file, got {len(paths)} paths")
        from aeh.importers._tau_bench import import_tau_bench  # heavy: loaded on first use (polars)

        return import_tau_bench(paths[0], db=store, **options)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("file", help="e.g. gpt-4o-airline.json")
        parser.add_argument("--model", help="agent model (default: from the file name, e.g. gpt-4o)")
        add_price_table_argument(parser)

    def cli_call(self, args: argparse.Namespace) -> tuple[list[str], dict[str, Any]]:
        return [args.file], {"model": args.model, "price_table": args.price_table}


class TerminalBenchImporter:
    name = "terminal-bench"
    help = "Terminal-Bench results of ONE model: submission folders, run folders or results files"

    def import_(self, paths: Sequence[str | Path], store: StoreLike = None, **options: Any) -> str:
        from aeh.importers._terminal_bench import import_terminal_bench  # heavy: loaded on first use (polars)

        return import_terminal_bench(paths, db=store, **options)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("dirs", nargs="+", metavar="PATH",
                            help="a submission folder (run folders, flat <timestamp>_results.json files, or one "
                                 "results.json with several trials per task), run folders or results files, "
                                 "in attempt order")
        parser.add_argument("--model", help="model name (default: from the submission folder, e.g. "
                                            "claude-4-1-opus, else run_metadata.json's model_name)")
        parser.add_argument("--agent", help="agent name (default: run_metadata.json's agent_name, else the "
                                            "submission folder)")
        parser.add_argument("--dataset", metavar="NAME@VERSION",
                            help="the dataset, when neither run_metadata.json nor the enclosing folder names it")
        parser.add_argument("--null-as", default="failure", metavar="POLICY", help=_NULL_AS_HELP)
        add_price_table_argument(parser)

    def cli_call(self, args: argparse.Namespace) -> tuple[list[str], dict[str, Any]]:
        return list(args.dirs), {"model": args.model, "null_as": args.null_as, "dataset": args.dataset,
                                 "agent": args.agent, "price_table": args.price_table}


class TrajectoryImporter:
    name = "trajectory"
    help = "aeh trajectory files (JSON Lines or JSON, any language), graded against a suite"

    def import_(self, paths: Sequence[str | Path], store: StoreLike = None, **options: Any) -> str:
        from aeh.importers._trajectory import import_trajectory_files  # heavy: the engine and store

        if not options.get("suite"):
            raise ConfigError("a trajectory import grades against a suite: pass --suite NAME_OR_DIR")
        return import_trajectory_files(paths, store, **{k: v for k, v in options.items() if v is not None})

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_trajectory_arguments(parser)
        add_scoring_argument(parser)

    def cli_call(self, args: argparse.Namespace) -> tuple[list[str], dict[str, Any]]:
        return list(args.files), {"suite": args.suite, "tools": args.tools, "name": args.agent,
                                  "model_free": args.model_free, "price_table": args.price_table}


def add_scoring_argument(parser: argparse.ArgumentParser) -> None:
    """`--scoring PROFILE`: the scoring profile the imported run's trajectory dimensions are stored under."""
    # grading only when a command adds --scoring, so `aeh --help` stays fast
    from aeh.grading import SCORING_HELP

    parser.add_argument("--scoring", metavar="PROFILE", help=SCORING_HELP + " (default aeh)")


def add_price_table_argument(parser: argparse.ArgumentParser) -> None:
    """`--price-table`: the table recorded token counts are priced from (recorded costs stay as recorded)."""
    parser.add_argument("--price-table", metavar="YAML",
                        help="your own price table for the recorded token counts (default: the shipped one); "
                             "a cost the source recorded is kept as recorded")


def add_trajectory_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `aeh import trajectory` and `aeh grade`."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="trajectory files (.jsonl or .json)")
    parser.add_argument("--suite", required=True, help="the suite whose graders judge the trajectories")
    parser.add_argument("--tools", choices=["recorded", "rerun"], default="recorded",
                        help="keep recorded tool results (default) or re-run the calls through the suite's tools")
    parser.add_argument("--agent", default="recorded", help="the name the run records as its adapter")
    parser.add_argument("--model-free", action="store_true",
                        help="the agent calls no model: price attempts without model steps at $0 "
                             "(otherwise they are unpriced, not free)")
    add_price_table_argument(parser)


class OtelImporter:
    name = "otel"
    help = "OTLP JSON traces of an instrumented agent (gen_ai.*, OpenInference, OpenLLMetry), graded against a suite"

    def import_(self, paths: Sequence[str | Path], store: StoreLike = None, **options: Any) -> str:
        from aeh.importers._otel import import_otel_files  # heavy: the engine and store

        if not options.get("suite"):
            raise ConfigError("an OpenTelemetry import grades against a suite: pass --suite NAME_OR_DIR")
        return import_otel_files(paths, store, **{k: v for k, v in options.items() if v is not None})

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_trajectory_arguments(parser)
        parser.set_defaults(agent="otel")
        parser.add_argument("--task-attribute", default="aeh.task_id",
                            help="span or resource attribute holding the task id (default aeh.task_id)")
        parser.add_argument("--attempt-attribute", default="aeh.attempt",
                            help="attribute holding the attempt number (default aeh.attempt; absent: file order)")

    def cli_call(self, args: argparse.Namespace) -> tuple[list[str], dict[str, Any]]:
        return list(args.files), {"suite": args.suite, "tools": args.tools, "name": args.agent,
                                  "model_free": args.model_free, "price_table": args.price_table,
                                  "task_attribute": args.task_attribute,
                                  "attempt_attribute": args.attempt_attribute}


class InspectImporter:
    name = "inspect"
    help = "Inspect AI eval logs (.eval or .json) of one task and model: samples × epochs (needs the inspect extra)"

    def import_(self, paths: Sequence[str | Path], store: StoreLike = None, **options: Any) -> str:
        from aeh.importers._inspect import import_inspect_logs  # heavy: inspect-ai and the store

        return import_inspect_logs(paths, store, **{k: v for k, v in options.items() if v is not None})

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("logs", nargs="+", metavar="LOG",
                            help="Inspect log files (.eval or .json) of one task and model, in epoch order")
        parser.add_argument("--scorer", metavar="NAME",
                            help="the scorer whose value decides success (default: the log's only scorer; "
                                 "required when it has several)")
        parser.add_argument("--success-threshold", type=float, default=1.0, metavar="X",
                            help="success = the score read as a number >= X (default 1: C, true, 1 pass; "
                                 "P is 0.5, I and N are 0)")
        add_price_table_argument(parser)

    def cli_call(self, args: argparse.Namespace) -> tuple[list[str], dict[str, Any]]:
        return list(args.logs), {"scorer": args.scorer, "success_threshold": args.success_threshold,
                                 "price_table": args.price_table}


#: Name → importer. Built-ins here; plugins by the `aeh.importers` entry-point group.
importers: Registry[Importer] = Registry("importer", group="aeh.importers")
importers.register(TauBenchImporter.name, TauBenchImporter())
importers.register(TerminalBenchImporter.name, TerminalBenchImporter())
importers.register(TrajectoryImporter.name, TrajectoryImporter())
importers.register(OtelImporter.name, OtelImporter())
importers.register(InspectImporter.name, InspectImporter())
