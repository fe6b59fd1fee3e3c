"""Command-line flags generated from `RunSpec`: each option's flag, type, default and help come
from its one declaration, and parsed flags come back as `RunSpec` keyword arguments."""

from __future__ import annotations

import argparse
import typing
from typing import Any, Literal

from aeh.engine.runspec import RunSpec, option_meta

__all__ = ["add_spec_flags", "flag_names", "spec_values"]

Parser = argparse.ArgumentParser | argparse._ArgumentGroup


def flag_names(group: str | None = None) -> list[str]:
    """The options with an `aeh run` flag in this help group (None: the main group)."""
    return [n for n in RunSpec.model_fields if option_meta(n)["flag"] and option_meta(n)["group"] == group]


def add_spec_flags(parser: Parser, names: list[str], *, helps: dict[str, str] | None = None) -> None:
    """Add the flags of these options; `helps` replaces an option's help where a command means it
    differently (e.g. replay's default concurrency is the original run's)."""
    for name in names:
        field, meta = RunSpec.model_fields[name], option_meta(name)
        kwargs: dict[str, Any] = {"dest": name, "help": (helps or {}).get(name, field.description)}
        base = _base(name)
        if base is bool:
            kwargs["action"] = "store_false" if field.default else "store_true"
        else:
            if typing.get_origin(base) in (list, dict):
                kwargs["action"] = "append"
            elif typing.get_origin(base) is Literal and meta["choices"]:
                kwargs["choices"] = list(typing.get_args(base))
            elif base in (int, float):
                kwargs["type"] = base
            if meta["metavar"]:
                kwargs["metavar"] = meta["metavar"]
            kwargs["default"] = meta["cli_default"]  # None: not given, so the option's own default applies
        parser.add_argument(meta["flag"], **kwargs)


def spec_values(args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    """The parsed flags of these options, by option name. Flags left out (None, no items, a switch
    not thrown) are not given, so the option's default — or on resume the stored value — applies."""
    values = {}
    for name in names:
        value = getattr(args, name, None)
        unthrown = isinstance(value, bool) and value == RunSpec.model_fields[name].default
        if value not in (None, []) and not unthrown:
            values[name] = value
    return values


def _base(name: str) -> Any:
    """The option's type without None (and without pydantic's wrappers): what its flag parses.
    A text form wins over a structured one (`--fault-profile PATH`, not a dict)."""
    hint = typing.get_type_hints(RunSpec)[name]
    union = typing.get_origin(hint) in (typing.Union, type(int | None))
    args = [a for a in typing.get_args(hint) if a is not type(None)] if union else [hint]
    for arg in args:
        if arg in (bool, int, float, str) or typing.get_origin(arg) is Literal:
            return arg
    return args[0] if args else str
