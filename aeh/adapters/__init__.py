"""Adapters drive the agent under test: mock, single_shot, react, replay, command — and installed ones."""

import typing as _typing

from aeh._util.lazy import lazy_exports as _lazy_exports
from aeh.adapters._registry import BUILTIN_ADAPTERS, Adapter, AdapterFactory, adapter_names, adapters, make_adapter

if _typing.TYPE_CHECKING:
    # one unwrapped line a module, so these imports read as the `_NAMES` table below does
    # isort: off
    from aeh.adapters._chat import DECLINE_TOOL
    from aeh.adapters._fidelity import tool_choice_ignored, tools_dropped_suspect
    from aeh.adapters._playback import TrajectoryAdapter, number_attempts
    from aeh.adapters.command import CommandAdapter
    from aeh.adapters.mock import MockAdapter
    from aeh.adapters.react import ReactAdapter
    from aeh.adapters.replay import ReplayAdapter
    from aeh.adapters.single_shot import SingleShotAdapter
    # isort: on

# Names not imported above load on first use (replay reads the store, which brings polars).
_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.adapters._registry": ("BUILTIN_ADAPTERS", "Adapter", "AdapterFactory", "adapter_names", "adapters",
                               "make_adapter"),
    "aeh.adapters._chat": ("DECLINE_TOOL",),
    "aeh.adapters._fidelity": ("tool_choice_ignored", "tools_dropped_suspect"),
    "aeh.adapters._playback": ("TrajectoryAdapter", "number_attempts"),
    "aeh.adapters.command": ("CommandAdapter",),
    "aeh.adapters.mock": ("MockAdapter",),
    "aeh.adapters.react": ("ReactAdapter",),
    "aeh.adapters.replay": ("ReplayAdapter",),
    "aeh.adapters.single_shot": ("SingleShotAdapter",),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES)
