"""A real LangGraph StateGraph of plain-function nodes and a fake chat model, as an aeh agent and recorded."""

from __future__ import annotations

import itertools
import json
import operator
import uuid
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
from aeh.trace import SpanRecorder  # noqa: E402


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
    run_id = table.run_id
    rows = aeh.attempts(run_id, db=db)
    assert rows["success"].all() and (rows["tokens_in"] == 40).all()
    spans = aeh.spans(run_id, db=db, task_id="add_then_multiply", attempt=0)
    names = set(spans["name"])
    assert {"step:plan", "step:act", "model:call", "tool:calculator"} <= names
    by_id = dict(zip(spans["span_id"], spans["name"], strict=True))
    model = spans[spans["name"] == "model:call"].iloc[0]
    assert by_id[model["parent_span_id"]] == "step:plan"
    sent = json.loads(model["attributes"])["gen_ai.input.messages"]  # what the graph sent its model
    assert sent == [{"role": "user", "content": load_toy_prompt()}]
    assert json.loads(model["attributes"])["gen_ai.output.messages"][0]["content"] == "(17 + 25) * 3"


def load_toy_prompt() -> str:
    return next(t.prompt for t in aeh.load_suite("toy_math").tasks() if t.id == "add_then_multiply")


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


# -- a tool-calling graph: the same run warnings as the live adapters, each tool call once ----------

from langchain_core.messages import ToolMessage  # noqa: E402
from langchain_core.tools import tool as lc_tool  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langgraph.graph import MessagesState  # noqa: E402


class ToolCallingFake(GenericFakeChatModel):
    """The fake chat model with `bind_tools`, binding OpenAI-shaped tools and tool_choice as ChatOpenAI does."""

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        extra: dict[str, Any] = {"tools": [convert_to_openai_tool(t) for t in tools]}
        if tool_choice:
            extra["tool_choice"] = tool_choice
        return self.bind(**extra)


def tool_graph(reply: AIMessage, tool_choice: Any = None) -> Any:
    """One node: the model (tools bound) replies; each tool call runs a LangChain tool over aeh's calculator."""
    model = ToolCallingFake(messages=itertools.repeat(reply))

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        tools = config["configurable"]["aeh_tools"]

        @lc_tool
        def calculator(expression: str) -> str:
            """Evaluate + - * / arithmetic."""
            return str(tools.calculator(expression=expression)["result"])

        answer = model.bind_tools([calculator], tool_choice=tool_choice).invoke(state["messages"], config)
        out: list[Any] = [answer]
        for call in answer.tool_calls:
            out.append(ToolMessage(calculator.invoke(call["args"], config), tool_call_id=call["id"]))
        return {"messages": out}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    return graph.compile()


def run_graph(db: Path, reply: AIMessage, tool_choice: Any = None) -> Any:
    return aeh.run("toy_math", agent=graph_agent(tool_graph(reply, tool_choice)), attempts=2, seed=1, db=db,
                   tasks=["add_then_multiply"], progress=False)


USAGE = {"input_tokens": 400, "output_tokens": 9, "total_tokens": 409}


def test_each_tool_call_of_a_graph_is_recorded_once(db: Path) -> None:
    call = AIMessage(content="", usage_metadata=USAGE,
                     tool_calls=[{"name": "calculator", "args": {"expression": "(17 + 25) * 3"}, "id": "c1"}])
    table = run_graph(db, call)
    spans = aeh.spans(table.run_id, db=db, task_id="add_then_multiply", attempt=0)
    assert list(spans["name"]).count("tool:calculator") == 1, list(spans["name"])
    assert "step:tool:calculator" in set(spans["name"])  # the LangChain tool run, as a step
    assert table.tool_calls == 2  # one per attempt
    assert table.warnings == []


def test_a_graph_whose_model_ignores_required_tool_choice_gets_the_adapters_warning(db: Path) -> None:
    table = run_graph(db, AIMessage(content="126", usage_metadata=USAGE), tool_choice="any")
    warnings = table.warnings
    assert any(w.startswith("SERVER IGNORED tool_choice: 2 model turns sent tool_choice any") for w in warnings), warnings
    assert not any(w.startswith("NO TOOL CALLS") for w in warnings)


def _recorded(run_id: str, db: Path) -> dict[int, list[tuple[str, str, list[str]]]]:
    """Each attempt's spans: name, status and attribute keys (read only when an assertion fails)."""
    return {i: [(r["name"], r["status"], sorted(json.loads(r["attributes"])))
                for _, r in aeh.spans(run_id, db=db, task_id="add_then_multiply", attempt=i).iterrows()]
            for i in range(2)}


def test_a_graph_whose_tools_never_reached_the_prompt_is_warned(db: Path) -> None:
    few = {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}
    table = run_graph(db, AIMessage(content="126", usage_metadata=few))
    warnings = table.warnings
    # each attempt's spans in the message: one full-suite run counted 1 of 1 turns here, once
    assert any(w.startswith("TOOLS PROBABLY NOT SEEN BY THE MODEL: 2 of 2 model turns") for w in warnings), \
        (warnings, _recorded(table.run_id, db))
    assert any(w.startswith("NO TOOL CALLS: tools were offered on all 2 answered model turns") for w in warnings)
    spans = aeh.spans(table.run_id, db=db, task_id="add_then_multiply", attempt=0)
    model = json.loads(spans[spans["name"] == "model:call"].iloc[0]["attributes"])
    assert model["gen_ai.request.tool_names"] == ["calculator"] and model["aeh.request.tool_choice"] == "unset"


def test_a_span_the_recorder_cannot_open_is_a_warning_not_an_error_or_silence(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(SpanRecorder):
        def _open(self, name: str, category: str, attributes: dict[str, Any]) -> Any:
            raise RuntimeError("disk gone")

    handler = AehCallbackHandler(Broken("r", "t", 0))
    run = uuid.uuid4()
    with caplog.at_level("WARNING", logger="aeh.integrations.langgraph"):
        handler.on_chain_start({"name": "plan"}, {}, run_id=run)
        handler.on_chain_end({}, run_id=run)
    assert [r.getMessage() for r in caplog.records] == [
        "aeh could not record the step:plan span of a LangChain run (RuntimeError: disk gone); the graph went on "
        "without it"]
