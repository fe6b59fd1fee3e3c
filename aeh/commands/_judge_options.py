"""`--allow-unfinished`, shared by the commands that judge runs (compare, gate, drift, baseline save)."""

from __future__ import annotations

import argparse

__all__ = ["add_allow_unfinished"]


def add_allow_unfinished(parser: argparse.ArgumentParser, what: str) -> None:
    """The flag that accepts an unfinished run; `what` says what it then does with it."""
    parser.add_argument("--allow-unfinished", action="store_true",
                        help=f"{what} a run that is not finished (interrupted, stale, running) on the attempts it "
                             "has; refused otherwise (exit 4), as is a run with harness errors over the limit")
