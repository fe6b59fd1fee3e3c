"""`aeh export otel --endpoint` into a real Arize Phoenix on 127.0.0.1: the model spans' Input is there.

Phoenix (`pip install arize-phoenix`, best in a virtualenv of its own) is found through
`AEH_PHOENIX` (the path of its `phoenix` command) or on PATH; without it the test skips.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import aeh
from aeh.api import open_store
from aeh.cli import main as cli_main
from aeh.importers._otel import import_otel_files
from tests.process_support import stop_process

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _phoenix_command() -> str:
    found = os.environ.get("AEH_PHOENIX") or shutil.which("phoenix")
    if not found:
        pytest.skip("Phoenix is not installed: python -m venv /tmp/phoenix && /tmp/phoenix/bin/pip install "
                    "arize-phoenix, then AEH_PHOENIX=/tmp/phoenix/bin/phoenix")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    command = _phoenix_command()
    port = _free_port()
    work = tmp_path_factory.mktemp("phoenix")
    env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port), "PHOENIX_WORKING_DIR": str(work),
           "PHOENIX_GRPC_PORT": str(_free_port())}
    log = (work / "phoenix.log").open("w")
    proc = subprocess.Popen([command, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"phoenix serve exited with {proc.returncode}: see {work / 'phoenix.log'}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        else:
            pytest.fail(f"phoenix serve did not answer within 180 s: see {work / 'phoenix.log'}")
        yield url
    finally:
        stop_process(proc)
        log.close()


def _phoenix_spans(url: str, expected: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    data: list[dict[str, Any]] = []
    while time.monotonic() < deadline:  # Phoenix ingests in the background
        data = httpx.get(f"{url}/v1/projects/default/spans", params={"limit": 1000}, timeout=10).json()["data"]
        if len(data) >= expected:
            break
        time.sleep(1)
    return data


def _flat_messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if key.startswith(prefix) and key.endswith((".message.role", ".message.content")):
            index = int(key[len(prefix):].split(".")[0])
            out.setdefault(index, {})[key.rsplit(".", 1)[1]] = value
    return [out[i] for i in sorted(out)]


def test_phoenix_shows_each_model_calls_whole_input(phoenix: str, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = aeh.run("toy_math", adapter="mock", attempts=2, seed=4, db=db, progress=False).run_id
    with open_store(db) as store:
        spans = store.spans_frame(run_id)
    models = {sid: json.loads(a) for sid, cat, a in spans.select("span_id", "category", "attributes").iter_rows()
              if cat == "model"}
    assert cli_main(["export", "otel", run_id, "--db", str(db), "--endpoint", phoenix]) == 0

    got = {d["context"]["span_id"]: d for d in _phoenix_spans(phoenix, spans.height)}
    assert set(models) <= set(got)
    for span_id, attrs in models.items():
        shown = got[span_id]
        assert shown["span_kind"] == "LLM"
        sent = attrs["gen_ai.input.messages"]
        seen = _flat_messages(shown["attributes"], "llm.input_messages.")
        assert [m["role"] for m in seen] == [m["role"] for m in sent]
        assert [m.get("content") or "" for m in seen] == [m.get("content") or "" for m in sent]
    assert any(len(a["gen_ai.input.messages"]) >= 3 for a in models.values())

    # What Phoenix holds imports back with the same messages on every model span.
    phoenix_json = tmp_path / "phoenix.json"
    phoenix_json.write_text(json.dumps({"data": list(got.values())}))
    new_id = import_otel_files([phoenix_json], db, suite="toy_math")
    with open_store(db) as store:
        back = [json.loads(a)["gen_ai.input.messages"] for (a,) in
                store.spans_frame(new_id).filter(category="model").sort("task_id", "attempt", "start_ts")
                .select("attributes").iter_rows()]
        before = [json.loads(a)["gen_ai.input.messages"] for (a,) in
                  spans.filter(category="model").sort("task_id", "attempt", "start_ts").select("attributes").iter_rows()]
    assert back == before
