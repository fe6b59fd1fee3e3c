"""LangGraph / LangChain runs as aeh trajectories (extra `aeh[langgraph]`).

    from aeh.integrations.langgraph import AehCallbackHandler, graph_agent

    aeh.run("toy_math", agent=graph_agent(compiled_graph), attempts=5)       # the graph as the agent
    with aeh.Recorder(task_id="t1", path="t.jsonl") as rec:                   # or record it anywhere
        state = graph.invoke(inputs, config={"callbacks": [AehCallbackHandler()]})

`AehCallbackHandler` turns LangChain callback events into spans of the active recorder (the
attempt's, or an `aeh.Recorder`'s): graph nodes and chains → `step:<name>` spans, tool runs →
`tools` spans, chat/LLM calls → `model` spans with `gen_ai.usage.*` from the response's
`usage_metadata` (or `llm_output.token_usage`). It never raises: an event it cannot read
becomes a thinner span, not an error in the user's graph.

`graph_agent(graph)` wraps a compiled graph as `agent(task, tools)`: the input is
`{"messages": [("user", task.prompt)]}` unless `make_input` says otherwise, the suite's tools
reach the nodes as `config["configurable"]["aeh_tools"]`, and the answer is read from the final
state (`read_output`, default: the last message's content, else an `answer` / `output` /
`final_output` key, else None — an unrecognised state gives no answer, never an exception).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from uuid import UUID

from aeh.errors import MissingExtraError
from aeh.recording import UsageHook, active_recorder, report_usage, usage_hook, usage_of
from aeh.trace import SpanHandle, SpanRecorder

try:
    from langchain_core.callbacks import BaseCallbackHandler
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingExtraError("aeh.integrations.langgraph", "langgraph", ["langchain_core", "langgraph"]) from exc

__all__ = ["AehCallbackHandler", "graph_agent", "read_output"]


def _text(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


class AehCallbackHandler(BaseCallbackHandler):
    """Maps LangChain/LangGraph callback events onto aeh spans (see the module docstring)."""

    raise_error = False

    def __init__(self, recorder: SpanRecorder | None = None, on_usage: UsageHook | None = None) -> None:
        self.recorder = recorder
        self.on_usage = on_usage or usage_hook()
        self._open: dict[UUID, SpanHandle] = {}

    def _rec(self) -> SpanRecorder | None:
        return self.recorder or active_recorder()

    def _start(self, run_id: UUID, parent: UUID | None, name: str, category: str, **attrs: Any) -> None:
        try:
            rec = self._rec()
            if rec is None:
                return
            handle = rec._open(name, category, attrs)
            if parent is not None and parent in self._open:
                parent_handle = self._open[parent]
                handle.span.parent_span_id = parent_handle.span_id
                handle.depth = parent_handle.depth + 1
                rec._depth[handle.span_id] = handle.depth
            self._open[run_id] = handle
        except Exception:  # noqa: BLE001 - recording never breaks the user's graph
            return

    def _end(self, run_id: UUID, error: BaseException | None = None, **attrs: Any) -> None:
        handle = self._open.pop(run_id, None)
        rec = self._rec()
        if handle is None or rec is None:
            return
        try:
            handle.set(**attrs)
            if error is not None:
                handle.fail(f"{type(error).__name__}: {error}")
        finally:
            rec._close(handle)

    # -- chains and graph nodes -------------------------------------------------------------------
    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                       **kwargs: Any) -> None:
        name = kwargs.get("name") or (metadata or {}).get("langgraph_node") or \
            ((serialized or {}).get("name") if isinstance(serialized, dict) else None) or "chain"
        self._start(run_id, parent_run_id, f"step:{name}", "scheduler", **{"aeh.step": str(name)})

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    # -- tools ---------------------------------------------------------------------------------------
    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, inputs: dict[str, Any] | None = None,
                      **kwargs: Any) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        args = inputs if isinstance(inputs, dict) else {"input": input_str}
        self._start(run_id, parent_run_id, f"tool:{name}", "tools",
                    **{"gen_ai.tool.name": str(name), "args": _text(args)})

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, result=_text(getattr(output, "content", output)))

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    # -- models --------------------------------------------------------------------------------------
    def _model_start(self, serialized: dict[str, Any] | None, run_id: UUID, parent: UUID | None,
                     metadata: dict[str, Any] | None, kwargs: dict[str, Any]) -> None:
        params = kwargs.get("invocation_params") or {}
        model = (metadata or {}).get("ls_model_name") or params.get("model") or params.get("model_name") \
            or (serialized or {}).get("name")
        self._start(run_id, parent, "model:call", "model", **{"gen_ai.request.model": model,
                                                              "aeh.step": kwargs.get("name") or "model"})

    def on_chat_model_start(self, serialized: dict[str, Any] | None, messages: Any, *, run_id: UUID,
                            parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                            **kwargs: Any) -> None:
        self._model_start(serialized, run_id, parent_run_id, metadata, kwargs)

    def on_llm_start(self, serialized: dict[str, Any] | None, prompts: Any, *, run_id: UUID,
                     parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                     **kwargs: Any) -> None:
        self._model_start(serialized, run_id, parent_run_id, metadata, kwargs)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        handle = self._open.get(run_id)
        try:
            message = response.generations[0][0].message
            tokens_in, tokens_out = usage_of(message)
            if tokens_in is None and tokens_out is None:
                tokens_in, tokens_out = usage_of({"usage": (response.llm_output or {}).get("token_usage")})
            if handle is not None and (tokens_in is not None or tokens_out is not None):
                # the model that answered (ChatOpenAI and others say so) is the one to price
                answered = (getattr(message, "response_metadata", None) or {}).get("model_name")
                model = answered or handle.span.attributes.get("gen_ai.request.model")
                report_usage(handle, model if isinstance(model, str) else None, tokens_in or 0, tokens_out or 0,
                             hook=self.on_usage)
        except Exception:  # noqa: BLE001 - a response shape we do not know (or a spent budget): a thin span
            pass
        self._end(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)


def read_output(state: Any) -> str | None:
    """The answer in a final graph state, or None when the state is not one we recognise."""
    try:
        if isinstance(state, dict):
            messages = state.get("messages")
            if isinstance(messages, list) and messages:
                last = messages[-1]
                content = getattr(last, "content", None)
                if content is None and isinstance(last, tuple | list) and len(last) == 2:
                    content = last[1]
                if isinstance(content, str):
                    return content
            for key in ("answer", "output", "final_output"):
                if isinstance(state.get(key), str | int | float):
                    return str(state[key])
        if isinstance(state, str):
            return state
    except Exception:  # noqa: BLE001 - an odd state gives no answer, never a crash
        return None
    return None


def graph_agent(graph: Any, *, make_input: Callable[[Any, Any], Any] | None = None,
                read_output: Callable[[Any], str | None] = read_output,
                config: dict[str, Any] | None = None) -> Callable[[Any, Any], str | None]:
    """A compiled graph as `agent(task, tools)` for `aeh.run` (see the module docstring)."""

    def agent(task: Any, tools: Any) -> str | None:
        inputs = make_input(task, tools) if make_input else {"messages": [("user", task.prompt)]}
        cfg = dict(config or {})
        cfg["callbacks"] = [*cfg.get("callbacks", []), AehCallbackHandler(active_recorder())]
        cfg["configurable"] = {**cfg.get("configurable", {}), "aeh_tools": tools, "aeh_task": task}
        state = graph.invoke(inputs, config=cfg)
        return read_output(state)

    agent.__qualname__ = f"langgraph:{getattr(graph, 'name', None) or 'graph'}"
    return agent
