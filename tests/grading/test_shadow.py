"""--judge-all: a shadow verdict on every attempt feeds κ and never changes success."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import aeh
from aeh.analysis import format_run_table
from aeh.errors import ConfigError
from aeh.testing import Reply

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _numbers_agree(request: dict) -> Reply:
    """A judge that compares the last number of the output with the reference answer's."""
    text = request["messages"][1]["content"]
    reference = text.split("A correct answer is equivalent to:")[1].split("\n")[0]
    output = text.split(">>>\n", 1)[1].split("\n<<<END", 1)[0]
    ref, out = NUMBER.findall(reference), NUMBER.findall(output)
    passed = bool(ref and out and float(ref[-1]) == float(out[-1]))
    return Reply.text(json.dumps({"passed": passed, "reason": f"output {out[-1:]} vs reference {ref[-1:]}"}))


def test_shadow_judge_feeds_kappa_and_leaves_success_alone(fake_openai, tmp_path: Path) -> None:
    fake_openai(_numbers_agree)
    db = tmp_path / "runs.db"
    plain = aeh.run("toy_math", attempts=8, seed=4, db=db, model="mock-degraded")
    judged = aeh.run("toy_math", attempts=8, seed=4, db=db, model="mock-degraded",
                     judge_model="fake-judge", judge_all=True)
    assert list(plain["successes"]) == list(judged["successes"]), "the shadow judge never changes success"
    rows = aeh.attempts(judged.run_id, db)
    assert rows["grader:judge_shadow"].notna().all()
    frame = aeh.agreement(judged.run_id, db)
    kappa = frame.table.set_index("rater").loc["judge"]
    # 2 of the 24 attempts gave no final output: their "fail" is automatic (no judge call), so
    # it is counted apart and left out of κ.
    assert frame.judge_verdicts == {"attempted": 22, "valid": 22, "failed": 0,
                                             "failed_by_reason": {}, "unparseable": 0, "automatic": 2}
    assert kappa["n"] == 22 and kappa["kappa"] > 0.7 and bool(kappa["trusted"])
    assert kappa["prog_fail_rater_pass"] + kappa["prog_pass_rater_fail"] < 4


@pytest.mark.slow
def test_shadow_judge_failure_is_not_a_harness_error(fake_openai, tmp_path: Path) -> None:
    fake_openai([Reply.error(500)])
    table = aeh.run("toy_math", attempts=2, seed=1, db=tmp_path / "runs.db", judge_model="fake-judge",
                    judge_all=True)
    assert table.harness_errors == 0
    # …but it is not hidden either: the run's checks count it and warn.
    judge = table.judge_verdicts
    assert judge["failed"] == judge["attempted"] > 0 and judge["valid"] == 0
    assert judge["failed_by_reason"] == {"http_error": judge["failed"]}
    assert any(w.startswith("JUDGE VERDICTS FAILED") for w in table.warnings)
    assert "judge verdicts:" in format_run_table(table)


def test_judge_all_needs_a_judge(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--judge-all needs a judge"):
        aeh.run("toy_math", attempts=1, db=tmp_path / "runs.db", judge_all=True)
