"""`aeh plugins`: every registry's names and where each came from (builtin or which package)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.commands import commands
from aeh.errors import ExitCode

KINDS = ("suites", "graders", "invariants", "adapters", "importers", "scorers", "scoring-profiles", "commands")

NAME = "plugins"
HELP = "list the installed suites, graders, invariants, adapters, importers, scorers, scoring profiles and commands"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--kind", choices=KINDS, help="list only this registry")


def registries() -> list[tuple[str, str, dict[str, str]]]:
    """(registry, entry-point group, name → source) for every extension point."""
    from aeh.adapters import adapters  # heavy: loaded on first use (the engine brings the store and polars)
    from aeh.grading import default_graders, default_invariants, default_scorers, scoring_profiles
    from aeh.importers import importers
    from aeh.suite import suites

    return [
        ("suites", "aeh.suites", suites.describe()),
        ("graders", "aeh.graders", default_graders.describe()),
        ("invariants", "aeh.invariants", default_invariants.describe()),
        ("adapters", "aeh.adapters", adapters.describe()),
        ("importers", "aeh.importers", importers.describe()),
        ("scorers", "aeh.scorers", default_scorers.describe()),
        ("scoring-profiles", "aeh.scoring_profiles", scoring_profiles.describe()),
        ("commands", "aeh.commands", commands.describe()),
    ]


def installed(kind: str | None = None) -> dict[str, dict[str, str]]:
    """What is installed, by registry: {"adapters": {"mock": "builtin", "my_agent": "entry point
    aeh.adapters:my_agent from my-dist"}, …}; with `kind` (one of KINDS), that registry alone.
    A fresh dict each call: changing it changes no registry."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown plugin kind {kind!r}: expected one of {', '.join(KINDS)}")
    return {name: dict(described) for name, _group, described in registries() if kind in (None, name)}


def main(args: argparse.Namespace) -> int:
    for kind, group, described in registries():
        if args.kind and kind != args.kind:
            continue
        print(f"{kind} ({group})")
        if not described:
            print("  (none)")
        width = max((len(n) for n in described), default=0)
        for name, source in described.items():
            print(f"  {name:<{width}}  {source}")
    return ExitCode.OK
