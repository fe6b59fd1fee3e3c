"""The command registry: one entry per `aeh` subcommand (built-ins and `aeh.commands` plugins)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Protocol

from aeh._util.registry import Registry

__all__ = ["BUILTIN_COMMANDS", "Command", "commands"]


class Command(Protocol):
    """What a command module provides."""

    NAME: str
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser,
                      add_db: Callable[[argparse.ArgumentParser], None]) -> None: ...

    def main(self, args: argparse.Namespace) -> int: ...


#: The shipped subcommands: name → the module that is the command (imported when first asked for).
BUILTIN_COMMANDS = {
    "tasks": "aeh.commands.tasks",
    "run": "aeh.commands.run",
    "runs": "aeh.commands.runs",
    "compare": "aeh.commands.compare",
    "drift": "aeh.commands.drift",
    "export": "aeh.commands.export",
    "grade": "aeh.commands.grade",
    "import": "aeh.commands.import_runs",
    "judge-agreement": "aeh.commands.judge_agreement",
    "plugins": "aeh.commands.plugins",
    "replay": "aeh.commands.replay",
    "report": "aeh.commands.report",
    "review": "aeh.commands.review",
    "trace": "aeh.commands.trace",
    "score": "aeh.commands.score",
    "baseline": "aeh.commands.baseline",
    "gate": "aeh.commands.gate",
    "matrix": "aeh.commands.matrix",
    "merge": "aeh.commands.merge",
    "notebooks": "aeh.commands.notebooks",
    "serve": "aeh.commands.serve",
    "validate": "aeh.commands.validate",
    "view": "aeh.commands.view",
}

#: Name → command: the built-ins above, then `aeh.commands` entry points.
commands: Registry[Command] = Registry("command", group="aeh.commands", builtins=BUILTIN_COMMANDS)
