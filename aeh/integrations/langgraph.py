"""LangGraph / LangChain runs as aeh trajectories (extra `aeh-harness[langgraph]`).

    from aeh.integrations.langgraph import AehCallbackHandler, graph_agent

    aeh.run("toy_math", agent=graph_agent(compiled_graph), attempts=5)       # the graph as the agent
    with aeh.Recorder(task_id="t1", path="t.jsonl") as rec:                   # or record it anywhere
        state = graph.invoke(inputs, config={"callbacks": [AehCallbackHandler()]})

`AehCallbackHandler` turns LangChain callback events into spans of the active recorder (the
attempt's, or an `aeh.Recorder`'s): graph nodes and chains → `step:<name>` spans, tool runs →
`tools` spans, chat/LLM calls → `model` spans with `gen_ai.usage.*` from the response's
`usage_metadata` (or `llm_output.token_usage`). A model span carries what the live adapters
record — the tools bound (`gen_ai.request.tool_names`), `tool_choice`, the reply
(`gen_ai.output.messages`), the tools-dropped check and an ignored `tool_choice` — so a graph's
run gets the same warnings. It never raises: an event it cannot read becomes a thinner span,
not an error in the user's graph, and a span it could not open is logged as a warning (logger
`aeh.integrations.langgraph`) rather than lost without a word.

Under `graph_agent` the suite's tools record every call themselves, so a LangChain tool run is a
`step:tool:<name>` span around it (`harness_tools=True`), never a second tool call.

`graph_agent(graph)` wraps a compiled graph as `agent(task, tools)`: the input is
`{"messages": [("user", task.prompt)]}` unless `make_input` says otherwise, the suite's tools
reach the nodes as `config["configurable"]["aeh_tools"]`, and the answer is read from the final
state (`read_output`, default: the last message's content, else an `answer` / `output` /
`final_output` key, else None — an unrecognised state gives no answer, never an exception).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any
from uuid import UUID

from aeh.adapters import tool_choice_ignored, tools_dropped_suspect
from aeh.errors import MissingExtraError
from aeh.recording import UsageHook, active_recorder, report_usage, usage_hook, usage_of
from aeh.trace import SpanHandle, SpanRecorder, model_input

try:
    from langchain_core.callbacks import BaseCallbackHandler
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingExtraError("aeh.integrations.langgraph", "langgraph", ["langchain_core", "langgraph"]) from exc

__all__ = ["AehCallbackHandler", "graph_agent", "read_output"]

log = logging.getLogger(__name__)


def _text(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


class AehCallbackHandler(BaseCallbackHandler):
    """Maps LangChain/LangGraph callback events onto aeh spans (see the module docstring)."""

    raise_error = False

    def __init__(self, recorder: SpanRecorder | None = None, on_usage: UsageHook | None = None, *,
                 harness_tools: bool = False) -> None:
        self.recorder = recorder
        self.on_usage = on_usage or usage_hook()
        self.harness_tools = harness_tools
        """Tool calls are recorded by the harness (`graph_agent`: the suite's tools record each
        call): a LangChain tool run is then a `step:tool:<name>` span, so no call shows twice."""
        self._open: dict[UUID, SpanHandle] = {}
        self._requests: dict[UUID, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}

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
        except Exception as exc:  # noqa: BLE001 - recording never breaks the user's graph
            log.warning("aeh could not record the %s span of a LangChain run (%s: %s); the graph went on "
                        "without it", name, type(exc).__name__, exc)

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
        if self.harness_tools:
            self._start(run_id, parent_run_id, f"step:tool:{name}", "scheduler",
                        **{"aeh.step": f"tool:{name}", "args": _text(args)})
            return
        self._start(run_id, parent_run_id, f"tool:{name}", "tools",
                    **{"gen_ai.tool.name": str(name), "args": _text(args)})

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, result=_text(getattr(output, "content", output)))

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    # -- models --------------------------------------------------------------------------------------
    def _model_start(self, serialized: dict[str, Any] | None, run_id: UUID, parent: UUID | None,
                     metadata: dict[str, Any] | None, kwargs: dict[str, Any],
                     messages: list[dict[str, Any]] | None = None) -> None:
        params = kwargs.get("invocation_params") or {}
        model = (metadata or {}).get("ls_model_name") or params.get("model") or params.get("model_name") \
            or (serialized or {}).get("name")
        # The same request attributes the live adapters record, so the run's checks apply alike.
        tools = [t for t in params.get("tools") or [] if isinstance(t, dict)]
        names = [str((t.get("function") or {}).get("name") or t.get("name") or "?") for t in tools]
        request = {"gen_ai.request.tool_names": names, "aeh.request.tools_offered": len(names),
                   "aeh.request.tool_choice": _text(params.get("tool_choice") or "unset") if names else None}
        sent = model_input(messages, tools)
        self._start(run_id, parent, "model:call", "model", **{"gen_ai.request.model": model,
                                                              "aeh.step": kwargs.get("name") or "model",
                                                              **request, **sent})
        if tools:
            self._requests[run_id] = (messages or [], tools)

    def on_chat_model_start(self, serialized: dict[str, Any] | None, messages: Any, *, run_id: UUID,
                            parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                            **kwargs: Any) -> None:
        self._model_start(serialized, run_id, parent_run_id, metadata, kwargs, _message_dicts(messages))

    def on_llm_start(self, serialized: dict[str, Any] | None, prompts: Any, *, run_id: UUID,
                     parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                     **kwargs: Any) -> None:
        prompts_as = [{"role": "user", "content": _text(p)} for p in prompts] if isinstance(prompts, list) else None
        self._model_start(serialized, run_id, parent_run_id, metadata, kwargs, prompts_as)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        handle = self._open.get(run_id)
        request = self._requests.pop(run_id, None)
        try:
            message = response.generations[0][0].message
            if handle is not None:
                self._record_reply(handle, message, request)
            tokens_in, tokens_out = usage_of(message)
            if tokens_in is None and tokens_out is None:
                tokens_in, tokens_out = usage_of({"usage": (response.llm_output or {}).get("token_usage")})
            if handle is not None and request is not None and tokens_in is not None:
                suspect, floor = tools_dropped_suspect(int(tokens_in), *request)
                handle.set(**{"aeh.tools_dropped_suspect": suspect, "aeh.tools_min_prompt_tokens": floor})
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
        self._requests.pop(run_id, None)
        self._end(run_id, error)

    @staticmethod
    def _record_reply(handle: SpanHandle, message: Any,
                      request: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None) -> None:
        """The reply as `gen_ai.output.messages`, and whether it ignored a tool_choice that obliged a call."""
        calls = [{"id": c.get("id"), "type": "function",
                  "function": {"name": c.get("name"), "arguments": json.dumps(c.get("args"), default=str)}}
                 for c in getattr(message, "tool_calls", None) or []]
        output: dict[str, Any] = {"role": "assistant", "content": _text(getattr(message, "content", None))}
        if calls:
            output["tool_calls"] = calls
        handle.set(**{"gen_ai.output.messages": [output]})
        choice = handle.span.attributes.get("aeh.request.tool_choice")
        if request is not None and tool_choice_ignored(choice, [str(c["function"]["name"]) for c in calls]):
            handle.set(**{"aeh.tool_choice_ignored": True})


_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _message_dicts(messages: Any) -> list[dict[str, Any]]:
    """LangChain's `[[BaseMessage, …]]` as chat messages (the span's input, the tools-dropped estimate)."""
    batch = messages[0] if isinstance(messages, list) and messages and isinstance(messages[0], list) else messages
    out: list[dict[str, Any]] = []
    for m in batch or []:
        entry: dict[str, Any] = {"role": _ROLES.get(getattr(m, "type", ""), "user"),
                                 "content": _text(getattr(m, "content", ""))}
        calls = getattr(m, "tool_calls", None)
        if calls:
            entry["tool_calls"] = [_text(c) for c in calls]
        if getattr(m, "tool_call_id", None):
            entry["tool_call_id"] = str(m.tool_call_id)
        out.append(entry)
    return out


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
        cfg["callbacks"] = [*cfg.get("callbacks", []), AehCallbackHandler(active_recorder(), harness_tools=True)]
        cfg["configurable"] = {**cfg.get("configurable", {}), "aeh_tools": tools, "aeh_task": task}
        state = graph.invoke(inputs, config=cfg)
        return read_output(state)

    agent.__qualname__ = f"langgraph:{getattr(graph, 'name', None) or 'graph'}"
    return agent
