"""Adapters drive the agent under test: mock, single_shot, react, replay, command — and installed ones."""

from aeh.adapters._registry import Adapter, AdapterFactory, adapter_names, adapters, make_adapter
from aeh.adapters.command import CommandAdapter
from aeh.adapters.mock import MockAdapter
from aeh.adapters.react import ReactAdapter
from aeh.adapters.replay import ReplayAdapter
from aeh.adapters.single_shot import SingleShotAdapter

adapters.register("mock", MockAdapter)
adapters.register("react", ReactAdapter)
adapters.register("single_shot", SingleShotAdapter)
adapters.register("replay", ReplayAdapter)
adapters.register("command", CommandAdapter)

__all__ = ["Adapter", "AdapterFactory", "MockAdapter", "ReactAdapter", "ReplayAdapter", "SingleShotAdapter",
           "adapter_names", "adapters", "make_adapter"]
