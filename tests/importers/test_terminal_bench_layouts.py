"""Every published Terminal-Bench layout imports and reproduces the submission's own accuracy.

Fixtures (tests/importers/fixtures, hand-written): run folders with metadata, flat
`<timestamp>_results.json` files, one results.json with n_attempts 5, run folders without metadata.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import aeh
from aeh.analysis import format_run_table, run_table
from aeh.errors import ValidationError
from aeh.importers import NullPolicy, discover_results, import_terminal_bench
from aeh.store import Store

DATASET = Path(__file__).parent / "fixtures" / "terminal-bench-core@0.1.1"
#: submission → (layout, model, agent, attempts per task)
LAYOUTS = {
    "20250101_alpha_model-a": ("run folders + metadata", "model-a", "Alpha Agent", 2),
    "20250102_beta_model-b": ("flat timestamp_results.json", "model-b", "beta", 3),
    "20250103_gamma_model-c": ("one results.json, n_attempts 5", "model-c", "GammaAgent", 5),
    "20250104_delta_model-d": ("run folders, no metadata", "model-d", "delta", 2),
}


def _files(submission: str) -> list[dict]:
    return [json.loads(f.read_text()) for f, _s, _r in discover_results([DATASET / submission])]


def source_accuracy(submission: str) -> float:
    """The leaderboard's figure: resolved / len(results) per file, averaged over the files."""
    per_file = [sum(r["is_resolved"] is True for r in d["results"]) / len(d["results"]) for d in _files(submission)]
    return sum(per_file) / len(per_file)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("layouts") / "runs.db")


@pytest.mark.parametrize("submission", sorted(LAYOUTS))
def test_layout_reproduces_the_source_accuracy(db: str, submission: str) -> None:
    _layout, model, agent, attempts = LAYOUTS[submission]
    rid = import_terminal_bench([DATASET / submission], db=db)
    table = aeh.load_run(rid, db=db)
    expected = source_accuracy(submission)
    assert all(d["accuracy"] == pytest.approx(sum(r["is_resolved"] is True for r in d["results"]) / len(d["results"]))
               for d in _files(submission))  # the fixture's own accuracy field agrees with its rows
    assert round(table.suite_rate, 4) == round(expected, 4)
    assert table.harness_errors == 0 and (table.table.n == attempts).all() and len(table) == 4
    info = table.run
    assert (info.model, info.config.facts["agent_name"], info.attempts) == (model, agent, attempts)
    assert info.suite == "terminal-bench:terminal-bench-core@0.1.1"
    assert info.config.facts["source_accuracy"]["mean"] == pytest.approx(expected)
    assert table.import_policy.startswith("null is_resolved as failure")


def test_suite_hash_is_the_same_with_or_without_metadata(db: str, tmp_path: Path) -> None:
    hashes = set()
    for submission in LAYOUTS:
        rid = import_terminal_bench([DATASET / submission], db=db)
        with Store(db) as store:
            hashes.add(store.run_info(rid).suite_hash)
    # outside a dataset folder and without metadata, --dataset names the suite
    moved = tmp_path / "20250104_delta_model-d"
    shutil.copytree(DATASET / "20250104_delta_model-d", moved)
    rid = import_terminal_bench([moved], db=db, dataset="terminal-bench-core@0.1.1")
    with Store(db) as store:
        hashes.add(store.run_info(rid).suite_hash)
        unnamed = store.run_info(import_terminal_bench([moved], db=db))
    assert len(hashes) == 1
    assert unnamed.suite == "terminal-bench:unknown@?" and unnamed.suite_hash not in hashes


def test_n_attempts_5_file_orders_trials_by_trial_name(db: str) -> None:
    rid = import_terminal_bench([DATASET / "20250103_gamma_model-c"], db=db)
    frame = aeh.attempts(rid, db=db).set_index(["task_id", "attempt"])
    assert sorted(frame.index.get_level_values("attempt").unique()) == [0, 1, 2, 3, 4]
    # hello-world trial 4 of 5 failed (listed second-to-last in the file)
    assert not frame.loc[("hello-world", 3), "success"] and frame.loc[("hello-world", 4), "success"]
    assert frame.loc[("count-lines", 2), "status"] == "gave_up"             # null, unknown_agent_error
    assert frame.loc[("fix-permissions", 4), "status"] == "budget_exhausted"  # null, test_timeout


