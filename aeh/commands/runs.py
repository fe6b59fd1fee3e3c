"""`aeh runs`: the run index."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from aeh.errors import ExitCode

if TYPE_CHECKING:
    from aeh.models import RunConfig

NAME = "runs"
HELP = "list stored runs"

_HINTS = {  # statuses of runs that did not finish, and what to do about them
    "stale": " (its process is gone: aeh run --resume RUN_ID finishes it)",
    "interrupted": " (aeh run --resume RUN_ID finishes it)",
    "failed": " (aeh run --resume RUN_ID finishes it)",
}


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    add_db(parser)


def _stalled(config: RunConfig) -> str:
    health = config.health
    if health is None or not health.stalled:
        return ""
    return f" STALLED ({health.stall_s} s of harness stall: timings doubtful)"


def main(args: argparse.Namespace) -> int:
    from aeh.store import open_store  # heavy: loaded on first use (polars)

    with open_store(args.db, must_exist=True) as store:
        for info in store.runs():
            print(f"{info.run_id}  {info.created_at}  {info.suite:<12} {info.adapter:<11} "
                  f"{info.model or '-':<16} seed={info.seed} attempts={info.attempts} {info.status}"
                  + (_HINTS.get(info.status) or "") + _stalled(info.config))
    return ExitCode.OK
