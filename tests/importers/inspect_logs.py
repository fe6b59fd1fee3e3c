"""Inspect eval logs built from inspect-ai's own types and written by its own writer.

One task, three samples × two epochs, model `openai/gpt-4o` (priced from the shipped table by
its bare name):

| sample | epoch 1 | epoch 2 |
| --- | --- | --- |
| a | C (calls the `add` tool, then answers) | C |
| b | P | I |
| c | sample error | sample error |

Every model call uses 100 input tokens (of them 20 cached) and 10 output tokens; sample `a`'s
first epoch makes two calls, every other sample one.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from inspect_ai.event import ErrorEvent, ModelEvent, ScoreEvent, SpanBeginEvent, SpanEndEvent, ToolEvent
from inspect_ai.log import EvalConfig, EvalDataset, EvalError, EvalLog, EvalSample, EvalSpec, write_eval_log
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score

MODEL = "openai/gpt-4o"
T0 = dt.datetime(2026, 1, 5, 12, 0, 0, tzinfo=dt.UTC)
WORKING_S, TOTAL_S = 3.5, 4.0
USAGE = {"input_tokens": 80, "input_tokens_cache_read": 20, "output_tokens": 10, "total_tokens": 110}
PROMPTS = {"a": "What is 1+1?", "b": "What is 2+2?", "c": "What is 3+3?"}
VALUES = {("a", 1): "C", ("a", 2): "C", ("b", 1): "P", ("b", 2): "I"}


def _at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def _model_event(prompt: str, output: ModelOutput, at: float, history: list[Any] | None = None) -> ModelEvent:
    output.usage = ModelUsage(**USAGE)
    return ModelEvent(model=MODEL, input=[ChatMessageUser(content=prompt), *(history or [])], tools=[],
                      tool_choice="auto", config=GenerateConfig(), output=output, timestamp=_at(at),
                      completed=_at(at + 0.5), working_time=0.5, span_id="gen")


def _events(sample: str, epoch: int, value: str | None) -> list[Any]:
    events: list[Any] = [SpanBeginEvent(id="gen", name="generate", type="solver", timestamp=_at(0.1))]
    prompt = PROMPTS[sample]
    if value is None:
        events.append(ErrorEvent(error=EvalError(message="RuntimeError('sandbox went away')",
                                                 traceback="Traceback …", traceback_ansi=""),
                                 timestamp=_at(0.2), span_id="gen"))
        return events
    if sample == "a" and epoch == 1:
        call = ModelOutput.for_tool_call(MODEL, "add", {"x": 1, "y": 1}, tool_call_id="call-1")
        events.append(_model_event(prompt, call, 0.2))
        events.append(ToolEvent(id="call-1", function="add", arguments={"x": 1, "y": 1}, result="2",
                                timestamp=_at(0.8), completed=_at(1.0), working_time=0.2, span_id="gen"))
        history = [call.message, ChatMessageTool(content="2", tool_call_id="call-1", function="add")]
        events.append(_model_event(prompt, ModelOutput.from_content(MODEL, "2"), 1.1, history))
    else:
        events.append(_model_event(prompt, ModelOutput.from_content(MODEL, "4"), 0.2))
    events.append(SpanEndEvent(id="gen", timestamp=_at(2.0)))
    events.append(ScoreEvent(score=Score(value=value, answer="2"), scorer="match", target="2", timestamp=_at(2.1)))
    return events


def _sample(sample: str, epoch: int, model: str) -> EvalSample:
    value = VALUES.get((sample, epoch))
    calls = 2 if (sample, epoch) == ("a", 1) else 1
    usage = ModelUsage(**{k: v * calls for k, v in USAGE.items()})
    return EvalSample(
        id=sample, epoch=epoch, input=PROMPTS[sample], target="2",
        messages=[ChatMessageUser(content=PROMPTS[sample]), ChatMessageAssistant(content="2")],
        output=ModelOutput.from_content(model, "2" if value else ""),
        scores={"match": Score(value=value, answer="2")} if value else None,
        error=EvalError(message="RuntimeError('sandbox went away')", traceback="Traceback …", traceback_ansi="")
        if value is None else None,
        events=_events(sample, epoch, value), model_usage={model: usage},
        started_at=T0.isoformat(), completed_at=_at(TOTAL_S).isoformat(), total_time=TOTAL_S,
        working_time=WORKING_S, uuid=f"{sample}-{epoch}",
    )


def build_log(model: str = MODEL, scorers: tuple[str, ...] = ("match",)) -> EvalLog:
    """The log described in the module docstring."""
    spec = EvalSpec.model_validate({"created": T0.isoformat(), "task": "arith", "task_version": 0,
                                    "dataset": EvalDataset(name="arith", samples=3), "model": model,
                                    "config": EvalConfig(epochs=2), "scorers": [{"name": s} for s in scorers]})
    samples = [_sample(s, e, model) for e in (1, 2) for s in ("a", "b", "c")]
    if len(scorers) > 1:
        for s in samples:
            if s.scores:
                s.scores.update({name: Score(value=1) for name in scorers[1:]})
    return EvalLog(eval=spec, samples=samples, status="success")


def write_log(log: EvalLog, folder: Path, fmt: Literal["eval", "json"], name: str = "arith") -> Path:
    """Write `log` with Inspect's own writer in `fmt`; returns the file."""
    path = folder / f"{name}.{fmt}"
    write_eval_log(log, str(path), format=fmt)
    return path


JUDGE_USAGE = {"input_tokens": 500, "output_tokens": 50, "total_tokens": 550}


def with_model_graded_scorer(log: EvalLog) -> EvalLog:
    """`log` whose scored samples also ran a model-graded scorer: one judge call on the same
    model inside the scorer's span, counted in `model_usage` as Inspect counts it."""
    for sample in log.samples or []:
        if not sample.scores:
            continue
        judge = ModelOutput.from_content(MODEL, "GRADE: C")
        judge.usage = ModelUsage(**JUDGE_USAGE)
        sample.events += [
            SpanBeginEvent(id="scorers", name="scorers", type="scorers", timestamp=_at(2.2)),
            SpanBeginEvent(id="qa", parent_id="scorers", name="model_graded_qa", type="scorer", timestamp=_at(2.2)),
            ModelEvent(model=MODEL, input=[ChatMessageUser(content="Grade this answer")], tools=[],
                       tool_choice="none", config=GenerateConfig(), output=judge, timestamp=_at(2.3),
                       completed=_at(2.6), working_time=0.3, span_id="qa"),
            SpanEndEvent(id="qa", timestamp=_at(2.7)), SpanEndEvent(id="scorers", timestamp=_at(2.7)),
        ]
        sample.model_usage = {m: u + ModelUsage(**JUDGE_USAGE) for m, u in sample.model_usage.items()}
    return log
