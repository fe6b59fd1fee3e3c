"""Fixtures for the live-adapter tests: a loopback OpenAI-compatible server and a runner.

Everything goes through the real `openai` client and real HTTP on 127.0.0.1
(`aeh.testing.openai_server.FakeOpenAIServer`); nothing patches the client.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from adapters_support import MODEL, Result, TinySuite, calc_task

from aeh.api import run
from aeh.models import Task
from aeh.testing.openai_server import FakeOpenAIServer


@pytest.fixture
def server() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """`server(replies_or_responder)` starts a FakeOpenAIServer; all are stopped afterwards."""
    started: list[FakeOpenAIServer] = []

    def start(replies: Any = (), **server_options: Any) -> FakeOpenAIServer:
        s = FakeOpenAIServer(replies, **server_options).start()
        started.append(s)
        return s

    yield start
    for s in started:
        # shutdown() waits out serve_forever's 0.5 s poll; do it off the test's critical path.
        threading.Thread(target=s.stop, daemon=True).start()


@pytest.fixture
def run_live(db: Path) -> Iterator[Callable[..., Result]]:
    """Run `adapter` (name or instance) on `tasks` against `server`; returns a Result."""
    results: list[Result] = []

    def go(srv: FakeOpenAIServer | None, tasks: list[Task] | None = None, *, adapter: Any = "react",
           attempts: int = 1, concurrency: int = 1, seed: int = 7, run_options: dict | None = None,
           suite: Any = None, **options: Any) -> Result:
        adapter_options = {"retries": 2, "backoff_s": 0.01, "timeout_s": 10.0}
        if srv is not None:
            adapter_options["base_url"] = srv.base_url
            adapter_options["api_key"] = "test-key"
        adapter_options.update(options)
        kwargs: dict[str, Any] = {}
        if isinstance(adapter, str):
            kwargs = {"model": MODEL, "adapter_options": adapter_options}
        table = run(suite or TinySuite(tasks or [calc_task()]), adapter, attempts=attempts,
                    concurrency=concurrency, seed=seed, db=db, **kwargs, **(run_options or {}))
        results.append(Result(table, db))
        return results[-1]

    yield go
    for result in results:
        result.close()

