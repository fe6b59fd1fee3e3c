"""`aeh import inspect`: Inspect logs written by inspect-ai's own writer, in both formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_logs import MODEL, TOTAL_S, WORKING_S, build_log, with_model_graded_scorer, write_log  # noqa: E402

import aeh  # noqa: E402
from aeh.cli import main as cli_main  # noqa: E402
from aeh.errors import ValidationError  # noqa: E402
from aeh.importers import import_inspect_logs  # noqa: E402

FORMATS = ["eval", "json"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    """Format → (db, run id) of the same log written as .eval and as .json."""
    folder = tmp_path_factory.mktemp("inspect")
    log = build_log()
    out = {}
    for fmt in FORMATS:
        db = str(folder / f"{fmt}.db")
        out[fmt] = db, import_inspect_logs([write_log(log, folder, fmt)], db=db)  # type: ignore[arg-type]
    return out


def _attempts(imported: dict[str, tuple[str, str]], fmt: str) -> Any:
    db, rid = imported[fmt]
    return aeh.attempts(rid, db=db).set_index(["task_id", "attempt"])


def _spans(imported: dict[str, tuple[str, str]], fmt: str, category: str) -> Any:
    db, rid = imported[fmt]
    spans = aeh.spans(rid, db=db)
    return spans[(spans["task_id"] == "a") & (spans["attempt"] == 0) & (spans["category"] == category)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_samples_by_epochs_become_tasks_by_attempts(imported: dict[str, tuple[str, str]], fmt: str) -> None:
    assert sorted(_attempts(imported, fmt).index) == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("c", 0), ("c", 1)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_success_is_the_scorer_at_full_credit(imported: dict[str, tuple[str, str]], fmt: str) -> None:
    frame = _attempts(imported, fmt)
    assert frame["success"].to_dict() == {("a", 0): True, ("a", 1): True, ("b", 0): False, ("b", 1): False,
                                          ("c", 0): False, ("c", 1): False}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_sample_error_is_a_harness_error_outside_n(imported: dict[str, tuple[str, str]], fmt: str) -> None:
    db, rid = imported[fmt]
    row = aeh.load_run(rid, db=db).table.set_index("task_id").loc["c"]
    assert (row["n"], row["harness_errors"]) == (0, 2)


@pytest.mark.parametrize("fmt", FORMATS)
def test_usage_counts_cached_input_and_is_priced_by_the_bare_model_name(imported: dict[str, tuple[str, str]],
                                                                      fmt: str) -> None:
    row = _attempts(imported, fmt).loc[("a", 0)]
    # two calls of 80 + 20 cached input and 10 output tokens; gpt-4o is $2.50 / $10 per million
    assert (row["tokens_in"], row["tokens_out"], row["cost_usd"]) == (200, 20, pytest.approx(
        (200 * 2.5 + 20 * 10.0) / 1e6))


@pytest.mark.parametrize("fmt", FORMATS)
def test_recorded_working_time_is_the_latency(imported: dict[str, tuple[str, str]], fmt: str) -> None:
    row = _attempts(imported, fmt).loc[("b", 0)]
    assert (row["latency_s"], row["queue_s"]) == (WORKING_S, TOTAL_S - WORKING_S)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_model_span_keeps_its_input_messages(imported: dict[str, tuple[str, str]], fmt: str) -> None:
    first = _spans(imported, fmt, "model").sort_values("start_ts").iloc[0]
    assert json.loads(first["attributes"])["gen_ai.input.messages"] == [{"role": "user", "content": "What is 1+1?"}]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_tool_call_is_a_tool_span_with_arguments_and_result(imported: dict[str, tuple[str, str]],
                                                              fmt: str) -> None:
    tool = _spans(imported, fmt, "tools").iloc[0]
    attributes = json.loads(tool["attributes"])
    assert (tool["name"], attributes["args"], attributes["result"]) == ("tool:add", {"x": 1, "y": 1}, "2")


def test_the_tool_call_is_on_the_attempt(imported: dict[str, tuple[str, str]]) -> None:
    db, rid = imported["eval"]
    assert aeh.attempts(rid, db=db).set_index(["task_id", "attempt"]).loc[("a", 0), "steps"] == 1


def test_a_lower_threshold_lets_partial_credit_pass(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    rid = import_inspect_logs([write_log(build_log(), tmp_path, "json")], db=db, success_threshold=0.5)
    assert aeh.attempts(rid, db=db).set_index(["task_id", "attempt"]).loc[("b", 0), "success"]


def test_several_scorers_without_a_choice_are_refused_with_the_list(tmp_path: Path) -> None:
    log = write_log(build_log(scorers=("match", "judge")), tmp_path, "json")
    with pytest.raises(ValidationError, match="2 scorers, so success is ambiguous: match, judge"):
        import_inspect_logs([log], db=tmp_path / "r.db")


def test_the_named_scorer_decides_success(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    log = write_log(build_log(scorers=("match", "judge")), tmp_path, "json")
    rid = import_inspect_logs([log], db=db, scorer="judge")  # the judge scorer gives every scored sample 1
    assert aeh.attempts(rid, db=db).set_index(["task_id", "attempt"]).loc[("b", 1), "success"]


def test_logs_of_two_models_are_refused(tmp_path: Path) -> None:
    one = write_log(build_log(), tmp_path, "json", "one")
    two = write_log(build_log(model="openai/gpt-4.1"), tmp_path, "json", "two")
    with pytest.raises(ValidationError, match="2 models"):
        import_inspect_logs([one, two], db=tmp_path / "r.db")


def test_two_logs_of_one_task_number_epochs_across_them(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    log = build_log()
    rid = import_inspect_logs([write_log(log, tmp_path, "json", "one"), write_log(log, tmp_path, "eval", "two")],
                              db=db)
    assert sorted(aeh.attempts(rid, db=db).query("task_id == 'a'")["attempt"]) == [0, 1, 2, 3]


def test_cli_summary_states_the_scorer_and_threshold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_log(build_log(), tmp_path, "eval")
    assert cli_main(["import", "inspect", str(log), "--db", str(tmp_path / "r.db")]) == 0
    assert "success = scorer 'match' >= 1" in capsys.readouterr().out


def test_cli_refuses_a_file_that_is_not_a_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    assert cli_main(["import", "inspect", str(bad), "--db", str(tmp_path / "r.db")]) == 2
    assert "not an Inspect log Inspect can read" in capsys.readouterr().err


def test_the_run_names_the_task_and_model(imported: dict[str, tuple[str, str]]) -> None:
    db, rid = imported["json"]
    run = aeh.runs(db=db).set_index("run_id").loc[rid]
    assert (run["suite"], run["model"]) == ("inspect:arith", MODEL)


def test_a_model_graded_scorers_calls_are_evaluation_spend_not_the_agents_cost(tmp_path: Path) -> None:
    db = str(tmp_path / "judged.db")
    plain_db = str(tmp_path / "plain.db")
    judged = import_inspect_logs([write_log(with_model_graded_scorer(build_log()), tmp_path, "eval", "judged")], db=db)
    plain = import_inspect_logs([write_log(build_log(), tmp_path, "eval", "plain")], db=plain_db)
    cols = ["tokens_in", "tokens_out", "cost_usd"]
    mine = aeh.attempts(judged, db=db).set_index(["task_id", "attempt"])[cols]
    theirs = aeh.attempts(plain, db=plain_db).set_index(["task_id", "attempt"])[cols]
    assert mine.equals(theirs)  # the judge's 500 / 50 tokens per sample are not the agent's
    spans = aeh.spans(judged, db=db)
    judge = spans[spans["name"] == "judge:scorer"]
    assert len(judge) == 4 and set(judge["category"]) == {"grading"}
    spend = aeh.load_run(judged, db=db).run.config.live_checks.evaluation_spend
    assert (spend["calls"], spend["tokens_in"], spend["tokens_out"]) == (4, 2000, 200)
    assert spend["usd"] > 0
