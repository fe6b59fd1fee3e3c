"""`aeh merge A.db B.db … --into runs.db`: join the stores of a run's shards into one run."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.errors import ExitCode

NAME = "merge"
HELP = "merge the stores of a run's shards (aeh run --shard I/N) into one store, by run id"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("sources", nargs="+", metavar="SHARD_DB", help="the runs.db each shard wrote")
    parser.add_argument("--into", required=True, metavar="DB",
                        help="the store to merge into (created if absent; may already hold some shards)")
    parser.add_argument("--run-id", help="which run to merge when the shard stores hold more than one")


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use (the store pulls in polars)
    from aeh.store import merge_stores

    result = merge_stores(args.sources, args.into, run_id=args.run_id)
    print(result.message())
    return ExitCode.OK