def test_null_buckets_follow_the_failure_mode(db: str) -> None:
    rid = import_terminal_bench([DATASET / "20250101_alpha_model-a"], db=db)
    frame = aeh.attempts(rid, db=db).set_index(["task_id", "attempt"])
    assert frame.loc[("fix-permissions", 0), "failure_bucket"] == "wrong_answer"      # parse_error
    assert frame.loc[("count-lines", 1), "failure_bucket"] == "budget_exhausted"     # test_timeout
    assert frame.loc[("parse-logs", 1), "failure_bucket"] == "no_answer"             # unknown_agent_error: agent crash
    assert frame.loc[("parse-logs", 0), "success"]                                   # agent_timeout, resolved
    assert frame.loc[("count-lines", 0), "failure_bucket"] == "budget_exhausted"     # agent_timeout, not resolved
    config = aeh.load_run(rid, db=db).run.config.facts
    assert config["null_policy"] == {
        "null_as": "failure", "null_counts": {"parse_error": 1, "test_timeout": 1, "unknown_agent_error": 1},
        "null_buckets": {"parse_error": "wrong_answer", "test_timeout": "budget_exhausted",
                         "unknown_agent_error": "no_answer"}}


@pytest.mark.parametrize(("null_as", "errors"), [("harness_error", 3), ("harness_error:test_timeout,parse_error", 2),
                                                 ("harness_error:unknown_agent_error", 1)])
def test_null_as_harness_error_is_explicit_and_recorded(db: str, null_as: str, errors: int) -> None:
    rid = import_terminal_bench([DATASET / "20250101_alpha_model-a"], db=db, null_as=null_as)
    table = run_table(rid, db)
    assert table.harness_errors == errors and table.table.n.sum() == 8 - errors
    assert table.run.config.facts["null_policy"]["null_as"] == NullPolicy.parse(null_as).label
    assert f"null is_resolved as {NullPolicy.parse(null_as).label}" in table.import_policy
    assert "import policy: null is_resolved as" in format_run_table(table)


def test_bad_policy_names_the_option_and_the_fix(tmp_path: Path) -> None:
    for bad in ("skip", "harness_error:", "failure:parse_error", "harness_error:Parse Error"):
        with pytest.raises(ValidationError) as exc:
            import_terminal_bench([DATASET / "20250101_alpha_model-a"], db=tmp_path / "r.db", null_as=bad)
        assert exc.value.problems[0].field == "--null-as" and "harness_error:" in exc.value.problems[0].fix
    assert NullPolicy.parse("harness_error:parse_error, test_timeout").label == "harness_error:parse_error,test_timeout"


def test_paths_may_be_run_folders_or_files(db: str) -> None:
    sub = DATASET / "20250101_alpha_model-a"
    by_folder = run_table(import_terminal_bench([sub], db=db), db)
    by_runs = run_table(import_terminal_bench([sub / "run_1", sub / "run_2"], db=db), db)
    by_files = run_table(import_terminal_bench([sub / "run_1" / "results.json", sub / "run_2" / "results.json"], db=db), db)
    flat = DATASET / "20250102_beta_model-b"
    one_flat = run_table(import_terminal_bench([min(flat.glob("*_results.json"))], db=db), db)
    assert by_folder.suite_rate == by_runs.suite_rate == by_files.suite_rate
    assert by_files.run.model == "model-a" and one_flat.run.model == "model-b"
    assert by_folder.run.config.facts["original_run_ids"] == ["run_1", "run_2"]
    assert one_flat.run.config.facts["original_run_ids"] == ["2025-01-02__10-00-00"]


def test_cli_summary_shows_the_policy_and_the_source_figure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from aeh.cli import main as cli_main

    db = str(tmp_path / "r.db")
    sub = str(DATASET / "20250102_beta_model-b")
    assert cli_main(["import", "terminal-bench", sub, "--db", db]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert f"source accuracy {source_accuracy('20250102_beta_model-b'):.4f}" in line
    assert "harness errors 0/12" in line and "null is_resolved as failure (source definition" in line
    assert cli_main(["import", "terminal-bench", sub, "--db", db, "--null-as", "harness_error:parse_error"]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert "harness errors 1/12" in line and "null is_resolved as harness_error:parse_error" in line
    assert cli_main(["import", "terminal-bench", sub, "--db", db, "--null-as", "drop"]) == 2
    assert "--null-as" in capsys.readouterr().err
