"""Adapters drive the agent under test: mock, single_shot, react, replay, command — and installed ones."""

import typing as _typing

from aeh._util.lazy import lazy_getattr as _lazy_getattr
from aeh.adapters._registry import BUILTIN_ADAPTERS, Adapter, AdapterFactory, adapter_names, adapters, make_adapter

if _typing.TYPE_CHECKING:
    from aeh.adapters._chat import DECLINE_TOOL
    from aeh.adapters._fidelity import tool_choice_ignored, tools_dropped_suspect
    from aeh.adapters._playback import TrajectoryAdapter, number_attempts
    from aeh.adapters.command import CommandAdapter
    from aeh.adapters.mock import MockAdapter
    from aeh.adapters.react import ReactAdapter
    from aeh.adapters.replay import ReplayAdapter
    from aeh.adapters.single_shot import SingleShotAdapter

# heavy: loaded on first use (replay reads the store, which brings polars)
_LAZY = {target.rpartition(":")[2]: target.partition(":")[0] for target in BUILTIN_ADAPTERS.values()}

_LAZY.update({
    "DECLINE_TOOL": "aeh.adapters._chat",
    "tool_choice_ignored": "aeh.adapters._fidelity",
    "tools_dropped_suspect": "aeh.adapters._fidelity",
    "TrajectoryAdapter": "aeh.adapters._playback",
    "number_attempts": "aeh.adapters._playback",
})


__getattr__ = _lazy_getattr(__name__, _LAZY)


__all__ = [
    "BUILTIN_ADAPTERS",
    "DECLINE_TOOL",
    "Adapter",
    "AdapterFactory",
    "CommandAdapter",
    "MockAdapter",
    "ReactAdapter",
    "ReplayAdapter",
    "SingleShotAdapter",
    "TrajectoryAdapter",
    "adapter_names",
    "adapters",
    "make_adapter",
    "number_attempts",
    "tool_choice_ignored",
    "tools_dropped_suspect",
]
