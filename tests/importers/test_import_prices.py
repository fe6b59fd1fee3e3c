"""`--price-table` on the τ-bench and Terminal-Bench imports: reported token counts are priced,
and a run whose source reported none says exactly that."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from realdata_paths import OPUS, tb_runs

import aeh
from aeh.cli import main as cli_main

DATASET = Path(__file__).parent / "fixtures" / "terminal-bench-core@0.1.1"


def _prices(tmp_path: Path) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text('version: "test-1"\ndate: "2026-12-01"\nmodels:\n'
                    "  model-a: {input_per_mtok: 2.0, output_per_mtok: 8.0}\n")
    return path


def test_terminal_bench_token_counts_are_priced_from_the_table(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    sub = tmp_path / "terminal-bench-core@0.1.1" / "20250101_alpha_model-a"
    shutil.copytree(DATASET / "20250101_alpha_model-a", sub)
    results = sub / "run_1" / "results.json"
    data = json.loads(results.read_text())
    data["results"][0].update(total_input_tokens=1000, total_output_tokens=100)
    results.write_text(json.dumps(data))
    db = str(tmp_path / "r.db")
    assert cli_main(["import", "terminal-bench", str(sub / "run_1"), "--db", db]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert "cost unpriced (1100 tokens recorded of model 'model-a'" in line  # counts present: not "no token counts"
    assert cli_main(["import", "terminal-bench", str(sub / "run_1"), "--db", db,
                     "--price-table", str(_prices(tmp_path))]) == 0
    run_id = capsys.readouterr().out.splitlines()[0].strip()
    rows = aeh.attempts(run_id, db=db)
    priced = rows[rows["tokens_in"] > 0]
    assert priced["cost_usd"].tolist() == [pytest.approx((1000 * 2.0 + 100 * 8.0) / 1e6)]
    assert rows[rows["tokens_in"] == 0]["cost_usd"].isna().all()  # 0 = not reported: unpriced, not free
    assert aeh.runs(db=db).set_index("run_id").loc[run_id, "price_table_version"] == "test-1"


def test_tau_bench_accepts_a_price_table(tmp_path: Path) -> None:
    records = [{"task_id": 0, "trial": 0, "reward": 1.0, "info": {"reward_info": {}},
                "traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "done"}]}]
    f = tmp_path / "gpt-4o-airline.json"
    f.write_text(json.dumps(records))
    db = str(tmp_path / "r.db")
    assert cli_main(["import", "tau-bench", str(f), "--db", db, "--price-table", str(_prices(tmp_path))]) == 0
    assert aeh.runs(db=db).iloc[0]["price_table_version"] == "test-1"


def test_real_terminal_bench_run_keeps_recorded_agent_time(tb_dir: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    run = tb_runs(OPUS)[0]
    db = str(tmp_path / "r.db")
    assert cli_main(["import", "terminal-bench", str(run), "--db", db, "--price-table", str(_prices(tmp_path))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "cost unpriced (no token counts)" in out[1]  # droid reports 0 tokens: the message is the truth
    source = json.loads((run / "results.json").read_text())["results"]
    recorded = sorted((r["task_id"], dt.datetime.fromisoformat(r["agent_ended_at"]).timestamp()
                       - dt.datetime.fromisoformat(r["agent_started_at"]).timestamp()) for r in source
                      if r.get("agent_started_at") and r.get("agent_ended_at"))
    rows = aeh.attempts(out[0].strip(), db=db).sort_values("task_id")
    stored = dict(zip(rows["task_id"], rows["latency_s"], strict=True))
    assert len(recorded) > 70
    assert all(stored[task] == pytest.approx(seconds) for task, seconds in recorded)


def test_real_tau_bench_file_says_no_token_counts_because_it_has_none(tau_file: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "r.db")
    assert cli_main(["import", "tau-bench", str(tau_file), "--db", db, "--price-table", str(_prices(tmp_path))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "cost unpriced (no token counts)" in out[1]  # the file records no agent tokens: the message is true
    assert aeh.runs(db=db).iloc[0]["price_table_version"] == "test-1"
