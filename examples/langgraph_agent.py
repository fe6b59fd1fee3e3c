#!/usr/bin/env python3
"""A LangGraph graph evaluated as it is: plain-function nodes, a chat model, the suite's calculator.

    pip install -e '.[langgraph]'        # in the aeh checkout (the distribution is aeh-harness)
    python examples/langgraph_agent.py [--db runs.db] [--attempts 3]

The graph has two nodes: `plan` asks a chat model for the arithmetic expression (here
langchain-core's deterministic fake chat model, so the example needs no key or network; put
`ChatOpenAI(model=...)` there for a real one) and `act` evaluates it with the calculator aeh
hands the graph through `config["configurable"]["aeh_tools"]`. `graph_agent` wraps the compiled
graph for `aeh.run`; its callback handler records the nodes, the model call with its token usage
and the tool call in each attempt's trace.
"""

from __future__ import annotations

import argparse
import itertools
from typing import Any, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

import aeh
from aeh.integrations.langgraph import graph_agent


class State(TypedDict, total=False):
    prompt: str
    expression: str
    answer: str


def build_graph() -> Any:
    usage = {"input_tokens": 60, "output_tokens": 9, "total_tokens": 69}
    reply = AIMessage(content="(17 + 25) * 3", usage_metadata=usage,
                      response_metadata={"model_name": "gpt-4o-mini"})  # as ChatOpenAI reports it: priced
    model = GenericFakeChatModel(messages=itertools.cycle([reply]))

    def plan(state: State) -> State:
        return {"expression": str(model.invoke(state["prompt"]).content)}

    def act(state: State, config: RunnableConfig) -> State:
        calculator = config["configurable"]["aeh_tools"].calculator
        return {"answer": f"There are {calculator(expression=state['expression'])['result']} boxes."}

    graph = StateGraph(State)
    graph.add_node("plan", plan)
    graph.add_node("act", act)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "act")
    graph.add_edge("act", END)
    return graph.compile()


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=None, help="store path (default: aeh's default store)")
    parser.add_argument("--attempts", type=int, default=3)
    args = parser.parse_args(argv)
    agent = graph_agent(build_graph(), make_input=lambda task, tools: {"prompt": task.prompt})
    table = aeh.run("toy_math", agent=agent, attempts=args.attempts, seed=7, db=args.db,
                    tasks=["add_then_multiply"], progress=False)
    print(table)  # the per-task table, suite rate, cost and run id, as `aeh run` prints them
    run_id: str = table.run_id
    return run_id


if __name__ == "__main__":
    main()
