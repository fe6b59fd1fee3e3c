"""Adapter options declared as a model: each option once, with its type, default, bounds, help and
(when it has one) its `aeh run` flag.

An adapter that takes options names its model (`options_model`, a subclass of `AdapterOptions`);
from that one declaration come the adapter's `aeh run` flags (`aeh/commands/_spec_flags.py`,
`add_adapter_flags`), the keywords `aeh.run(adapter=NAME, …)` accepts beside the run options
(routed into `adapter_options`), the ConfigError for an unknown or bad value, and the run
options the adapter implies when they are not given (`run_defaults`), the same from the API and
the command line.

    class CommandOptions(AdapterOptions):
        group: ClassVar[str] = "coding suites (--adapter command)"
        solver: str = adapter_option("noop", "shell command run in each attempt's workspace", flag="--solver")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aeh._util.registry import load_object
from aeh.errors import ConfigError

__all__ = ["BUILTIN_OPTIONS", "FLAGGED", "AdapterOptions", "adapter_option", "flag_meta", "options_model",
           "options_models", "route_adapter_keywords"]

#: The options models of the shipped adapters that take options, imported when first asked for
#: (an installed adapter names its own through the `options_model` attribute of its factory).
BUILTIN_OPTIONS = {
    "command": "aeh.adapters._command_options:CommandOptions",
    "react": "aeh.adapters._chat:ChatOptions",
    "single_shot": "aeh.adapters._chat:ChatOptions",
}


def adapter_option(default: Any = None, help: str = "", *, flag: str | None = None, metavar: str | None = None,
                   negate: bool = False, parse: Any = None, choices: tuple[str, ...] | None = None,
                   required_flag: bool = False, **bounds: Any) -> Any:
    """One adapter option: a pydantic `Field` whose extra metadata the command line reads.

    `flag`: its `aeh run` flag (None: only by keyword or `--adapter-option KEY=VALUE`);
    `negate`: a bool flag that turns the option off (`--no-…`); `parse`: the flag's argparse
    `type`; `required_flag`: the command line needs the flag with this adapter."""
    meta = {"flag": flag, "metavar": metavar, "negate": negate, "parse": parse, "choices": choices,
            "required_flag": required_flag}
    return Field(default, description=help, json_schema_extra=meta, **bounds)


def flag_meta(model: type[BaseModel], name: str) -> dict[str, Any]:
    """The `adapter_option` metadata of one field ({} for a plain field)."""
    extra = model.model_fields[name].json_schema_extra
    return dict(extra) if isinstance(extra, dict) else {}


class AdapterOptions(BaseModel):
    """Base of an adapter's options model: frozen, unknown names refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    group: ClassVar[str | None] = None
    """The `aeh run --help` heading the adapter's flags are listed under."""
    run_options: ClassVar[tuple[str, ...]] = ()
    """Run options only this adapter reads: given with another adapter, the command line refuses them."""

    @classmethod
    def run_defaults(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Run options this adapter implies, from the run options `given` (name → value): applied
        when not given, by `aeh.run` and the command line alike."""
        return {}

    @classmethod
    def parse(cls, adapter: str, options: Mapping[str, Any]) -> Self:
        """The options of `adapter`; a ConfigError names each unknown or invalid one."""
        known = set(cls.model_fields)
        unknown = sorted(set(options) - known)
        if unknown:
            raise ConfigError(f"unknown {adapter} adapter option(s): {', '.join(unknown)} — known: "
                              f"{', '.join(sorted(known))}")
        try:
            return cls(**{k: v for k, v in options.items() if v is not None})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(part) for part in e['loc'])}={e.get('input')!r}: {e['msg']}"
                                 for e in exc.errors())
            raise ConfigError(f"bad {adapter} adapter option: {problems}") from None


def options_model(adapter: object) -> type[BaseModel] | None:
    """The options model of an adapter named `adapter` (a shipped one, or an installed one whose
    factory has `options_model`); None for an adapter object or one without options."""
    if not isinstance(adapter, str):
        return None
    if adapter in BUILTIN_OPTIONS:
        model = load_object(BUILTIN_OPTIONS[adapter])
    else:
        from aeh.adapters._registry import adapters  # loaded on first use: entry points are scanned

        if adapter not in adapters:
            return None
        model = getattr(adapters.get(adapter), "options_model", None)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _refuse_others(adapter: object, options: Mapping[str, Any]) -> None:
    """As `aeh run` refuses `--solver` without `--adapter command`: an option of another adapter's
    model, or a run option that adapter declares as its own, given a value here is a ConfigError
    naming the adapter it belongs to."""
    # the run options' defaults: aeh.run has loaded RunSpec already, `aeh run --help` need not
    from aeh.engine.runspec import RunSpec

    for name, model in options_models().items():
        if name == adapter:
            continue
        theirs = [k for k in model.model_fields if options.get(k) is not None]
        theirs += [k for k in getattr(model, "run_options", ()) if options.get(k) not in (None, [])
                   and options[k] != RunSpec.model_fields[k].default]
        if theirs:
            raise ConfigError(f"{', '.join(theirs)} belong(s) to adapter {name!r}: pass adapter={name!r}, "
                              "or leave them out")


#: The shipped adapters whose options have `aeh run` flags. The live adapters' (react,
#: single_shot) are set with `--adapter-option KEY=VALUE`: their module loads the HTTP stack,
#: which `aeh run --help` should not pay for.
FLAGGED = ("command",)


def options_models() -> dict[str, type[BaseModel]]:
    """The options models `aeh run` makes flags of, by adapter name."""
    return {name: load_object(BUILTIN_OPTIONS[name]) for name in FLAGGED}


def route_adapter_keywords(adapter: object, options: dict[str, Any]) -> dict[str, Any]:
    """`aeh.run` keywords that are options of `adapter`'s model, moved into `adapter_options`, and
    the run options the adapter implies added where not given. Returns the new options."""
    _refuse_others(adapter, options)
    model = options_model(adapter)
    if model is None:
        return options
    out = dict(options)
    mine = {k: out.pop(k) for k in list(out) if k in model.model_fields}
    if mine:
        given = dict(out.get("adapter_options") or {})
        both = sorted(set(mine) & set(given))
        if both:
            raise ConfigError(f"adapter option(s) {', '.join(both)} given both by keyword and in adapter_options "
                              "— give each once")
        out["adapter_options"] = {**given, **mine}
    defaults = getattr(model, "run_defaults", None)
    if callable(defaults):
        for name, value in defaults(out).items():
            if out.get(name) is None:
                out[name] = value
    return out
