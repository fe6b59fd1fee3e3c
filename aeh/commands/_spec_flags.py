"""Command-line flags generated from `RunSpec`: each option's flag, type, default and help come
from its one declaration, and parsed flags come back as `RunSpec` keyword arguments."""

from __future__ import annotations

import argparse
import typing
from typing import Any, Literal

from aeh.engine.runspec import RunSpec, option_meta

__all__ = ["add_adapter_flags", "adapter_flag_values", "add_spec_flags", "flag_names", "spec_values"]

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


def add_adapter_flags(parser: argparse.ArgumentParser) -> None:
    """Each flagged adapter's options as flags, under the adapter's help heading (with the run
    options declared in that heading), from their declaration in the adapter's options model."""
    # the adapters' options models (pydantic) only for `aeh run`'s parser
    from aeh.adapters.options import flag_meta, options_models

    for adapter, model in options_models().items():
        group = parser.add_argument_group(getattr(model, "group", None) or f"--adapter {adapter}")
        for name, field in model.model_fields.items():
            meta = flag_meta(model, name)
            if not meta.get("flag"):
                continue
            kwargs: dict[str, Any] = {"dest": name, "help": field.description}
            if meta["negate"]:
                kwargs.update(action="store_false", default=None)
            elif field.annotation is bool:
                kwargs.update(action="store_true", default=None)
            else:
                kwargs.update(type=meta["parse"] or str, metavar=meta["metavar"], choices=meta["choices"])
            group.add_argument(meta["flag"], **{k: v for k, v in kwargs.items() if v is not None or k == "default"})
        add_spec_flags(group, flag_names(getattr(model, "group", None)))


def adapter_flag_values(args: argparse.Namespace) -> dict[str, Any]:
    """The adapter options the flags give (for `args.adapter`); a ConfigError for an adapter's
    flags given with another adapter, or a required flag left out."""
    # the adapters' options models (pydantic) only for `aeh run`'s parser
    from aeh.adapters.options import flag_meta, options_models
    from aeh.errors import ConfigError

    out: dict[str, Any] = {}
    for adapter, model in options_models().items():
        flagged = {name: flag_meta(model, name) for name in model.model_fields if flag_meta(model, name).get("flag")}
        given = {name: getattr(args, name) for name in flagged if getattr(args, name, None) is not None}
        theirs = [n for n in getattr(model, "run_options", ()) if getattr(args, n, None) not in (None, []) and
                  getattr(args, n) != RunSpec.model_fields[n].default]
        if args.adapter == adapter:
            missing = [m["flag"] for name, m in flagged.items() if m["required_flag"] and name not in given]
            if missing:
                raise ConfigError(f"--adapter {adapter} needs {' and '.join(missing)} — see `aeh run --help` "
                                  f"({getattr(model, 'group', None) or adapter})")
            out.update(given)
        elif given or theirs:
            flags = ", ".join([flagged[name]["flag"] for name in given] + [option_meta(n)["flag"] for n in theirs])
            raise ConfigError(f"{flags} belong(s) to --adapter {adapter}: add --adapter {adapter}, or leave them out")
    return out


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
