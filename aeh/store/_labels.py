"""Human review: stored review packets out, human labels in, labels as a second rater for κ.

    packets = review_packets(store, run_id)            # tier-3 flags (add include_unflagged=True
    write_review_jsonl(packets, "review.jsonl")         #   to let people label successes too)
    # a person sets "label": true (the agent succeeded) / false on each line
    import_labels(store, "review.jsonl")                # validated, redacted, upserted
    human_label_pairs(store, run_id)                    # task_id, attempt, programmatic, judge

Labels live in `human_labels` (schema migration 2), one per attempt; importing again replaces.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt
from pydantic import ValidationError as PydanticValidationError

from aeh._files import InputFileError, InputJsonError, loads_strict, read_input_text
from aeh.errors import Problem, ValidationError
from aeh.store._migrations import migration
from aeh.store._redact import Redactor
from aeh.store._store import Store

__all__ = ["JUDGE_KINDS", "LabelLine", "human_label_pairs", "import_labels", "labels_frame", "programmatic_verdicts",
           "review_packets", "write_review_jsonl"]


@migration(2)
def human_labels(conn: sqlite3.Connection) -> None:
    """Human verdicts on attempts, imported from `aeh review` exports."""
    conn.execute(
        "CREATE TABLE human_labels ("
        " run_id TEXT NOT NULL, task_id TEXT NOT NULL, attempt INTEGER NOT NULL,"
        " label INTEGER NOT NULL, reviewer TEXT, note TEXT, created_at TEXT NOT NULL,"
        " PRIMARY KEY (run_id, task_id, attempt),"
        " FOREIGN KEY (run_id, task_id, attempt)"
        "  REFERENCES attempts (run_id, task_id, attempt) ON DELETE CASCADE)"
    )


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


def review_packets(store: Store, run_id: str, *, include_unflagged: bool = False) -> list[dict[str, Any]]:
    """One dict per flagged attempt (task_id, attempt, reason, packet, current label).

    With `include_unflagged`, every other attempt gets a small packet too, so reviewers can
    label successes and κ does not rest on failures only.
    """
    full = store.resolve_run_id(run_id)
    labels = {(r["task_id"], r["attempt"]): r for r in labels_frame(store, full).to_dicts()}
    with store._read() as conn:
        flagged = conn.execute(
            "SELECT task_id, attempt, evidence FROM grader_results WHERE run_id = ? AND tier = 3 "
            "AND kind = 'review_flag' ORDER BY task_id, attempt, rowid", (full,)).fetchall()
        everyone = conn.execute(
            "SELECT task_id, attempt, success, status, final_output FROM attempts WHERE run_id = ? "
            "ORDER BY task_id, attempt", (full,)).fetchall() if include_unflagged else []
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for task_id, attempt, evidence in flagged:
        packet = json.loads(evidence)
        out[(task_id, attempt)] = {"run_id": full, "task_id": task_id, "attempt": attempt,
                                   "flagged": True, "reason": packet.get("reason"), "packet": packet}
    for task_id, attempt, success, status, final_output in everyone:
        if (task_id, attempt) in out:
            continue
        graders = [g.model_dump(mode="json") for g in
                   store.attempt_record(full, task_id, attempt).grader_results if g.tier == 0]
        out[(task_id, attempt)] = {
            "run_id": full, "task_id": task_id, "attempt": attempt, "flagged": False,
            "reason": None, "packet": {"task": {"id": task_id}, "final_output": final_output,
                                       "status": status, "success": bool(success),
                                       "grader_results": graders}}
    rows = [out[k] for k in sorted(out)]
    for row in rows:
        known = labels.get((row["task_id"], row["attempt"]))
        row["label"] = None if known is None else bool(known["label"])
        row["reviewer"] = None if known is None else known["reviewer"]
        row["note"] = None if known is None else known["note"]
    return rows


def write_review_jsonl(packets: list[dict[str, Any]], path: str | Path, redactor: Redactor | None = None) -> Path:
    """One JSON object per line, `label` first-class so a person (or a script) can fill it in.

    Each line goes through `redactor` (default: every secret shape) before it is written.
    """
    redactor = redactor if redactor is not None else Redactor()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    keys = ("run_id", "task_id", "attempt", "label", "reviewer", "note", "flagged", "reason", "packet")
    with target.open("w", encoding="utf-8") as f:
        for p in packets:
            line = redactor.redact_plain({k: p.get(k) for k in keys})
            f.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
    return target


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


_LABEL_SCHEMA = {"task_id": pl.Utf8(), "attempt": pl.Int64(), "label": pl.Boolean(),
                 "reviewer": pl.Utf8(), "note": pl.Utf8(), "created_at": pl.Utf8()}


def labels_frame(store: Store, run_id: str) -> pl.DataFrame:
    """The run's human labels, one row per attempt."""
    full = store.resolve_run_id(run_id)
    with store._read() as conn:
        found = conn.execute(
            "SELECT task_id, attempt, label, reviewer, note, created_at FROM human_labels "
            "WHERE run_id = ? ORDER BY task_id, attempt", (full,)).fetchall()
    rows = [(t, a, bool(lab), r, n, c) for t, a, lab, r, n, c in found]
    return pl.DataFrame(rows, schema=_LABEL_SCHEMA, orient="row")


JUDGE_KINDS: tuple[str, ...] = ("judge", "judge_shadow")


def programmatic_verdicts(grader_rows: pl.DataFrame, judge_kinds: tuple[str, ...] = JUDGE_KINDS) -> pl.DataFrame:
    """Per attempt: `programmatic`, True when every decided tier-0 grader that is not a judge passed.

    The one rule for the programmatic side of κ, whoever the other rater is (judge or person).
    """
    return (
        grader_rows.filter((pl.col("tier") == 0) & pl.col("passed").is_not_null()
                           & ~pl.col("kind").is_in(list(judge_kinds)))
        .group_by("task_id", "attempt").agg(pl.col("passed").all().alias("programmatic"))
    )


def human_label_pairs(store: Store, run_id: str, judge_kinds: tuple[str, ...] = JUDGE_KINDS) -> pl.DataFrame:
    """Per labelled attempt: `programmatic` (all tier-0 non-judge graders passed) and `judge`
    (the human label) — the shape `verdict_pairs` gives, so κ treats a person as a rater."""
    full = store.resolve_run_id(run_id)
    labels = labels_frame(store, full).select("task_id", "attempt", pl.col("label").alias("judge"))
    graders = store.grader_frame(full)
    programmatic = programmatic_verdicts(graders, judge_kinds).with_columns(pl.col("attempt").cast(pl.Int64))
    return (programmatic.join(labels, on=["task_id", "attempt"], how="inner")
            .select("task_id", "attempt", "programmatic", "judge").sort("task_id", "attempt"))
