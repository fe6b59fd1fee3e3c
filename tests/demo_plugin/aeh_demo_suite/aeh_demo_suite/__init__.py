"""A suite built in code (no YAML, no directory): what a third-party plugin may ship."""

from __future__ import annotations

from aeh.plugins import GoldenTrace, Invariant, Task, ToolEnv, ToolRegistry, registered_invariants

_TASKS = [
    {
        "id": "reverse_word",
        "prompt": "Reverse the word 'stressed' using the tool.",
        "tools": ["reverse"],
        "plan": [{"tool": "reverse", "args": {"text": "stressed"}}],
        "reference_answer": "desserts",
        "graders": [{"kind": "exact", "expected": "desserts"}],
        "invariants": ["tools_within_allowlist", "answer_under_200_chars"],
    },
    {
        "id": "reverse_twice",
        "prompt": "Reverse 'level' and tell me whether it is a palindrome.",
        "tools": ["reverse"],
        "plan": [{"tool": "reverse", "args": {"text": "level"}}],
        "reference_answer": "Yes, 'level' is a palindrome.",
        "graders": [{"kind": "contains", "all_of": ["palindrome"]},
                    {"kind": "palindrome_verdict", "word": "level"}],
    },
]


class DemoSuite:
    def __init__(self, name: str, tasks: list[dict]) -> None:
        self.name = name
        self._tasks = [Task.model_validate(t) for t in tasks]
        self._tools = ToolRegistry()

        @self._tools.tool("reverse")
        def reverse(args: dict, env: ToolEnv) -> str:
            """Reverse a string."""
            return str(args["text"])[::-1]

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def tool_registry(self) -> ToolRegistry:
        return self._tools

    def invariants(self) -> dict[str, Invariant]:
        return registered_invariants()  # the built-ins and installed ones (this package's too)

    def golden_traces(self) -> dict[str, GoldenTrace]:
        return {}


def make_suite() -> DemoSuite:
    return DemoSuite("demo_plugin", _TASKS)


SUITE = DemoSuite("demo_plugin_object", _TASKS)


def make_broken_suite() -> DemoSuite:
    """A plugin with a mistake the loader must catch: a task names a tool nobody registered."""
    broken = [dict(_TASKS[0], tools=["reverse", "uppercase"])]
    return DemoSuite("demo_plugin_broken", broken)
