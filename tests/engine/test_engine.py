"""The engine end to end: determinism, isolation, budgets, crashes, span trees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import aeh
from aeh.store import Store
from tests.engine.helpers import MemorySuite, ScriptedAdapter, task


def _attempts(run_id: str, db: Path):
    return aeh.attempts(run_id, db).sort_values(["task_id", "attempt"]).reset_index(drop=True)


def _trajectories(run_id: str, db: Path) -> list[tuple]:
    """What the agent did, minus what legitimately varies (span ids, timings)."""
    with Store(db) as store:
        frame = store.attempts_frame(run_id)
    calls = [[{k: v for k, v in c.items() if k not in ("span_id", "latency_s")} for c in json.loads(tc)]
             for tc in frame["tool_calls"]]
    return list(zip(frame["task_id"], frame["attempt"], frame["success"], frame["final_output"],
                    calls, frame["failure_bucket"], frame["tokens_in"], frame["tokens_out"], strict=True))


def test_same_seed_same_trajectories_different_seed_differs(db: Path) -> None:
    a = aeh.run("smoke", attempts=6, seed=7, db=db, concurrency=4)
    b = aeh.run("smoke", attempts=6, seed=7, db=db, concurrency=1)
    c = aeh.run("smoke", attempts=6, seed=8, db=db, model="mock-degraded")
    ta, tb, tc = (_trajectories(t.run_id, db) for t in (a, b, c))
    assert ta == tb, "same seed must give identical trajectories whatever the concurrency"
    assert ta != tc


def test_degraded_profile_fails_more_than_strong(db: Path) -> None:
    strong = aeh.run("toy_math", attempts=30, seed=3, db=db)
    degraded = aeh.run("toy_math", attempts=30, seed=3, db=db, model="mock-degraded")
    assert strong.suite_rate > degraded.suite_rate + 0.1


def test_every_attempt_gets_a_fresh_workspace(db: Path) -> None:
    # Each attempt writes one note; with a shared workspace later attempts would count 2, 3 …
    suite = MemorySuite([task()])
    table = aeh.run(suite, adapter=ScriptedAdapter(), attempts=4, seed=1, db=db)
    assert table.table.loc[0, "successes"] == 4
    with Store(db) as store:
        outputs = store.attempts_frame(table.run_id)["tool_calls"].to_list()
    assert all('"1 note(s)"' in o for o in outputs)


def test_fixtures_are_copied_per_attempt(tmp_path: Path, db: Path) -> None:
    root = tmp_path / "suite"
    (root / "data").mkdir(parents=True)
    (root / "data" / "notes.txt").write_text("seeded\n")
    suite = MemorySuite([task(fixtures=["data/notes.txt"], reference_answer="2 note(s)",
                              graders=[{"kind": "contains", "substring": "2 note"}])], root=root)
    adapter = ScriptedAdapter(answer="2 note(s)")
    table = aeh.run(suite, adapter=adapter, attempts=3, seed=1, db=db)
    with Store(db) as store:
        calls = store.attempts_frame(table.run_id)["tool_calls"].to_list()
    assert all('"2 note(s)"' in c for c in calls), "each attempt starts from the fixture, not the last attempt"
    assert (root / "data" / "notes.txt").read_text() == "seeded\n", "the suite's fixture is never modified"


def test_step_budget_ends_attempt_as_budget_exhausted(db: Path) -> None:
    suite = MemorySuite([task(budget={"max_steps": 3})])
    table = aeh.run(suite, adapter=ScriptedAdapter(loop=True), attempts=2, seed=1, db=db)
    rows = _attempts(table.run_id, db)
    assert set(rows["failure_bucket"]) == {"budget_exhausted"}
    assert set(rows["steps"]) == {3}
    assert "max_steps=3" in rows.loc[0, "error"]


def test_timeout_ends_attempt_as_budget_exhausted(db: Path) -> None:
    suite = MemorySuite([task(budget={"timeout_s": 0.2})])
    table = aeh.run(suite, adapter=ScriptedAdapter(sleep_s=5), attempts=2, seed=1, db=db)
    rows = _attempts(table.run_id, db)
    assert set(rows["failure_bucket"]) == {"budget_exhausted"}
    assert all(lat < 2 for lat in rows["latency_s"])


def test_token_and_cost_caps(db: Path) -> None:
    tokens = MemorySuite([task(budget={"max_tokens": 100})])
    t = aeh.run(tokens, adapter=ScriptedAdapter(tokens=(90, 20)), attempts=1, seed=1, db=db)
    assert _attempts(t.run_id, db).loc[0, "failure_bucket"] == "budget_exhausted"
    cost = MemorySuite([task(budget={"max_cost_usd": 0.0001})])
    # mock-strong costs $0.15/M in: 1,000,000 tokens is $0.15, far over the cap.
    c = aeh.run(cost, adapter=ScriptedAdapter(tokens=(1_000_000, 0)), attempts=1, seed=1, db=db)
    row = _attempts(c.run_id, db).loc[0]
    assert row["failure_bucket"] == "budget_exhausted" and "max_cost_usd" in row["error"]


def test_adapter_crash_is_a_harness_error_and_the_run_goes_on(db: Path) -> None:
    suite = MemorySuite([task("ok"), task("boom")])

    class HalfBroken(ScriptedAdapter):
        async def run(self, t, ctx):
            if t.id == "boom":
                raise RuntimeError("adapter bug")
            return await super().run(t, ctx)

    result = aeh.run(suite, adapter=HalfBroken(), attempts=3, seed=1, db=db)
    table = result.table.set_index("task_id")
    assert table.loc["ok", "successes"] == 3
    assert table.loc["boom", "harness_errors"] == 3 and table.loc["boom", "n"] == 0
    assert result.invalid_measurement is True
    rows = _attempts(result.run_id, db)
    assert "RuntimeError: adapter bug" in rows[rows.task_id == "boom"].iloc[0]["error"]


def test_unknown_tool_and_bad_arguments_are_the_agents_mistakes(db: Path) -> None:
    suite = MemorySuite([task("hallucinates"), task("malformed")])

    class Sloppy(ScriptedAdapter):
        async def run(self, t, ctx):
            if t.id == "hallucinates":
                await ctx.call_tool("delete_everything", {})
            else:
                await ctx.call_tool("write_note", {"txt": 3})
            from aeh.models import AgentOutcome
            return AgentOutcome(final_output="done")

    table = aeh.run(suite, adapter=Sloppy(), attempts=1, seed=1, db=db)
    rows = _attempts(table.run_id, db).set_index("task_id")
    assert rows.loc["hallucinates", "failure_bucket"] == "hallucinated_tool"
    assert rows.loc["malformed", "failure_bucket"] == "malformed_tool_call"


def test_span_tree_is_complete_and_reassemblable(db: Path) -> None:
    table = aeh.run("toy_math", attempts=3, seed=2, db=db, concurrency=3)
    spans = aeh.spans(table.run_id, db)
    assert set(spans["category"]) >= {"scheduler", "model", "tools", "grading", "cost"}
    for (_task_id, _attempt), group in spans.groupby(["task_id", "attempt"]):
        ids = set(group["span_id"])
        roots = group[group["parent_span_id"].isna()]
        assert len(roots) == 1 and roots.iloc[0]["name"] == "attempt"
        assert set(group["parent_span_id"].dropna()) <= ids, "every parent is in the same attempt"
    tool_spans = spans[spans.category == "tools"]
    assert aeh.span_attributes(tool_spans).map(lambda a: "gen_ai.tool.name" in a).all()
    model_spans = spans[spans.category == "model"]
    assert aeh.span_attributes(model_spans).map(lambda a: a["gen_ai.usage.input_tokens"] > 0).all()


def test_run_stamps_provenance(db: Path) -> None:
    table = aeh.run("toy_math", attempts=1, seed=5, db=db)
    info = aeh.runs(db).iloc[0]
    assert info.run_id == table.run_id
    assert info.seed == 5 and info.adapter == "mock" and info.model == "mock-strong"
    assert info.price_table_version and info.price_table_date and len(info.suite_hash) == 16
    assert info.aeh_version == aeh.__version__ and info.status == "finished"


def test_run_inside_a_running_event_loop(db: Path) -> None:
    import asyncio

    async def in_notebook():
        return aeh.run("toy_math", attempts=1, seed=1, db=db)  # sync call inside a loop

    assert len(asyncio.run(in_notebook())) == 3


def test_bad_suite_name_is_a_clear_error(db: Path) -> None:
    with pytest.raises(aeh.SuiteLoadError, match="nope"):
        aeh.run("nope", db=db)


def test_tool_input_error_is_the_agents_malformed_call(db: Path) -> None:
    from aeh.tools import ToolInputError

    class Strict(MemorySuite):
        def tool_registry(self):
            registry = super().tool_registry()

            @registry.tool("parse", description="parse a number")
            def parse(args: dict, env) -> float:
                raise ToolInputError(f"not a number: {args.get('text')!r}")

            return registry

    suite = Strict([task(tools=["parse"], plan=[], graders=[{"kind": "contains", "substring": "x"}])])
    table = aeh.run(suite, adapter=ScriptedAdapter(calls=[("parse", {"text": "1 +* 2"})]), attempts=1,
                    seed=1, db=db)
    row = _attempts(table.run_id, db).loc[0]
    assert row["failure_bucket"] == "malformed_tool_call"


def test_workspace_escape_is_refused_and_is_the_agents_invalid_call(db: Path) -> None:
    from aeh.tools import ToolEnv, WorkspaceEscape

    env = ToolEnv(workspace=db.parent)
    assert env.resolve("a/b.txt") == (db.parent / "a" / "b.txt").resolve()
    for bad in ("../x", "/etc/passwd", "~/.ssh/id_rsa", "a/../../x", ""):
        with pytest.raises(WorkspaceEscape):
            env.resolve(bad)

    class Reader(MemorySuite):
        def tool_registry(self):
            registry = super().tool_registry()

            @registry.tool("read", description="read a workspace file")
            def read(args: dict, env) -> str:
                return env.resolve(args["path"]).read_text()

            return registry

    suite = Reader([task(tools=["read"], plan=[], graders=[{"kind": "contains", "substring": "x"}])])
    table = aeh.run(suite, adapter=ScriptedAdapter(calls=[("read", {"path": "../../etc/passwd"})]),
                    attempts=1, seed=1, db=db)
    row = _attempts(table.run_id, db).loc[0]
    assert row["failure_bucket"] == "malformed_tool_call"
