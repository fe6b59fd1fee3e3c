"""The command adapter: any shell solver, its timeout, output capture, usage and sandbox."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import aeh
from aeh.adapters.command import OUTPUT_CAP_BYTES, CommandAdapter
from aeh.errors import AdapterError, ConfigError
from aeh.grading._sandbox import probe_sandbox
from tests.coding_support import LoopbackServer, mini_suite, network_fixture, run_coding

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    return mini_suite(tmp_path_factory.mktemp("coding") / "suite", ("csv_dedup",))


def _spans(db: Path, run_id: str, name: str) -> list[dict]:
    frame = aeh.spans(run_id, db=db)
    return [a for n, a in zip(frame["name"], aeh.span_attributes(frame), strict=True) if n == name]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split(")")[-1].split()[0] != "Z"


def test_timeout_kills_the_whole_process_group(suite, tmp_path, db):
    pids = tmp_path / "pids"
    solver = f"sleep 300 & echo $! > {pids}; sh -c 'sleep 300' & echo $! >> {pids}; sleep 300"
    started = time.monotonic()
    table = run_coding(suite, db, solver, adapter_options={"timeout_s": 1.5})
    assert time.monotonic() - started < 30
    assert table["fail_budget_exhausted"].tolist() == [1]
    children = [int(p) for p in pids.read_text().split()]
    assert len(children) == 2
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in children)
    span = _spans(db, table.run_id, "solver:command")[0]
    assert span["timed_out"] is True


def test_output_is_capped_kept_as_a_span_and_a_transcript(suite, tmp_path, db):
    solver = ("python3 -c \"import sys; sys.stdout.write('x' * 200000); sys.stderr.write('err-line')\"; "
              "echo 'key sk-abcdefghijklmnopqrstuvwxyz123456'")
    table = run_coding(suite, db, solver, keep_workspaces=True, work_dir=tmp_path / "ws")
    span = _spans(db, table.run_id, "solver:command")[0]
    assert span["stdout_bytes"] > OUTPUT_CAP_BYTES and span["truncated"] is True
    assert len(span["stdout"]) == OUTPUT_CAP_BYTES and span["stderr"] == "err-line"
    root = Path(table.run.config.workspace_root)
    transcript = (root / "csv_dedup" / "0.transcript.txt").read_text()
    assert "err-line" in transcript and "(truncated)" in transcript
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in transcript  # redacted like the spans


def test_prompt_and_workspace_reach_the_solver(suite, tmp_path, db):
    out = tmp_path / "seen.json"
    solver = (f"python3 -c \"import json, os; json.dump({{'prompt': os.environ['AEH_PROMPT'], 'cwd': os.getcwd(), "
              f"'files': sorted(os.listdir('.'))}}, open('{out}', 'w'))\"")
    run_coding(suite, db, solver, workspace_retention=0)
    seen = json.loads(out.read_text())
    assert "dedup.py" in seen["prompt"]
    assert seen["files"] == ["PROMPT.md", "dedup.py", "tests_public"]
    assert (Path(seen["cwd"]) / "PROMPT.md").exists() is False  # the workspace is gone: retention 0 keeps none


USAGE = "printf '%s' '{usage}' > \"$AEH_USAGE_FILE\""


@pytest.mark.parametrize(("usage", "prices", "cost", "provenance"), [
    ('{"tokens_in": 1000000, "tokens_out": 200000}', (2.0, 10.0), 4.0, "--price-in/--price-out"),
    ('{"tokens_in": 10, "tokens_out": 5, "cost_usd": 0.25}', None, 0.25, "solver-reported cost_usd"),
    ('{"tokens_in": 10, "tokens_out": 5}', None, None, "no price given"),
    ('not json', None, None, "unreadable usage file"),
    ('{"tokens_in": 10, "tokens_out": 5, "cost_usd": NaN}', None, None, "NaN is not a JSON number"),
    ('{"tokens_in": 10, "tokens_in": 99999, "tokens_out": 5}', None, None, "duplicate key"),
    ('[' * 5000 + ']' * 5000, None, None, "unreadable usage file"),
    (None, None, None, "no usage file"),
], ids=["prices", "cost", "no-price", "not-json", "nan", "duplicate-key", "deep", "none"])
def test_usage_ingestion_and_pricing(suite, db, usage, prices, cost, provenance):
    options = {"label": "priced"}
    if prices:
        options.update(price_in=prices[0], price_out=prices[1])
    solver = USAGE.format(usage=usage) if usage else "true"
    table = run_coding(suite, db, solver, adapter_options=options)
    attempt = aeh.attempts(table.run_id, db=db).iloc[0]
    if cost is None:
        assert attempt["cost_usd"] is None or attempt["cost_usd"] != attempt["cost_usd"]
    else:
        assert attempt["cost_usd"] == pytest.approx(cost)
    span = _spans(db, table.run_id, "solver:usage")[0]
    assert provenance in span["cost_provenance"] and span["cost_provenance"].startswith("solver-reported")
    assert table.run.config.facts["cost_provenance"] == "solver-reported"
    assert table.run.model == "priced"


def test_concurrent_attempts_each_get_their_own_workspace(tmp_path, db):
    suite = mini_suite(tmp_path / "suite", ("csv_dedup", "lru_eviction"))
    marks = tmp_path / "marks"
    marks.mkdir()
    # Each attempt writes its id into its workspace, waits, and checks nobody else's id arrived.
    solver = (f'echo "$AEH_TASK_ID-$AEH_ATTEMPT" > mine.txt; sleep 0.5; '
              f'test "$(cat mine.txt)" = "$AEH_TASK_ID-$AEH_ATTEMPT" && touch "{marks}/$AEH_TASK_ID-$AEH_ATTEMPT"; '
              f'cp "{suite}/$AEH_TASK_ID/reference/"*.py .')
    started = time.monotonic()
    table = run_coding(suite, db, solver, attempts=3, concurrency=4)
    assert len(list(marks.iterdir())) == 6
    assert table["successes"].tolist() == [3, 3]
    spans = aeh.spans(table.run_id, db=db)
    solver_spans = spans[spans["name"] == "solver:command"]
    starts, ends = solver_spans["start_ts"].to_numpy(), solver_spans["end_ts"].to_numpy()
    overlapping = sum(1 for i in range(len(starts)) for j in range(len(starts))
                      if i < j and starts[i] < ends[j] and starts[j] < ends[i])
    assert overlapping >= 1, "attempts did not run concurrently"
    assert time.monotonic() - started < 60


def test_same_seed_same_verdicts(suite, db):
    a = run_coding(suite, db, "reference", attempts=2, seed=7)
    b = run_coding(suite, db, "reference", attempts=2, seed=7)
    n = run_coding(suite, db, "noop", attempts=2, seed=7)
    assert a["successes"].tolist() == b["successes"].tolist() == [2]
    assert n["successes"].tolist() == [0]


def test_a_command_that_cannot_start_is_a_harness_error(suite, db):
    table = run_coding(suite, db, "definitely-not-a-command-aeh")
    assert table["harness_errors"].tolist() == [1]


def test_bad_adapter_options_are_config_errors(suite):
    with pytest.raises(AdapterError, match="both --price-in and --price-out"):
        CommandAdapter(solver="true", price_in=1.0)
    with pytest.raises(AdapterError, match="--solver"):
        CommandAdapter(solver=" ")
    from aeh.cli import main

    assert main(["run", "--suite", str(suite), "--adapter", "command"]) == 2
    assert main(["run", "--suite", "smoke", "--solver", "noop"]) == 2
    with pytest.raises(ConfigError):
        from aeh.cli import build_parser
        from aeh.commands.run import _spec_options

        _spec_options(build_parser().parse_args(["run", "--suite", "x", "--adapter", "command"]))


def test_sandbox_solver_denies_the_solver_network(tmp_path, db):
    if probe_sandbox().mode != "unshare":
        pytest.skip(f"no network sandbox here ({probe_sandbox().mode})")
    with LoopbackServer() as server:
        suite = network_fixture(tmp_path / "net", server.port)
        probe = (f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {server.port}), timeout=2)\" "
                 f"&& echo reached || echo denied")
        open_run = run_coding(suite, db, probe)
        closed = run_coding(suite, db, probe, adapter_options={"sandbox_solver": True}, seed=2)
        out_open = _spans(db, open_run.run_id, "solver:command")[0]
        out_closed = _spans(db, closed.run_id, "solver:command")[0]
        assert out_open["stdout"].strip() == "reached" and out_open["network"] == "allowed"
        assert out_closed["stdout"].strip() == "denied" and out_closed["network"] == "denied"
        assert closed.run.config.facts["solver_sandbox"] == "unshare"


def test_a_usage_file_past_its_size_limit_is_refused_unread(suite, db):
    solver = "head -c 200000 /dev/zero | tr '\\0' ' ' > \"$AEH_USAGE_FILE\""
    table = run_coding(suite, db, solver, adapter_options={"label": "huge"})
    span = _spans(db, table.run_id, "solver:usage")[0]
    assert "unreadable usage file" in span["cost_provenance"] and "limit" in span["cost_provenance"]
