"""Every front-door call returns a pandas DataFrame that keeps its typed fields.

Each result is its rows (`isinstance(r, pd.DataFrame)`, every DataFrame method, `pd.concat`) and
holds the verdict and figures as read-only fields; what pandas operations do to those fields:
`aeh.analysis._result_frame`."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import aeh
from aeh.analysis import (
    AgreementResult,
    CompareResult,
    DriftResult,
    GateResult,
    MatrixResult,
    PassKResult,
    RunResult,
    ScoresResult,
    TrajectoryDiff,
    build_baseline,
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, RunResult, RunResult, RunResult]:
    """Three toy_math runs on the mock agent: a, b (degraded), c."""
    db = str(tmp_path_factory.mktemp("frames") / "runs.db")
    a = aeh.run("toy_math", adapter="mock", attempts=3, seed=1, db=db, progress=False)
    b = aeh.run("toy_math", adapter="mock", attempts=3, seed=2, db=db, progress=False, model="mock-degraded")
    c = aeh.run("toy_math", adapter="mock", attempts=3, seed=3, db=db, progress=False)
    return db, a, b, c


#: call name → (how to make it from the fixture, its type, a field and that field's type)
FRONT_DOOR: dict[str, tuple[Callable[..., Any], type, str, type]] = {
    "run": (lambda db, a, b, c: a, RunResult, "suite_rate", float),
    "load_run": (lambda db, a, b, c: aeh.load_run(a.run_id, db=db), RunResult, "run_id", str),
    "compare": (lambda db, a, b, c: aeh.compare(a.run_id, b.run_id, db=db), CompareResult, "regressed_tasks", list),
    "drift": (lambda db, a, b, c: aeh.drift("toy_math", db=db, allow_mixed=True), DriftResult, "status", str),
    "agreement": (lambda db, a, b, c: aeh.agreement(a.run_id, db=db), AgreementResult, "verdict", str),
    "matrix": (lambda db, a, b, c: aeh.matrix([a.run_id, b.run_id], db=db), MatrixResult, "warnings", list),
    "scores": (lambda db, a, b, c: aeh.scores(a.run_id, db=db), ScoresResult, "suite", pd.DataFrame),
    "pass_k": (lambda db, a, b, c: aeh.pass_k(a.run_id, db=db), PassKResult, "suite_tasks", list),
    "gate": (lambda db, a, b, c: aeh.gate(build_baseline(a.run_id, db=db), c.run_id, db=db), GateResult,
             "verdict", str),
    "trajectory_diff": (lambda db, a, b, c: aeh.trajectory_diff(a.run_id, b.run_id, "split_the_bill", db=db),
                        TrajectoryDiff, "similarity", float),
}


@pytest.mark.parametrize("call", sorted(FRONT_DOOR))
def test_each_front_door_call_returns_a_dataframe_with_its_typed_fields(call: str, runs: Any) -> None:
    make, kind, name, field_type = FRONT_DOOR[call]
    result = make(*runs)
    assert isinstance(result, pd.DataFrame) and type(result) is kind
    assert isinstance(getattr(result, name), field_type)
    assert len(result) > 0 and list(result.columns)
    # every field is set, and the plain rows are one attribute away
    assert all(hasattr(result, f) for f in kind.field_names())
    assert type(result.table) is pd.DataFrame and result.table.equals(pd.DataFrame(result))


@pytest.mark.parametrize("call", sorted(FRONT_DOOR))
def test_dataframe_methods_work_on_every_result(call: str, runs: Any, tmp_path: Path) -> None:
    make, kind, _, _ = FRONT_DOOR[call]
    result = make(*runs)
    rows = list(result.iterrows())
    assert len(rows) == len(result)
    out = tmp_path / f"{call}.csv"
    result.to_csv(out, index=False)
    assert pd.read_csv(out).shape == result.shape
    first = result.columns[0]
    assert result.groupby(first, dropna=False).size().sum() == len(result)
    both = pd.concat([result, result])
    assert len(both) == 2 * len(result)
    mine = result.copy()
    mine.attrs["mine"] = 1  # attrs is pandas' own dict, as on any frame
    assert mine.attrs["mine"] == 1 and mine.head(1).attrs["mine"] == 1 and "mine" not in result.attrs


def test_plot_draws_from_a_result(runs: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, a, _, _ = runs
    ax = a.plot(x="task_id", y="rate", kind="bar")
    assert [t.get_text() for t in ax.get_xticklabels()] == a["task_id"].tolist()
    plt.close("all")


# -- what operations do to the fields ----------------------------------------------------------
def test_slicing_and_filtering_keep_the_runs_fields(runs: Any) -> None:
    _, a, _, _ = runs
    failing = a[a["rate"] < 1]
    assert type(failing) is RunResult
    assert (failing.run_id, failing.suite_rate, failing.warnings) == (a.run_id, a.suite_rate, a.warnings)
    for derived in (a.head(1), a.sort_values("rate"), a.assign(extra=1), a.query("n > 0"), a.iloc[:1],
                    a.loc[a.index[:1]], a.copy(), a.reset_index(drop=True)):
        assert type(derived) is RunResult and derived.run_id == a.run_id


def test_a_derived_view_prints_as_rows_and_says_it_is_a_view(runs: Any) -> None:
    _, a, _, _ = runs
    view = a.head(1)
    text = repr(view)
    assert text.startswith(f"RunResult view: 1 of {len(a)} rows")
    assert "suite rate" not in text  # the whole-run summary lines belong to the whole table
    assert "aeh-view" in view._repr_html_() and "aeh-verdict" not in view._repr_html_()
    assert str(a.copy()) == str(a)  # the same rows and columns: the result as returned


def test_concat_of_one_results_pieces_keeps_its_fields(runs: Any) -> None:
    _, a, _, _ = runs
    again = pd.concat([a.iloc[:1], a.iloc[1:]])
    assert type(again) is RunResult and again.run_id == a.run_id and str(again) == str(a)


def test_concat_of_two_runs_is_a_plain_frame(runs: Any) -> None:
    _, a, b, _ = runs
    both = pd.concat([a, b], keys=[a.run_id, b.run_id], names=["run_id", None])
    assert type(both) is pd.DataFrame
    assert both.loc[b.run_id, "rate"].tolist() == b["rate"].tolist()
    assert type(pd.concat([a, pd.DataFrame({"task_id": ["x"]})])) is pd.DataFrame


def test_merge_with_another_frame_is_a_plain_frame(runs: Any) -> None:
    _, a, _, _ = runs
    merged = a.merge(pd.DataFrame({"task_id": a["task_id"], "owner": "me"}), on="task_id")
    assert type(merged) is pd.DataFrame and merged["owner"].eq("me").all()


def test_pickle_keeps_the_fields(runs: Any) -> None:
    _, a, _, _ = runs
    back = pickle.loads(pickle.dumps(a))
    assert type(back) is RunResult and back.run == a.run and back.warnings == a.warnings
    assert str(back) == str(a) and back.equals(a)


def test_a_deep_copy_does_not_share_the_fields(runs: Any) -> None:
    _, a, _, _ = runs
    deep = copy.deepcopy(a)
    assert deep.warnings == a.warnings and deep.warnings is not a.warnings and deep.run == a.run


def test_copy_on_write_a_derived_frame_never_changes_the_result(runs: Any) -> None:
    _, a, _, _ = runs
    before = a["rate"].tolist()
    view = a[a["rate"] >= 0]
    view.loc[view.index[0], "rate"] = -1.0
    rows = a.table
    rows.loc[rows.index[0], "rate"] = -2.0
    assert a["rate"].tolist() == before


def test_fields_are_read_only_and_with_fields_makes_a_changed_copy(runs: Any) -> None:
    _, a, _, _ = runs
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.suite_rate = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del a.run_id
    changed = a.with_fields(warnings=["checked"])
    assert changed.warnings == ["checked"] and a.warnings != ["checked"] and changed.equals(a)


def test_building_a_result_names_a_missing_or_unknown_field() -> None:
    with pytest.raises(TypeError, match="needs the field 'run_id'"):
        PassKResult(pd.DataFrame(), suite_tasks=[], note="")
    with pytest.raises(TypeError, match="no field"):
        PassKResult(pd.DataFrame(), run_id="r", suite_tasks=[], note="", bogus=1)


def test_a_gate_rebuilds_its_rows_when_its_findings_change(runs: Any) -> None:
    db, a, _, c = runs
    gate = aeh.gate(build_baseline(a.run_id, db=db), c.run_id, db=db)
    assert len(gate) == len(gate.suite) + len(gate.tasks)
    assert len(gate.with_fields(tasks=[])) == len(gate.suite)


# -- the earlier attrs keys ----------------------------------------------------------------------
def test_the_earlier_attrs_keys_still_read_and_warn(runs: Any) -> None:
    db, a, b, _ = runs
    with pytest.warns(DeprecationWarning, match=r"attrs\['run_id'\] is deprecated: read the typed field `.run_id`"):
        assert a.attrs["run_id"] == a.run_id
    with pytest.warns(DeprecationWarning, match="suite_rate"):
        assert a.attrs.get("suite_rate") == a.suite_rate
    with pytest.warns(DeprecationWarning):
        assert a.attrs["run"]["run_id"] == a.run_id  # the RunInfo as the dict it was
    diff = aeh.compare(a.run_id, b.run_id, db=db)
    with pytest.warns(DeprecationWarning, match="regressed_tasks"):
        assert diff.attrs["regressed"] == diff.regressed_tasks
    with pytest.warns(DeprecationWarning):
        assert diff.attrs["verdict"]["status"] == diff.verdict.status
    with pytest.warns(DeprecationWarning):
        assert diff.attrs["suite_a"] == {"suite_rate": a.suite_rate, "suite_low": a.suite_low,
                                         "suite_high": a.suite_high}


def test_the_earlier_keys_are_not_stored_so_pandas_never_copies_them(runs: Any) -> None:
    _, a, _, _ = runs
    fresh = a.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dict(fresh.attrs) == {} and not fresh.attrs and "nope" not in fresh.attrs
        assert fresh.attrs.get("nope", 7) == 7
        with pytest.raises(KeyError):
            fresh.attrs["nope"]
        assert fresh["rate"].attrs == {}  # a column read carries no copy of them


def test_a_frame_made_without_fields_is_a_plain_looking_view(runs: Any) -> None:
    _, a, _, _ = runs
    bare = RunResult._from_mgr(a._mgr, a._mgr.axes)  # what an operation pandas does not finalize leaves
    assert repr(bare).startswith("RunResult rows without the result's fields")
    with pytest.raises(AttributeError):
        _ = bare.run_id


def test_ipython_shows_the_cli_text_and_jupyter_the_verdict_header(runs: Any) -> None:
    from IPython.lib.pretty import pretty

    _, a, _, _ = runs
    assert pretty(a) == str(a) == aeh.analysis.format_run_table(a)
    html = a._repr_html_()
    assert html.index("data-verdict='valid measurement'") < html.index("<table")
