"""aeh.view() driven by simulated clicks (plain pytest, no kernel): run index → run → failed attempt →
trace → compare → trajectory diff, filters, paging, and a store whose bytes the session leaves unchanged."""

from __future__ import annotations

import hashlib

import pytest

import aeh
from aeh.errors import StoreError
from aeh.models import Span
from aeh.viewer import TABS, Viewer


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_whole_walk_and_the_store_is_unchanged(mock_db):
    db, run_a, run_b = mock_db
    before = _digest(db)
    v = aeh.view(db)
    assert isinstance(v, Viewer) and list(v.tabs.titles) == list(TABS)
    assert list(v.runs.buttons)[:2] == [run_b, run_a]

    v.runs.buttons[run_b].click()  # run index → run
    assert v.tabs.selected_index == TABS.index("run") and v.current_run == run_b
    assert run_b in v.run.header.value and "suite rate" in v.run.header.value
    assert set(v.run.task_buttons) == set(aeh.load_run(run_b, db=db).table["task_id"])
    assert "trajectory dimensions" in v.run.dimensions.value and "aeh-dimensions" in v.run.dimensions.value

    v.attempts.failed_only.value = True  # → failed attempts only
    assert v.attempts.rows and not any(r.success for r in v.attempts.rows)
    key = next(iter(v.attempts.buttons))
    v.attempts.buttons[key].click()  # → the trace
    assert v.tabs.selected_index == TABS.index("trace")
    doc = v.document
    assert doc is not None and (doc["head"]["task"], doc["head"]["attempt"]) == key
    assert doc["graders"] and {"model", "tools"} <= {s["category"] for s in doc["spans"]}
    assert "<iframe" in v.trace.value and "aeh-trace-doc" in v.trace.value  # drawn by the one trace page

    v.open_compare_button.click()  # → compare, B preselected as this run
    assert v.tabs.selected_index == TABS.index("compare") and v.compare.run_b.value == run_b
    v.compare.run_a.value = run_a
    v.compare.go.click()
    result = v.compare.result
    assert result is not None and (result.run_a, result.run_b) == (run_a, run_b)
    assert f"data-verdict='{result.verdict.status}'" in v.compare.verdicts.value
    assert "gate (dimensions, A as baseline)" in v.compare.verdicts.value
    assert "drift of toy_math" in v.compare.verdicts.value
    assert "band" in v.compare.dimensions.value

    task = key[0]
    v.compare.diff_buttons[task].click()  # → trajectory diff
    assert v.tabs.selected_index == TABS.index("trajectory diff")
    assert v.diff.result is not None and v.diff.result.task_id == task
    assert "aeh-trajectory-diff" in v.diff.out.value
    assert _digest(db) == before  # a whole session leaves the store's bytes as they were


def test_filters_and_pages(mock_db):
    db, _, run_b = mock_db
    v = aeh.view(db)
    v.open_run(run_b)
    assert v.attempts.rows == [] and v.attempts.stale  # opening a run does not draw its attempts …
    v.tabs.selected_index = TABS.index("attempts")  # … showing their tab does
    assert v.attempts.rows and not v.attempts.stale
    total = v.attempts.pager.total
    v.attempts.pager.limit = 2
    v.attempts.pager.go(0)
    assert len(v.attempts.rows) == 2 and v.attempts.pager.prev.disabled and not v.attempts.pager.next.disabled
    first = [(r.task_id, r.attempt) for r in v.attempts.rows]
    v.attempts.pager.next.click()
    assert v.attempts.pager.offset == 2 and [(r.task_id, r.attempt) for r in v.attempts.rows] != first
    assert v.attempts.pager.label.value == f"attempts 3–4 of {total}"
    task = sorted(v.run.task_buttons)[0]
    v.run.task_buttons[task].click()  # a task's button lists its attempts
    assert v.tabs.selected_index == TABS.index("attempts") and v.attempts.task.value == task
    assert {r.task_id for r in v.attempts.rows} == {task}
    bucket = next(iter(v.run.bucket_buttons))
    v.run.bucket_buttons[bucket].click()
    assert v.attempts.bucket.value == bucket and all(r.failure_bucket == bucket for r in v.attempts.rows)
    tasks = v.run.task_ids
    v.run.pager.limit = 1
    v.run.pager.next.click()  # the task table is paged: one task a page here
    assert list(v.run.task_buttons) == [tasks[1]] and v.run.pager.label.value == f"tasks 2–2 of {len(tasks)}"
    assert tasks[1] in v.run.dimensions.value and f"<td>{tasks[0]}</td>" not in v.run.dimensions.value
    v.runs.suite.value = "toy_math"
    assert all(s.info.suite == "toy_math" for s in v.runs.page_runs)


def test_cited_steps_filter_and_trace_marks(mock_db):
    db, _, run_b = mock_db
    v = aeh.view(db)
    v.open_run(run_b)
    v.attempts.cited_only.value = True
    if not v.attempts.rows:
        pytest.skip("this mock run has no attempt with cited steps")
    row = v.attempts.rows[0]
    assert row.cited_steps
    v.attempts.buttons[(row.task_id, row.attempt)].click()
    assert any(c.get("cited") for t in v.document["turns"] for c in t.get("calls", []))


