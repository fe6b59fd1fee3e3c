"""The trajectory format: one attempt of an agent, recorded anywhere, gradeable by aeh.

`aeh.Recorder` writes it, `aeh grade --suite S FILE` and `aeh import trajectory FILE` read it,
and an agent in any language can emit it. A file is JSON Lines (one trajectory per line) or a
JSON document holding one trajectory, a list of them, or `{"trajectories": [...]}`:

    {"task_id": "add_then_multiply", "final_output": "126 boxes",
     "steps": [{"kind": "model", "name": "plan", "model": "gpt-4o-mini", "tokens_in": 120, "tokens_out": 30},
               {"kind": "tool", "name": "calculator", "args": {"expression": "(17+25)*3"},
                "result": {"result": 126}}]}

`steps` nest (`steps` inside a step are its children). `kind` is `tool` (a tool call: `args`,
`result` or `error`), `model` (a model call: `model`, `tokens_in`, `tokens_out`) or `step`
(anything else the agent does: a plan, a node, a sub-agent). Unknown fields are refused, so a
typo is a listed problem rather than silently lost data. `load_trajectories` lists every
problem of a file as `file:field: what — fix`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from aeh._util.files import (
    InputFileError,
    InputJsonError,
    decode_input_text,
    loads_strict,
    read_bytes_limited,
)
from aeh.errors import Problem, ValidationError
from aeh.models import AgentStatus
from aeh.trajectory.formats import KINDS, looks_like, looks_like_bytes
from aeh.trajectory.harness import FORMAT_NAME as HARNESS_FORMAT
from aeh.trajectory.harness import HarnessTrajectory, is_harness_trajectory, to_aeh_trajectory

__all__ = ["FORMAT", "Step", "Trajectory", "load_trajectories", "parse_trajectories", "source_format",
           "trajectory_json_schema"]

FORMAT: Literal["aeh.trajectory/1"] = "aeh.trajectory/1"

StepKind = Literal["tool", "model", "step"]


class Step(BaseModel):
    """One thing the agent did; `steps` are what it did inside this one."""

    model_config = ConfigDict(extra="forbid")

    kind: StepKind = "step"
    name: str = Field(min_length=1)
    args: dict[str, Any] | None = None
    """For a tool call: the arguments, a JSON object."""
    result: Any = None
    error: str | None = None
    """The step failed: what went wrong (a tool error, an exception)."""
    model: str | None = None
    tokens_in: int | None = Field(default=None, ge=0)
    tokens_out: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """For a model call: what the source recorded it cost (USD); kept as recorded, not re-priced."""
    start_ts: float | None = None
    end_ts: float | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    steps: list[Step] = Field(default_factory=list)


class Trajectory(BaseModel):
    """One attempt of one task, as the agent recorded it."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["aeh.trajectory/1"] = FORMAT
    task_id: str = Field(min_length=1)
    attempt: int | None = Field(default=None, ge=0)
    """Attempt number; None numbers a task's trajectories in file order."""
    final_output: str | None = None
    status: AgentStatus = "answered"
    error: str | None = None
    agent: str | None = None
    model: str | None = None
    start_ts: float | None = None
    end_ts: float | None = None
    latency_s: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """The agent's own time as the recorder measured it (queueing for a model server left out);
    unset, the attempt's latency is `end_ts - start_ts`, else the span of its steps' times."""
    steps: list[Step] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def walk(self) -> list[Step]:
        """Every step, depth first, in the order the agent took them."""
        out: list[Step] = []
        stack = list(reversed(self.steps))
        while stack:
            step = stack.pop()
            out.append(step)
            stack.extend(reversed(step.steps))
        return out


def trajectory_json_schema() -> dict[str, Any]:
    """The JSON Schema of one trajectory (for agents in other languages)."""
    return Trajectory.model_json_schema()


