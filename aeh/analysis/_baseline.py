"""The committed baseline file `aeh gate` reads, validated as strictly as a task file.

A number the gate would compare against must be finite (JSON's NaN and Infinity are refused: an
infinite sd makes every noise band infinite and the gate pass on anything), an sd ≥ 0, a count
≥ 0, the format version the one this aeh writes, and the suite hash present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field, model_validator

from aeh._util.files import InputFileError, InputJsonError, loads_strict, read_input_text
from aeh._util.problems import display_path
from aeh.errors import ConfigError, Problem, ValidationError

__all__ = ["BASELINE_FORMAT", "Baseline", "BaselineSummaries", "BaselineSummary", "BaselineTask", "load_baseline",
           "validate_baseline"]

BASELINE_FORMAT = "aeh-baseline/1"
_RESAVE = "write it again with `aeh baseline save RUN --out FILE`"

Score = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Spread = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]


class BaselineSummary(BaseModel):
    """One dimension's mean, sample sd and count of scored attempts."""

    model_config = ConfigDict(extra="allow")
    mean: Score
    sd: Spread
    n: Count
    #: the per-attempt scores the per-task band tests rank (absent in baselines saved before them)
    scores: list[Score] | None = None


class BaselineTask(BaseModel):
    """One task: its success counts and its per-dimension summaries."""

    model_config = ConfigDict(extra="allow")
    successes: Count
    attempts: Count
    dimensions: dict[str, BaselineSummary] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _successes_within_attempts(self) -> BaselineTask:
        if self.successes > self.attempts:
            raise ValueError(f"successes ({self.successes}) exceed attempts ({self.attempts})")
        return self


class BaselineSummaries(BaseModel):
    """What the gate compares a run against: per-dimension summaries of the suite and of each task,
    and how they were scored. Unknown keys are kept (newer writers may add some)."""

    model_config = ConfigDict(extra="allow")
    suite: str | None = None
    run_id: str | None = None
    model: str | None = None
    loop_n: Annotated[int, Field(ge=1)] = 3
    learned_optimal_steps: dict[str, Count] = Field(default_factory=dict)
    declared_optimal_steps: dict[str, Count] = Field(default_factory=dict)
    scoring: Annotated[str, Field(min_length=1)] = "aeh"
    """The scoring profile the baseline was scored with; the gate scores the run with it too."""
    dimensions: dict[str, BaselineSummary]
    tasks: dict[str, BaselineTask]


class Baseline(BaselineSummaries):
    """The file `aeh baseline save` writes: the summaries, in this aeh's format, of one suite version."""

    format: str
    suite_hash: Annotated[str, Field(min_length=1)]


def _fix(err: Any) -> str:
    kind, field = err["type"], str(err["loc"][-1]) if err["loc"] else ""
    if kind == "missing":
        return f"add `{field}` ({_RESAVE})"
    if kind == "finite_number":
        return f"write a finite number (NaN and Infinity are not measurements), or {_RESAVE}"
    if field == "sd":
        return f"an sd is ≥ 0; {_RESAVE}"
    return _RESAVE


def _problems(where: str, exc: pydantic.ValidationError) -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = ".".join(str(part) for part in err["loc"]) or "(top level)"
        if err["type"] == "missing":
            message = "missing required field"
        else:
            message = err["msg"].removeprefix("Value error, ") + f" (got {err.get('input')!r})"[:120]
        problems.append(Problem(where, loc, message, _fix(err)))
    return problems


def validate_baseline(data: Any, where: str = "baseline") -> Baseline:
    """The validated baseline, or ValidationError (exit 2) listing every `file:field: problem — fix`."""
    if not isinstance(data, dict):
        raise ValidationError([Problem(where, "(file)", f"expected a JSON object, got {type(data).__name__}",
                                       _RESAVE)], what=f"baseline {where}")
    if data.get("format") != BASELINE_FORMAT:
        got = data.get("format")
        message = "no format: not an aeh baseline" if got is None else f"format {got!r} is not {BASELINE_FORMAT!r}"
        raise ValidationError([Problem(where, "format", message,
                                       f"this aeh reads {BASELINE_FORMAT}; {_RESAVE}")], what=f"baseline {where}")
    try:
        return Baseline.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ValidationError(_problems(where, exc), what=f"baseline {where}") from None


def _schema_problems(text: str, where: str) -> list[Problem]:
    """What the schema says of a file the strict reader refused (NaN, Infinity, a duplicate key),
    so a bad number is also named by its full field path (`dimensions.overall.sd`, not `sd`)."""
    try:
        loose = json.loads(text)
    except (ValueError, RecursionError):
        return []
    try:
        validate_baseline(loose, where)
    except ValidationError as exc:
        return list(exc.problems)
    return []


def load_baseline(path: str | Path) -> Baseline:
    """Read and validate a baseline file: the model the gate reads."""
    where = display_path(Path(path))
    try:  # bounded: a FIFO, a device or a huge file is refused before it is read
        text = read_input_text(path)
    except InputFileError as exc:
        raise ConfigError(f"cannot read baseline {where}: {exc} — pass the file `aeh baseline save` wrote") from None
    except OSError as exc:
        raise ConfigError(f"cannot read baseline {where}: {exc.strerror or exc}") from None
    try:
        data = loads_strict(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"baseline {where} is not JSON: {exc} — {_RESAVE}") from None
    except InputJsonError as exc:
        raise ValidationError([Problem.from_json_error(where, exc), *_schema_problems(text, where)],
                              what=f"baseline {where}") from None
    return validate_baseline(data, where)
