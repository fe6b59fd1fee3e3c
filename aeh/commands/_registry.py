"""The command registry: one entry per `aeh` subcommand (built-ins and `aeh.commands` plugins)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Protocol

from aeh._registry import Registry

__all__ = ["Command", "commands"]


class Command(Protocol):
    """What a command module provides."""

    NAME: str
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser,
                      add_db: Callable[[argparse.ArgumentParser], None]) -> None: ...

    def main(self, args: argparse.Namespace) -> int: ...


#: Name → command module. The built-ins are registered in `aeh.commands`.
commands: Registry[Any] = Registry("command", group="aeh.commands")
