#!/usr/bin/env python3
"""An example solver for `aeh run --adapter command`: ask an OpenAI-compatible model to rewrite
the task's entry files.

    aeh run --suite coding --adapter command --label gpt-4o-mini --price-in 0.15 --price-out 0.6 \
        --solver "python $PWD/examples/llm_solver.py --model gpt-4o-mini"

It runs in the attempt's workspace. It reads the task from $AEH_PROMPT, the files it may change
from $AEH_ENTRY_FILES (a JSON list), and the public tests from tests_public/; it sends them to
the model (the `openai` client: $OPENAI_BASE_URL and $OPENAI_API_KEY), writes back every entry
file the reply contains, and reports the tokens it used to $AEH_USAGE_FILE. One request, no
tools, no retries of its own: a baseline, not an agent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

SYSTEM = (
    "You fix bugs in small Python repositories. You are given the task, the files you may change and the "
    "public tests. Reply with the complete new content of every file you change, each as:\n"
    "FILE: <path>\n```python\n<entire file>\n```\nChange only the listed files. Handle the edge cases the "
    "task describes, not only what the public tests check."
)
BLOCK = re.compile(r"FILE:\s*`?([^\s`]+)`?\s*\n```[a-zA-Z0-9_+-]*\n(.*?)\n```", re.S)


def build_messages(prompt: str, files: dict[str, str], tests: dict[str, str]) -> list[dict[str, str]]:
    parts = [f"# Task\n{prompt.strip()}\n", "# Files you may change"]
    parts += [f"FILE: {path}\n```python\n{text}\n```" for path, text in files.items()]
    parts.append("# Public tests (read-only)")
    parts += [f"FILE: {path}\n```python\n{text}\n```" for path, text in tests.items()]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def parse_files(reply: str, allowed: list[str]) -> dict[str, str]:
    """The entry files the reply rewrote; anything else it names is ignored."""
    out = {}
    for path, body in BLOCK.findall(reply or ""):
        path = path.strip().removeprefix("./")
        if path in allowed:
            out[path] = body.rstrip("\n") + "\n"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("AEH_SOLVER_MODEL", "gpt-4o-mini"))
    parser.add_argument("--max-tokens", type=int, default=4096)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for the model request")
    args = parser.parse_args(argv)

    from openai import OpenAI  # aeh depends on it, so any aeh environment has it

    work = Path.cwd()
    prompt = os.environ.get("AEH_PROMPT") or (work / "PROMPT.md").read_text(encoding="utf-8")
    entry = json.loads(os.environ.get("AEH_ENTRY_FILES", "[]"))
    if not entry:
        print("AEH_ENTRY_FILES is empty: nothing to rewrite", file=sys.stderr)
        return 2
    files = {p: (work / p).read_text(encoding="utf-8") for p in entry if (work / p).is_file()}
    tests = {str(p.relative_to(work)): p.read_text(encoding="utf-8")
             for p in sorted((work / "tests_public").glob("*.py"))}

    client = OpenAI(max_retries=1, timeout=args.timeout)
    response = client.chat.completions.create(model=args.model, messages=build_messages(prompt, files, tests),
                                              max_tokens=args.max_tokens, temperature=0)
    usage = response.usage
    if os.environ.get("AEH_USAGE_FILE") and usage is not None:
        Path(os.environ["AEH_USAGE_FILE"]).write_text(json.dumps(
            {"tokens_in": usage.prompt_tokens or 0, "tokens_out": usage.completion_tokens or 0}))
    reply = response.choices[0].message.content or ""
    changed = parse_files(reply, entry)
    for path, text in changed.items():
        (work / path).write_text(text, encoding="utf-8")
    print(f"model {args.model}: rewrote {', '.join(changed) or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
