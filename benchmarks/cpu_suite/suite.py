"""cpu_burn: tasks whose one tool burns ~50 ms of CPU, for the Ray speed-up benchmark.

The work holds the GIL, so one process runs it on one core however many attempts are in
flight; Ray workers are separate processes and use every core they are given.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from pydantic import BaseModel, Field

from aeh.tools._tools import ToolEnv, ToolRegistry

name = "cpu_burn"
tools = ToolRegistry()


class BurnArgs(BaseModel):
    ms: float = Field(50.0, description="CPU milliseconds to burn.")


@tools.tool("burn", params=BurnArgs)
def burn(args: BurnArgs, env: ToolEnv) -> dict[str, Any]:
    """Hash in a loop for `ms` milliseconds of CPU time; returns how many rounds that took."""
    digest, rounds = b"aeh", 0
    deadline = time.thread_time() + args.ms / 1000
    while time.thread_time() < deadline:
        for _ in range(200):
            digest = hashlib.sha256(digest).digest()
        rounds += 200
    return {"rounds": rounds}
