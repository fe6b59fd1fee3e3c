"""Bridges to agent frameworks: `aeh.integrations.langgraph` (extra `aeh[langgraph]`)."""