def _field(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "-"


def _fix(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        return "remove it, or move it under `attributes` (steps) or `metadata` (trajectory)"
    if kind == "missing":
        return "add it"
    if kind == "literal_error":
        return f"use one of the allowed values ({error.get('ctx', {}).get('expected', '')})"
    return "see the trajectory schema in docs/your_agent.md"


def source_format(trajectory: Trajectory) -> str:
    """The format a trajectory was read from: `aeh.trajectory/1` or `agent-eval-harness`."""
    return str(trajectory.metadata.get("source_format") or trajectory.format)


def _harness_problem(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    if kind == "missing":
        return "add it (agent-eval-harness trajectories need task_id, and step_type on every step)"
    if kind == "literal_error":
        return f"use one of the allowed values ({error.get('ctx', {}).get('expected', '')})"
    return "write it as agent-eval-harness records it (its src/trace/schema.py), or as an aeh trajectory"


def _from_harness(where: str, doc: Any, problems: list[Problem]) -> Any:
    """The aeh document of an agent-eval-harness trajectory; its problems named by its own fields."""
    try:
        return to_aeh_trajectory(HarnessTrajectory.model_validate(doc))
    except PydanticValidationError as exc:
        for err in exc.errors(include_url=False):
            problems.append(Problem(where, _field(err["loc"]), f"{err['msg']} (read as {HARNESS_FORMAT} "
                                    "trajectory JSON)", _harness_problem(dict(err))))
    except ValueError as exc:  # a timestamp that is not ISO 8601
        problems.append(Problem(where, "-", f"{exc} (read as {HARNESS_FORMAT} trajectory JSON)",
                                "write timestamps as ISO 8601 or epoch seconds"))
    return None


def parse_trajectories(documents: list[tuple[str, Any]]) -> list[Trajectory]:
    """Validate `(where, document)` pairs; raise one ValidationError listing every problem.

    A document in agent-eval-harness's trajectory shape is read as that format and converted
    (`source_format` says which format each trajectory came from)."""
    problems: list[Problem] = []
    out: list[Trajectory] = []
    foreign = looks_like(documents[0][1]) if documents else None
    if foreign is not None and foreign not in ("trajectory", "agent-eval-harness"):
        # One clear refusal instead of a validation error per field of another tool's format.
        raise ValidationError([Problem(documents[0][0], "-", f"not an aeh trajectory: this looks like "
                                       f"{KINDS[foreign][0]}", f"use {KINDS[foreign][1]}")], "trajectory file")
    for where, doc in documents:
        if is_harness_trajectory(doc):
            doc = _from_harness(where, doc, problems)
            if doc is None:
                continue
        try:
            out.append(Trajectory.model_validate(doc))
        except PydanticValidationError as exc:
            for err in exc.errors(include_url=False):
                problems.append(Problem(where, _field(err["loc"]), err["msg"], _fix(dict(err))))
    if problems:
        raise ValidationError(problems, "trajectory file")
    return out


def _suite_yaml(path: Path, text: str) -> None:
    """Refuse an agent-eval-harness suite given where trajectories go, saying where it goes."""
    head = text.lstrip()
    if path.suffix in (".yaml", ".yml") or head.startswith(("- task_id:", "tasks:", "name:")):
        if "task_id:" in text and ("success_assertions:" in text or "expected_tools:" in text):
            raise ValidationError([Problem(str(path), "-", "this is an agent-eval-harness suite (YAML tasks), "
                                           "not a trajectory file", f"give it as the suite: --suite {path}")],
                                  "trajectory file")


def _documents(path: Path, text: str) -> list[tuple[str, Any]]:
    _suite_yaml(path, text)
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")) and not _is_jsonl(stripped):
        try:
            data = loads_strict(text)
        except json.JSONDecodeError as exc:
            raise ValidationError([Problem(str(path), "-", f"not valid JSON: {exc}",
                                           "write one JSON document, or one trajectory per line")]) from None
        except InputJsonError as exc:
            raise ValidationError([Problem.from_json_error(path, exc)], "trajectory file") from None
        if isinstance(data, dict) and "trajectories" in data:
            data = data["trajectories"]
        items = data if isinstance(data, list) else [data]
        return [(f"{path}[{i}]", item) for i, item in enumerate(items)]
    docs: list[tuple[str, Any]] = []
    problems: list[Problem] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            docs.append((f"{path}:{n}", loads_strict(line)))
        except json.JSONDecodeError as exc:
            problems.append(Problem(f"{path}:{n}", "-", f"not valid JSON: {exc.msg}",
                                    "one complete JSON object per line"))
        except InputJsonError as exc:
            problems.append(Problem(f"{path}:{n}", exc.field, exc.problem, exc.fix))
    if problems:
        raise ValidationError(problems, "trajectory file")
    return docs


def _is_jsonl(text: str) -> bool:
    first = text.split("\n", 1)[0].strip()
    if not first.startswith("{"):
        return False
    try:
        loads_strict(first)
    except (json.JSONDecodeError, InputJsonError):
        return False
    return "\n" in text.strip()


def load_trajectories(path: str | Path) -> list[Trajectory]:
    """Read and validate a trajectory file (JSON Lines or JSON); every problem is listed."""
    p = Path(path)
    try:
        raw = read_bytes_limited(p)
    except InputFileError as exc:
        raise ValidationError([Problem(str(p), "-", str(exc), "pass a trajectory file (JSON or JSON Lines)")],
                              "trajectory file") from None
    except OSError as exc:
        raise ValidationError([Problem(str(p), "-", f"cannot read: {exc.strerror or exc}",
                                       "pass the path of an existing trajectory file")]) from None
    try:
        text = decode_input_text(p, raw)
    except InputFileError as exc:
        kind = looks_like_bytes(raw)
        raise ValidationError([Problem(str(p), "-", str(exc) + (f": this looks like {KINDS[kind][0]}" if kind else ""),
                                       f"use {KINDS[kind][1]}" if kind else "write trajectories as JSON (UTF-8)")],
                              "trajectory file") from None
    trajectories = parse_trajectories(_documents(p, text))
    if not trajectories:
        raise ValidationError([Problem(str(p), "-", "holds no trajectory", "record at least one attempt")])
    return trajectories
