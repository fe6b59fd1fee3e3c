"""Human review, out: the stored review packets of a run and the JSONL a person labels.

    packets = review_packets(store, run_id)            # tier-3 flags (add include_unflagged=True
    write_review_jsonl(packets, "review.jsonl")         #   to let people label successes too)

The labelled file comes back through `aeh.store._label_import.import_labels`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeh.store._label_pairs import labels_frame
from aeh.store._redact import Redactor

if TYPE_CHECKING:
    from aeh.store._store import Store

__all__ = ["review_packets", "write_review_jsonl"]


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
