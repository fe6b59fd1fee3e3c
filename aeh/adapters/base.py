"""The adapter registry that resolves `--adapter NAME` (built-ins and `aeh.adapters` plugins).

The contract itself (`Adapter`) is the engine's: `aeh.engine.adapter`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aeh._registry import Registry
from aeh.engine.adapter import Adapter
from aeh.errors import ConfigError

__all__ = ["Adapter", "AdapterFactory", "adapter_names", "adapters", "make_adapter"]

#: Builds an adapter from options (`model=…` and the adapter's own); usually the adapter class.
AdapterFactory = Callable[..., Adapter]

#: Name → factory. Built-ins are registered in `aeh.adapters`; plugins by entry point.
adapters: Registry[AdapterFactory] = Registry("adapter", group="aeh.adapters")


def adapter_names() -> list[str]:
    """Every adapter name `make_adapter` accepts."""
    return adapters.names()


def make_adapter(name: str, **options: Any) -> Adapter:
    """Build the adapter registered as `name` with `options`."""
    if name not in adapters:
        raise ConfigError(f"unknown adapter {name!r} — choose one of: {', '.join(adapter_names())}")
    return adapters.get(name)(**options)
