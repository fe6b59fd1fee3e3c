"""τ-bench import on small hand-written files: bad arguments, bad input, the message cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import aeh
from aeh.errors import ValidationError
from aeh.importers import import_tau_bench
from aeh.models import FailureBucket
from aeh.store import Store


def _record(task_id: int, trial: int, reward: float, arguments: str = '{"user_id": "u1"}',
            capped: bool = False) -> dict:
    return {
        "task_id": task_id, "trial": trial, "reward": reward,
        "info": {"task": {}, "source": "user", "user_cost": None if capped else 0.01,
                 "reward_info": None if capped else {"reward": reward, "info": {}, "actions": []}},
        "traj": [
            {"role": "system", "content": "policy"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_user_details", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": "call_1", "name": "get_user_details", "content": "Error: user not found"},
            {"role": "assistant", "content": "Done.", "tool_calls": None},
        ],
    }


def test_undecodable_arguments_become_raw_invalid_args(tmp_path: Path) -> None:
    f = tmp_path / "mini-airline.json"
    f.write_text(json.dumps([_record(0, 0, 0.0, arguments="{not json"), _record(0, 1, 1.0),
                             _record(1, 0, 0.0, capped=True)]))
    db = tmp_path / "r.db"
    rid = import_tau_bench(f, db=db, run_id="tau-mini")
    assert rid == "tau-mini"
    with Store(db) as store:
        bad = store.attempt_record(rid, "0", 0)
        good = store.attempt_record(rid, "0", 1)
        capped = store.attempt_record(rid, "1", 0)
        info = store.run_info(rid)
    assert info.model == "mini" and info.attempts == 2
    assert bad.tool_calls[0].args == {"_raw": "{not json"} and bad.tool_calls[0].error_kind == "invalid_args"
    assert bad.failure_bucket == FailureBucket.malformed_tool_call
    assert good.success and good.tool_calls[0].args == {"user_id": "u1"} and good.failure_bucket is None
    # τ-bench's "Error: …" answers are the environment's reply to the agent, not a tool fault
    assert good.tool_calls[0].error == "Error: user not found" and good.tool_calls[0].error_kind is None
    assert good.final_output == "Done."
    assert capped.status == "budget_exhausted" and capped.failure_bucket == FailureBucket.budget_exhausted
    spans = aeh.spans(rid, db=db, task_id="0", attempt=0)
    tool = spans[spans.category == "tools"].iloc[0]
    assert tool.status == "error" and json.loads(tool["attributes"])["args"] == {"_raw": "{not json"}


@pytest.mark.parametrize(("content", "field"), [
    ('{"task_id": 1}', "-"),
    ('[{"task_id": "a", "trial": 0, "reward": 1.0, "traj": []}]', "[0].task_id"),
    ('[{"task_id": 1, "trial": 0, "traj": []}]', "[0].reward"),
])
def test_wrong_schema_is_a_validation_error(tmp_path: Path, content: str, field: str) -> None:
    f = tmp_path / "x-airline.json"
    f.write_text(content)
    with pytest.raises(ValidationError) as exc:
        import_tau_bench(f, db=tmp_path / "r.db")
    assert any(p.field == field and p.fix for p in exc.value.problems), exc.value.problems


def test_missing_and_truncated_files(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="file not found"):
        import_tau_bench(tmp_path / "nope.json", db=tmp_path / "r.db")
    cut = tmp_path / "cut.json"
    cut.write_text('[{"task_id": 1, "tri')
    with pytest.raises(ValidationError, match="not valid JSON"):
        import_tau_bench(cut, db=tmp_path / "r.db")


def test_duplicate_records_are_rejected(tmp_path: Path) -> None:
    f = tmp_path / "d-airline.json"
    f.write_text(json.dumps([_record(0, 0, 1.0), _record(0, 0, 0.0)]))
    with pytest.raises(ValidationError, match="duplicate task 0 trial 0"):
        import_tau_bench(f, db=tmp_path / "r.db")
