"""Per-attempt `results.json` and `run_card.md` for a stored coding run.

The folder layout other coding harnesses hand to their users: one folder per attempt
(`<out>/<task id>/attempt-<n>/`) holding the verdict, the public and hidden test counts, the
SHA-256 of the hidden set that graded it, the sandboxes that were in force, and the `aeh run`
command that reproduces the attempt (attempt seeds depend only on the run seed, the task and the
attempt number, so `--seed S --task T --attempts n+1` runs the same attempt again as its last).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from aeh.grading import unconfined_lines
from aeh.models import Attempt, RunInfo
from aeh.store import StoreLike, using_store

__all__ = ["attempt_card", "reproduce_command", "verdict_of", "write_attempt_card", "write_run_cards"]

#: Command-adapter options and the `aeh run` flag that sets each.
_FLAGS = {"solver": "--solver", "label": "--label", "price_in": "--price-in", "price_out": "--price-out",
          "currency": "--currency", "timeout_s": "--solver-timeout"}


def verdict_of(attempt: Attempt, evidence: dict[str, Any]) -> str:
    """SOLVED, PARTIAL (every public test passed, a hidden one failed), FAILED or HARNESS_ERROR."""
    if attempt.is_harness_error:
        return "HARNESS_ERROR"
    if attempt.success:
        return "SOLVED"
    public_total = evidence.get("public_total") or 0
    if public_total and evidence.get("public_passed") == public_total and not evidence.get("tamper_suspect"):
        return "PARTIAL"
    return "FAILED"


#: The coding harness's own form of the built-in solvers (`aeh run FIXTURE --noop`).
_FIXTURE_SOLVERS = {"noop": "--noop", "reference": "--ref"}


def reproduce_command(info: RunInfo, attempt: Attempt) -> str:
    """The `aeh run` command that runs this attempt again (as the last attempt of a new run), in
    the form the run was started with: `aeh run FIXTURE --noop …` for the coding harness's form."""
    config = info.config
    options = dict(config.get("adapter_options") or {})
    fixture_form = config.get("command_form") == "fixture"
    if fixture_form:
        parts = ["aeh", "run", str(config.get("suite_spec") or info.suite)]
        solver = str(options.get("solver", ""))
        parts += [_FIXTURE_SOLVERS[solver]] if solver in _FIXTURE_SOLVERS else ["--solver", solver]
        options.pop("solver", None)
    else:
        parts = ["aeh", "run", "--suite", str(config.get("suite_spec") or info.suite), "--adapter", info.adapter]
    for key, flag in _FLAGS.items():
        if options.get(key) is not None:
            parts += [flag, str(options[key])]
    if options.get("sandbox_solver"):
        parts.append("--sandbox-solver")
    if options.get("confine_solver") is False:
        parts.append("--no-solver-confinement")
    if config.get("grading_sandbox") == "disabled":
        parts.append("--no-grading-sandbox")
    if config.get("grading_confinement") == "disabled":
        parts.append("--no-grading-confinement")
    if fixture_form:  # one fixture, one attempt: the seed alone runs it again
        parts += ["--seed", str(info.seed)]
    else:
        parts += ["--task", attempt.task_id, "--seed", str(info.seed), "--attempts", str(attempt.attempt + 1)]
    return shlex.join(parts)


