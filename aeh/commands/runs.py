"""`aeh runs`: the run index."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.commands._exit import EXIT_OK

NAME = "runs"
HELP = "list stored runs"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    from aeh.store import open_store  # heavy: loaded on first use (polars)

    with open_store(args.db, must_exist=True) as store:
        for info in store.runs():
            print(f"{info.run_id}  {info.created_at}  {info.suite:<12} {info.adapter:<11} "
                  f"{info.model or '-':<16} seed={info.seed} attempts={info.attempts} {info.status}"
                  + (" (process gone: aeh run --resume to finish it)" if info.status == "stale" else ""))
    return EXIT_OK
