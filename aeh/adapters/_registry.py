"""The adapter registry that resolves `--adapter NAME` (built-ins and `aeh.adapters` plugins).

The contract itself (`Adapter`) is the engine's: `aeh.engine.adapter`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aeh._util.registry import Registry
from aeh.engine.adapter import Adapter
from aeh.errors import ConfigError

__all__ = ["BUILTIN_ADAPTERS", "Adapter", "AdapterFactory", "adapter_names", "adapters", "make_adapter"]

#: Builds an adapter from options (`model=…` and the adapter's own); usually the adapter class.
AdapterFactory = Callable[..., Adapter]

#: The shipped adapters, imported when first asked for.
BUILTIN_ADAPTERS = {
    "mock": "aeh.adapters.mock:MockAdapter",
    "react": "aeh.adapters.react:ReactAdapter",
    "single_shot": "aeh.adapters.single_shot:SingleShotAdapter",
    "replay": "aeh.adapters.replay:ReplayAdapter",
    "command": "aeh.adapters.command:CommandAdapter",
}

#: Name → factory: the built-ins above, then `aeh.adapters` entry points.
adapters: Registry[AdapterFactory] = Registry("adapter", group="aeh.adapters", builtins=BUILTIN_ADAPTERS)


def adapter_names() -> list[str]:
    """Every adapter name `make_adapter` accepts."""
    return adapters.names()


def make_adapter(name: str, **options: Any) -> Adapter:
    """Build the adapter registered as `name` with `options`."""
    if name not in adapters:
        raise ConfigError(f"unknown adapter {name!r} — choose one of: {', '.join(adapter_names())}")
    return adapters.get(name)(**options)