def test_model_messages_render_from_genai_attributes():
    from aeh.models import Attempt
    from aeh.report import trace_document

    messages = [{"role": "user", "parts": [{"type": "text", "content": "What is 2+2?"}]},
                {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "add", "arguments": {"a": 2}}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "4"}]}]
    span = Span(run_id="r", task_id="t", attempt=0, span_id="s", category="model", name="model:call", start_ts=0,
                attributes={"gen_ai.input.messages": messages, "gen_ai.output.messages": [
                    {"role": "assistant", "parts": [{"type": "text", "content": "It is 4."}]}], "turn": 1})
    record = Attempt(run_id="r", task_id="t", attempt=0, seed=0, success=True, status="answered", final_output="4")
    doc = trace_document(record, [span])
    assert doc["head"]["prompt"] == "What is 2+2?"
    assert [t["role"] for t in doc["turns"]] == ["user", "assistant", "assistant"]
    assert doc["turns"][1]["calls"] == [{"name": "add", "args": "a=2", "result": "4"}]
    assert doc["turns"][2]["text"] == "It is 4."


def test_a_missing_store_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match="no run store"):
        aeh.view(tmp_path / "runs.db")
    assert not (tmp_path / "runs.db").exists()


def test_attempts_list_shows_input_and_target_and_searches_them(mock_db):
    db, _, run_b = mock_db
    v = aeh.view(db)
    v.open_run(run_b)
    v.tabs.selected_index = TABS.index("attempts")
    prompts = {t.id: t.prompt for t in aeh.load_suite("toy_math").tasks()}
    shown = {r.task_id for r in v.attempts.rows}
    assert shown and all(v.attempts.task_text[t][0] == prompts[t] for t in shown)  # the input column
    assert all(v.attempts.task_text[t][1] for t in shown)  # the target column, from the graders
    task = sorted(shown)[0]
    words = " ".join(prompts[task].split()[:4])  # words of one task's prompt only, never in a task id
    assert not any(words.lower() in prompts[t].lower() for t in prompts if t != task)
    v.attempts.search.value = words
    assert v.attempts.rows and {r.task_id for r in v.attempts.rows} == {task}
    answer = next(r.answer for r in v.attempts.rows if r.answer)
    v.attempts.search.value = answer[:12]  # the answer column is searched too
    assert v.attempts.rows and all(answer[:12].lower() in (r.answer or "").lower() or
                                   answer[:12].lower() in " ".join(v.attempts.task_text[r.task_id]).lower()
                                   for r in v.attempts.rows)
    v.attempts.search.value = "no such text anywhere 7b1f"
    assert v.attempts.rows == []


def test_on_big_runs_the_gate_and_drift_wait_for_a_click(mock_db, monkeypatch):
    db, run_a, run_b = mock_db
    monkeypatch.setattr("aeh.viewer._compare.GATE_INLINE_ATTEMPTS", 1)  # these runs count as big
    v = aeh.view(db)
    v.compare.show(run_a, run_b)
    assert v.compare.result is not None and "not run yet" in v.compare.verdicts.value
    assert v.compare.dimensions.value == "" and not v.compare.deep.disabled and v.compare.deep.layout.display is None
    v.compare.deep.click()
    assert "gate (dimensions, A as baseline): <b>" in v.compare.verdicts.value
    assert "not run yet" not in v.compare.verdicts.value and "band" in v.compare.dimensions.value
    assert "drift of toy_math" in v.compare.verdicts.value and v.compare.deep.disabled
    monkeypatch.setattr("aeh.viewer._compare.GATE_INLINE_ATTEMPTS", 10**9)
    v.compare.show(run_a, run_b)  # small runs: all at once, no button
    assert "not run yet" not in v.compare.verdicts.value and v.compare.deep.layout.display == "none"


def test_the_run_index_is_built_without_pandas_or_the_analysis(mock_db):
    """aeh.view() in a fresh kernel (JupyterLab) draws the run index before pandas and the analysis
    modules load (~0.5 s CPU); opening a run loads them."""
    import subprocess
    import sys

    db, _, run_b = mock_db
    probe = ("import sys, aeh\n"
             "from aeh.viewer import Viewer\n"
             f"v = Viewer({str(db)!r})\n"  # aeh.view() also starts a thread that imports them (below)
             "heavy = [m for m in ('pandas', 'aeh.analysis._run_table', 'aeh.analysis._compare') if m in sys.modules]\n"
             "assert v.runs.buttons and heavy == [], heavy\n"
             f"v.open_run({run_b!r})\n"
             "assert 'pandas' in sys.modules and v.run.result is not None\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize(("served", "after_s"), [(False, 0.0), (True, 3.0)])
def test_a_notebook_loads_the_clicks_modules_at_once_aeh_view_later(mock_db, monkeypatch, served, after_s):
    """In a notebook the kernel is idle while the browser draws the run index: the imports a click
    needs start at once. A kernel `aeh view` started for a waiting page answers its widget requests
    first (a pre-heated one has loaded them in `ready()`)."""
    from aeh.viewer import READY_ENV

    if served:
        monkeypatch.setenv(READY_ENV, "/nonexistent/ready")
    else:
        monkeypatch.delenv(READY_ENV, raising=False)
    started: list[float] = []
    monkeypatch.setattr("aeh.viewer._app.load_compare_modules", started.append)
    aeh.view(mock_db[0])
    assert started == [after_s]


@pytest.mark.slow
@pytest.mark.parametrize("preheat", [True, False])
def test_ready_loads_the_clicks_modules_first_in_a_pre_heated_kernel(tmp_path, preheat):
    import os
    import subprocess
    import sys

    ready = tmp_path / "ready"
    env = {**os.environ, "AEH_VIEW_READY": str(ready), "VOILA_PREHEAT": "True" if preheat else "False"}
    probe = ("import sys\nfrom aeh.viewer import ready\nready()\n"
             "print('pandas' in sys.modules, 'aeh.analysis._compare' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert ready.exists()  # aeh view may announce the address
    assert done.stdout.split() == (["True", "True"] if preheat else ["False", "False"])
