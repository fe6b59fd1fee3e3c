"""Warnings carry a `kind`: readers filter on it, never on the wording."""

from __future__ import annotations

import copy
import pickle

import aeh
from aeh.analysis import _compare
from aeh.analysis._compare import comparison_warnings
from aeh.models import RunWarning


def test_a_warning_is_its_text_and_keeps_its_kind_through_copy_and_pickle() -> None:
    w = RunWarning("run A (x) is interrupted, not finished", "unfinished")
    assert w == "run A (x) is interrupted, not finished" and f"{w}".startswith("run A")
    for clone in (copy.deepcopy(w), pickle.loads(pickle.dumps(w)), copy.copy(w)):
        assert clone == w and clone.kind == "unfinished"


def test_each_comparison_warning_names_its_kind() -> None:
    a = {"run_id": "a", "status": "interrupted", "suite_hash": "h1", "config": {}}
    b = {"run_id": "b", "status": "finished", "suite_hash": "h2", "config": {"cost_currency": "EUR"}}
    assert sorted(w.kind for w in comparison_warnings(a, b)) == ["currency_differs", "suite_changed", "unfinished"]


def test_compare_drops_the_warning_a_refusal_repeats_by_kind_whatever_its_wording(tmp_path, monkeypatch) -> None:
    """Reworded, the suite-change warning is still left out where the refusal says it."""
    db = tmp_path / "runs.db"
    a = aeh.run("smoke", adapter="mock", attempts=2, seed=1, db=db, progress=False)
    b = aeh.run("toy_math", adapter="mock", attempts=2, seed=1, db=db, progress=False)
    reworded = {key: (kind, "REWORDED {a} {b}") for key, (kind, _text) in _compare._WATCHED.items()}
    monkeypatch.setattr(_compare, "_WATCHED", reworded)
    result = aeh.compare(a.run_id, b.run_id, db=db)
    assert result.verdict.cannot_judge and any(r.check == "suite_differs" for r in result.verdict.cannot_judge)
    assert not [w for w in result.warnings if getattr(w, "kind", None) == "suite_changed"]
