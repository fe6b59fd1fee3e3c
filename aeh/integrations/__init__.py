"""Bridges to agent frameworks: `aeh.integrations.langgraph` (extra `aeh-harness[langgraph]`)."""