def attempt_card(info: RunInfo, attempt: Attempt) -> dict[str, Any]:
    """The `results.json` document of one attempt."""
    grader = next((g for g in attempt.grader_results if g.kind == "hidden_tests"), None)
    evidence: dict[str, Any] = dict(grader.evidence) if grader is not None else {}
    config = info.config
    return {
        # `seed` is the run seed, the one the reproduce command passes; the attempt's own is derived from it
        "run_id": info.run_id, "task_id": attempt.task_id, "attempt": attempt.attempt, "seed": info.seed,
        "attempt_seed": attempt.seed,
        "verdict": verdict_of(attempt, evidence), "solved": attempt.success, "status": attempt.status,
        "error": attempt.error or (grader.error if grader is not None else None),
        "tests": {"public": {"passed": evidence.get("public_passed"), "total": evidence.get("public_total")},
                  "hidden": {"passed": evidence.get("hidden_passed"), "total": evidence.get("hidden_total")},
                  "failing": list(evidence.get("failing") or [])},
        # the one hidden set that graded this attempt: this fixture's tests_hidden/ (never the suite's digest)
        "hidden_sha256": evidence.get("hidden_sha256")
        or (config.get("hidden_sha256_per_task") or {}).get(attempt.task_id),
        "tamper_suspect": bool(evidence.get("tamper_suspect")),
        "tamper_evidence": list(evidence.get("tamper_evidence") or []),
        "tamper_files": list(evidence.get("tamper_files") or []),
        "sandbox": {"grading_sandbox": evidence.get("grading_sandbox") or config.get("grading_sandbox"),
                    "grading_isolation": evidence.get("grading_isolation"),
                    "grading_confinement": config.get("grading_confinement"),
                    "solver_confinement": config.get("solver_confinement"),
                    "solver_sandbox": config.get("solver_sandbox")},
        # one line per jail the run went without: the measurement is not a confined one
        "unconfined": unconfined_lines(config),
        "solver": {"command": config.get("solver"), "label": config.get("solver_label"),
                   "role": config.get("solver_role")},
        "usage": {"tokens_in": attempt.tokens_in, "tokens_out": attempt.tokens_out, "cost": attempt.cost_usd,
                  "currency": config.get("cost_currency") or "USD",
                  "provenance": config.get("cost_provenance")},
        "latency_s": attempt.latency_s,
        "workspace": evidence.get("workspace"), "transcript": evidence.get("transcript"),
        "aeh_version": info.aeh_version, "suite": info.suite, "suite_hash": info.suite_hash,
        "reproduce": reproduce_command(info, attempt),
    }


def _markdown(card: dict[str, Any]) -> str:
    def count(which: str) -> str:
        t = card["tests"][which]
        return "—" if t["total"] is None else f"{t['passed']}/{t['total']}"

    sandbox = card["sandbox"]
    lines = [f"# {card['task_id']} · attempt {card['attempt']} · {card['verdict']}", "",
             f"Run `{card['run_id']}`, suite `{card['suite']}` (hash {card['suite_hash']}), "
             f"solver `{card['solver']['label'] or card['solver']['command'] or '-'}`, seed {card['seed']}.", "",
             "| tests | passed |", "| --- | --- |",
             f"| public | {count('public')} |", f"| hidden | {count('hidden')} |", ""]
    if card["tests"]["failing"]:
        lines += ["Failing: " + ", ".join(f"`{name}`" for name in card["tests"]["failing"]), ""]
    if card["error"]:
        lines += [f"Error: {card['error']}", ""]
    lines += [f"**{line}**" for line in card["unconfined"]] + ([""] if card["unconfined"] else [])
    if card["tamper_suspect"]:
        lines += ["**tamper_suspect**: " + "; ".join(card["tamper_evidence"] + card["tamper_files"]), ""]
    lines += [f"Hidden set SHA-256 (`{card['task_id']}/tests_hidden`, the tests that graded it): "
              f"`{card['hidden_sha256'] or '-'}`", "",
              f"Sandbox: grading network `{sandbox['grading_sandbox']}`, grading isolation "
              f"`{sandbox['grading_isolation']}`, solver confinement `{sandbox['solver_confinement']}`, "
              f"solver network sandbox `{sandbox['solver_sandbox']}`.", "",
              "Reproduce:", "", "```", card["reproduce"], "```", ""]
    return "\n".join(lines)


def _folder_name(task_id: str) -> str:
    """A task id as one folder name: never a path (ids of other suites may hold separators)."""
    name = task_id.replace("/", "_").replace("\\", "_")
    return f"_{name}" if name in (".", "..", "") else name


def write_run_cards(run_id: str, out: str | Path, db: StoreLike = None) -> list[Path]:
    """Write `<out>/<task>/attempt-<n>/results.json` and `run_card.md` for every attempt of the run."""
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        info = store.run_info(full)
        keys = store.attempts_frame(full, columns=["task_id", "attempt"]).rows()
        attempts = [store.attempt_record(full, str(task), int(n)) for task, n in sorted(keys)]
    written = []
    for attempt in attempts:
        folder = Path(out) / _folder_name(attempt.task_id) / f"attempt-{attempt.attempt}"
        write_attempt_card(folder, info, attempt)
        written.append(folder)
    return written


def write_attempt_card(folder: str | Path, info: RunInfo, attempt: Attempt, **extra: Any) -> dict[str, Any]:
    """Write one attempt's `results.json` (its card, with `extra` fields) and `run_card.md` into `folder`."""
    card = {**attempt_card(info, attempt), **extra}
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(card, indent=2, default=str) + "\n", encoding="utf-8")
    (folder / "run_card.md").write_text(_markdown(card), encoding="utf-8")
    return card
