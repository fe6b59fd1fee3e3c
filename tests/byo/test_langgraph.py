"""A real LangGraph StateGraph of plain-function nodes and a fake chat model, as an aeh agent and recorded."""

from __future__ import annotations

import itertools
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

import aeh
from tests.examples_support import load_example

pytest.importorskip("langgraph")
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.runnables import RunnableConfig  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402

from aeh.integrations.langgraph import AehCallbackHandler, graph_agent, read_output  # noqa: E402


class State(TypedDict, total=False):
    prompt: str
    expression: str
    answer: str
    log: Annotated[list[str], operator.add]


def build() -> Any:
    replies = itertools.cycle([AIMessage(content="(17 + 25) * 3",
                                         usage_metadata={"input_tokens": 40, "output_tokens": 7, "total_tokens": 47})])
    model = GenericFakeChatModel(messages=replies)

    def plan(state: State) -> State:
        return {"expression": str(model.invoke(state["prompt"]).content), "log": ["plan"]}

    def act(state: State, config: RunnableConfig) -> State:
        tools = config["configurable"].get("aeh_tools")
        if tools is None:  # recorded outside a run: the agent's own arithmetic
            value = eval(state["expression"], {"__builtins__": {}})  # noqa: S307
        else:
            value = tools.calculator(expression=state["expression"])["result"]
        return {"answer": f"There are {value} boxes.", "log": ["act"]}

    graph = StateGraph(State)
    graph.add_node("plan", plan)
    graph.add_node("act", act)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "act")
    graph.add_edge("act", END)
    return graph.compile()


def test_compiled_graph_runs_as_an_agent_with_nodes_model_usage_and_tools(db: Path) -> None:
    agent = graph_agent(build(), make_input=lambda task, tools: {"prompt": task.prompt})
    table = aeh.run("toy_math", agent=agent, attempts=2, seed=1, db=db, tasks=["add_then_multiply"],
                    progress=False)
    run_id = table.attrs["run_id"]
    rows = aeh.attempts(run_id, db=db)
    assert rows["success"].all() and (rows["tokens_in"] == 40).all()
    spans = aeh.spans(run_id, db=db, task_id="add_then_multiply", attempt=0)
    names = set(spans["name"])
    assert {"step:plan", "step:act", "model:call", "tool:calculator"} <= names
    by_id = dict(zip(spans["span_id"], spans["name"], strict=True))
    model = spans[spans["name"] == "model:call"].iloc[0]
    assert by_id[model["parent_span_id"]] == "step:plan"


def test_graph_recorded_outside_a_run_grades_later(tmp_path: Path, db: Path) -> None:
    out = tmp_path / "t.jsonl"
    graph = build()
    with aeh.Recorder(task_id="add_then_multiply", path=out) as rec:
        state = graph.invoke({"prompt": "boxes?"}, config={"callbacks": [AehCallbackHandler()]})
        rec.answer(read_output(state))
    t = rec.trajectory
    assert t is not None and t.final_output == "There are 126 boxes."
    kinds = [s.kind for s in t.walk()]
    assert "model" in kinds and "step" in kinds
    from aeh.importers import grade_trajectories
    from aeh.trajectory import load_trajectories

    run_id = grade_trajectories("toy_math", load_trajectories(out), db=db)
    row = aeh.attempts(run_id, db=db).iloc[0]
    assert row["tokens_in"] == 40
    assert not row["success"]  # no calculator call was recorded: the toy_math invariant says so


def test_unrecognised_state_is_no_answer_not_an_error() -> None:
    assert read_output({"weird": object()}) is None
    assert read_output(42) is None
    assert read_output({"messages": [AIMessage(content="hi")]}) == "hi"


def test_langgraph_example_makes_a_graded_run(db: Path) -> None:
    langgraph_agent = load_example("langgraph_agent")
    run_id = langgraph_agent.main(["--db", str(db), "--attempts", "2"])
    rows = aeh.attempts(run_id, db=db)
    assert len(rows) == 2 and rows["success"].all() and (rows["tokens_in"] == 60).all()
    assert (rows["cost_usd"] > 0).all()  # priced as the model that answered (response_metadata.model_name)
