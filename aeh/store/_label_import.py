"""Human review, in: a labelled review JSONL validated line by line, redacted and upserted.

    import_labels(store, "review.jsonl")                # a person set "label": true / false

Labels live in `human_labels` (schema migration 2), one per attempt; importing again replaces.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt
from pydantic import ValidationError as PydanticValidationError

from aeh._util.files import InputFileError, InputJsonError, loads_strict, read_input_text
from aeh.errors import Problem, ValidationError

if TYPE_CHECKING:
    from aeh.store._store import Store

__all__ = ["LabelLine", "import_labels"]


class LabelLine(BaseModel):
    """One line of a review JSONL file. `packet` and other context keys are ignored on import."""

    model_config = ConfigDict(extra="ignore")

    run_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    attempt: StrictInt = Field(ge=0)
    label: StrictBool | None = None
    """True: the agent succeeded at the task. False: it did not. null: not labelled yet (skipped)."""
    reviewer: str | None = None
    note: str | None = None


def _parse(path: Path) -> tuple[list[tuple[int, LabelLine]], list[Problem]]:
    lines: list[tuple[int, LabelLine]] = []
    problems: list[Problem] = []
    try:
        content = read_input_text(path)
    except InputFileError as exc:
        return [], [Problem(str(path), "-", str(exc), "pass the JSONL that `aeh review --export` wrote")]
    except OSError as exc:
        return [], [Problem(str(path), "-", f"cannot read the file: {exc}",
                            "pass the JSONL that `aeh review --export` wrote")]
    for number, text in enumerate(content.splitlines(), start=1):
        if not text.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = loads_strict(text)
        except json.JSONDecodeError as exc:
            problems.append(Problem(where, "-", f"not JSON ({exc.msg})", "one JSON object per line"))
            continue
        except InputJsonError as exc:
            problems.append(Problem(where, exc.field, exc.problem, exc.fix or "one flat JSON object per line"))
            continue
        try:
            lines.append((number, LabelLine.model_validate(data)))
        except PydanticValidationError as exc:
            for e in exc.errors():
                field = ".".join(str(p) for p in e["loc"]) or "-"
                fix = ("use true (the agent succeeded), false, or null to skip"
                       if field == "label" else "keep the value `aeh review --export` wrote")
                problems.append(Problem(where, field, e["msg"], fix))
    return lines, problems


def import_labels(store: Store, path: str | Path) -> int:
    """Import labelled lines of a review JSONL; returns how many labels were stored.

    Every line is validated first and nothing is written if any line is bad; the error lists
    each problem as `file:line:field: what — fix`. Lines whose label is null are skipped.
    """
    source = Path(path)
    if not source.exists():
        raise ValidationError([Problem(str(source), "-", "file not found",
                                       "pass the JSONL that `aeh review --export` wrote")], "labels file")
    lines, problems = _parse(source)
    labelled = [(n, line) for n, line in lines if line.label is not None]
    with store._read() as conn:
        for number, line in labelled:
            hit = conn.execute("SELECT 1 FROM attempts WHERE run_id = ? AND task_id = ? AND attempt = ?",
                               (line.run_id, line.task_id, line.attempt)).fetchone()
            if hit is None:
                problems.append(Problem(f"{source}:{number}", "attempt",
                                        f"run {line.run_id} has no attempt {line.attempt} of task "
                                        f"{line.task_id!r} in {store.path}",
                                        "import into the store the packets were exported from (--db)"))
    if problems:
        raise ValidationError(problems, what=f"labels file {source}")
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    redact = store.redactor.redact_text
    rows = [(line.run_id, line.task_id, line.attempt, int(bool(line.label)),
             None if line.reviewer is None else redact(line.reviewer),
             None if line.note is None else redact(line.note), now) for _, line in labelled]
    with store._write() as conn:
        conn.executemany(
            "INSERT OR REPLACE INTO human_labels (run_id, task_id, attempt, label, reviewer, note, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    return len(rows)
