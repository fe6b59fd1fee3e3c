"""Helpers for testing agents and suites offline: a scripted OpenAI-compatible server."""

from aeh.testing.openai_server import FakeOpenAIServer, Reply

__all__ = ["FakeOpenAIServer", "Reply"]
