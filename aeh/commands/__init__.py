"""The `aeh` subcommands: one module each, all in one registry (`aeh.commands` entry points too).

A command is a module (or any object) with `NAME`, `HELP`, `add_arguments(parser, add_db)` and
`main(args) -> int`. Keeping each command in its own module keeps `cli.py` thin and lets features
bring their commands along without touching each other. Command modules import the library
inside `main`, so `aeh --help` stays fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from aeh.commands._exit import (
    EXIT_BAD_INPUT,
    EXIT_CANNOT_JUDGE,
    EXIT_INTERRUPTED,
    EXIT_INVALID_RUN,
    EXIT_NOT_ENOUGH_RUNS,
    EXIT_OK,
    EXIT_REGRESSION,
)
from aeh.commands._registry import BUILTIN_COMMANDS, Command, commands

__all__ = [
    "BUILTIN_COMMANDS",
    "EXIT_BAD_INPUT",
    "EXIT_CANNOT_JUDGE",
    "EXIT_INTERRUPTED",
    "EXIT_INVALID_RUN",
    "EXIT_NOT_ENOUGH_RUNS",
    "EXIT_OK",
    "EXIT_REGRESSION",
    "Command",
    "commands",
    "register",
]


def register(sub: Any, add_db: Callable[[argparse.ArgumentParser], None], *, only: str | None = None) -> None:
    """Add every registered command to the `aeh` parser: the core three first, then by name.

    With `only`, just that command gets its arguments (the others their name and help): building
    every command's options imports what they list (importers, suites), and one command line
    uses one command.
    """
    first = ["tasks", "run", "runs"]
    for name in first + [n for n in commands.names() if n not in first]:
        command = commands.get(name)
        parser = sub.add_parser(command.NAME, help=command.HELP, description=command.HELP)
        if only is None or name == only:
            command.add_arguments(parser, add_db)
