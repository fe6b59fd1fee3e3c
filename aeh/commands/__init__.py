"""Subcommands beyond `tasks`, `run` and `runs`, one module each, discovered at start-up.

A module here defines `NAME`, `HELP`, `add_arguments(parser, add_db)` and `main(args) -> int`.
Keeping each command in its own module keeps `cli.py` thin and lets features bring their
commands along without touching each other.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}


def register(sub: Any, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        parser = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(parser, add_db)
        COMMANDS[module.NAME] = module.main
