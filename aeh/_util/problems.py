"""Turning YAML and pydantic errors into `file:field: what is wrong — fix` problems."""

from __future__ import annotations

import difflib
import types
import typing
from pathlib import Path
from typing import Any

import pydantic
import yaml
from pydantic import BaseModel

from aeh._util.yaml import load_yaml, read_text_limited
from aeh.errors import Problem
from aeh.models import Task

__all__ = ['display_path', 'pydantic_problems', 'read_yaml', 'salvage_task']


# --- turning YAML and pydantic errors into Problems ----------------------------------------


def display_path(path: Path) -> str:
    """Relative to the working directory when possible, so `file:field` is clickable."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_yaml(path: Path) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Parse one YAML mapping; on failure return the problems (with the line) instead."""
    where = display_path(path)
    try:
        data = load_yaml(read_text_limited(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        field = f"line {mark.line + 1}" if mark is not None else "(yaml)"
        what = getattr(exc, "problem", None) or str(exc)
        col = f" (column {mark.column + 1})" if mark is not None else ""
        return None, [Problem(where, field, f"YAML syntax error: {what}{col}", "fix the YAML syntax")]
    except UnicodeDecodeError:
        return None, [Problem(where, "(file)", "is not UTF-8 text (a binary file?)", "pass a YAML text file")]
    except OSError as exc:
        return None, [Problem(where, "(file)", f"cannot read the file: {exc}", "pass a regular YAML file")]
    if not isinstance(data, dict):
        got = "nothing (empty file)" if data is None else type(data).__name__
        return None, [Problem(where, "(file)", f"expected a YAML mapping, got {got}",
                              "write one task as a mapping of key: value")]
    return data, []


def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation like `Budget`, `list[PlanStep]`, `X | None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (list, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if found := _submodel(arg):
                return found
    return None


def _allowed_keys(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """The keys the model accepts at `loc` (the parent of the offending key)."""
    for part in loc:
        if model is None:
            return []
        if isinstance(part, int):
            continue
        field = next(
            (f for n, f in model.model_fields.items() if part in (n, f.alias)), None
        )
        model = _submodel(field.annotation) if field is not None else None
    if model is None:
        return []
    return sorted(f.alias or n for n, f in model.model_fields.items())


def pydantic_problems(
    file: str,
    exc: pydantic.ValidationError,
    model: type[BaseModel] | None = None,
    prefix: tuple[str | int, ...] = (),
) -> list[Problem]:
    """One Problem per pydantic error, with field paths like `budget.max_stepz`.

    `prefix` places a nested model's errors, e.g. ("graders", 1) for a grader's options.
    """
    problems = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        field = _field_path(prefix + loc)
        if err["type"] == "extra_forbidden":
            key = str(loc[-1])
            allowed = _allowed_keys(model, loc[:-1])
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            fix = f"{hint}allowed keys: {', '.join(allowed)}" if allowed else "remove it"
            problems.append(Problem(file, field, f"unknown key {key!r}", fix))
        elif err["type"] == "missing":
            problems.append(Problem(file, field, "missing required field", f"add `{loc[-1]}:`"))
        else:
            # A whole-model error's message is its own fix; echoing the input would dump it all.
            got = f"got {err.get('input')!r}"[:200] if loc else None
            problems.append(Problem(file, field, err["msg"].removeprefix("Value error, "), got))
    return problems


# --- directory suites ----------------------------------------------------------------------


def salvage_task(data: dict[str, Any], exc: pydantic.ValidationError) -> Task | None:
    """The task without the top-level keys that failed, if that much validates."""
    bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]}
    if not bad:  # a whole-task error (e.g. both grader keys): nothing to trim
        return None
    try:
        return Task.model_validate({k: v for k, v in data.items() if k not in bad})
    except pydantic.ValidationError:
        return None
