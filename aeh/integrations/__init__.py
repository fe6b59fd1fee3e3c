"""Bridges to agent frameworks: `aeh.integrations.langgraph` (extra `aeh-harness[langgraph]`).

Also the worker side of the process executors (local worker processes and Ray), loaded on first use.
"""

import typing as _typing

from aeh._util.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    # isort: off
    from aeh.integrations._workers import WorkerSpec, price_fields
    # isort: on

_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.integrations._workers": ("WorkerSpec", "price_fields"),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES)
