"""Adapters drive the agent under test: mock, single_shot, react, replay."""

from aeh.adapters.base import Adapter, adapter_names, make_adapter

__all__ = ["Adapter", "adapter_names", "make_adapter"]
