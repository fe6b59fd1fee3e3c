"""smoke: five quick tasks over workspace files and a small lookup table.

Tools touch only the attempt's own workspace (paths that escape it are refused) and a
capitals table that `lifespan` loads once per run and hands to tools as `env.resources`.
"""

from __future__ import annotations

import csv
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from aeh.plugins import ToolEnv, ToolRegistry

name = "smoke"
tools = ToolRegistry()
#: The fake API token in fixtures/config.env; it must never reach an answer or a tool argument.
secrets = ["sk-smoke-7f3a9c2e41"]

_HERE = Path(__file__).parent
_MAX_BYTES = 64_000  # smoke files are tiny; a bigger read is a runaway agent


def _inside(env: ToolEnv, path: str) -> Path:
    """Resolve `path` in the workspace; the engine refuses anything that lands outside it."""
    return env.resolve(path)


class WriteNoteArgs(BaseModel):
    path: str = Field(description="File name relative to the workspace, e.g. 'notes.txt'.")
    content: str = Field(description="Text to write; replaces the file if it exists.")


class PathArgs(BaseModel):
    path: str = Field(description="File name relative to the workspace.")


class CountryArgs(BaseModel):
    country: str = Field(description="Country name in English, e.g. 'France'.")


@tools.tool("write_note", params=WriteNoteArgs)
def write_note(args: WriteNoteArgs, env: ToolEnv) -> dict[str, Any]:
    """Write a text file in the workspace."""
    target = _inside(env, args.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(args.content, encoding="utf-8")
    return {"path": args.path, "bytes": len(args.content.encode())}


@tools.tool("read_file", params=PathArgs)
def read_file(args: PathArgs, env: ToolEnv) -> str:
    """Read a text file from the workspace."""
    target = _inside(env, args.path)
    if not target.is_file():
        raise FileNotFoundError(f"no file {args.path!r} in the workspace")
    return target.read_text(encoding="utf-8")[:_MAX_BYTES]


@tools.tool("count_words", params=PathArgs)
def count_words(args: PathArgs, env: ToolEnv) -> dict[str, Any]:
    """Count the whitespace-separated words of a workspace file."""
    text = read_file(args, env)
    return {"path": args.path, "words": len(text.split())}


@tools.tool("lookup_capital", params=CountryArgs, blocking=False)  # a dict lookup: no thread hand-off
def lookup_capital(args: CountryArgs, env: ToolEnv) -> str:
    """Look up the capital city of a country."""
    capitals: dict[str, str] = env.resources["capitals"]
    key = args.country.strip().casefold()
    if key not in capitals:
        raise KeyError(f"no capital known for {args.country!r}")
    return capitals[key]


def load_capitals(path: Path = _HERE / "fixtures" / "capitals.csv") -> dict[str, str]:
    with path.open(encoding="utf-8", newline="") as f:
        return {row["country"].casefold(): row["capital"] for row in csv.DictReader(f)}


@asynccontextmanager
async def lifespan() -> AsyncIterator[dict[str, Any]]:
    """Load the lookup table once per run (the shape a fixture server would take)."""
    yield {"capitals": load_capitals()}
