"""Terminal-Bench leaderboard submissions → one stored run.

Every published layout imports (see docs/realdata.md):

- a submission folder of run folders, each holding `results.json` (+ `run_metadata.json`);
- a submission folder of flat `<timestamp>_results.json` files, no run folders;
- a single `results.json` holding several trials per task (`n_attempts: 5`);
- any of these without `run_metadata.json`.

Paths may be submission folders, run folders or results files, in attempt order. Trials are
numbered across files: a file's trial i of a task (from `trial_name`, `<task>.<i>-of-<n>…`)
becomes attempt `offset + i − 1`, where offset is the number of trials per task in the files
before it, so 5 run files × 80 tasks and one 5-trial file both give 80 tasks × 5 attempts.

- `is_resolved` true/false → success; null → per the null policy (`_null_policy.py`): by
  default a failure, as the leaderboard counts it, so the imported suite rate reproduces the
  submission's own accuracy;
- failure_mode agent_timeout → status "budget_exhausted" (success still follows the tests);
- a failure whose tests ran and failed → wrong_answer (the end state was wrong);
- latency = agent_ended_at − agent_started_at; token counts of 0 mean "not reported", so cost is
  None (unpriced), never 0; reported counts are priced from the price table (`price_table=`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from aeh._util.files import unsafe_id
from aeh.errors import Problem, ValidationError
from aeh.importers._common import (
    iso_to_epoch,
    load_json,
    new_run_id,
    run_info,
    short_hash,
    write_run,
)
from aeh.importers._null_policy import NullPolicy
from aeh.models import (
    AgentStatus,
    Attempt,
    FailureBucket,
    GraderResult,
    Span,
    SpanCategory,
)
from aeh.pricing import PriceTable, load_price_table
from aeh.store import StoreLike
from aeh.trajectory.formats import looks_like, refusal_fix

__all__ = ["agent_from_submission", "discover_results", "import_terminal_bench", "model_from_submission"]

ADAPTER = "import:terminal-bench"
_WHAT = "Terminal-Bench results"
_RESULT_KEYS = {"task_id": str, "failure_mode": str}
_SUBMISSION = re.compile(r"\d{8}_[^_]+_.+")          # <date>_<agent>_<model>, the leaderboard's convention
_DATASET = re.compile(r"(?P<name>[A-Za-z0-9._-]+?)[@:](?P<version>[A-Za-z0-9._-]+)")  # terminal-bench-core@0.1.1
_FLAT = re.compile(r"(?P<stem>.+?)_+results\.json")   # 2025-08-29__07-37-19_results.json (also `__results`)


def model_from_submission(name: str) -> str:
    """`20250923_droid_claude-4-1-opus` → "claude-4-1-opus" (date, then agent, then model)."""
    parts = name.split("_")
    if parts and re.fullmatch(r"\d{8}", parts[0]):
        parts = parts[1:]
    return "_".join(parts[1:]) if len(parts) > 1 else "_".join(parts)


def agent_from_submission(name: str) -> str:
    """`20250829_goose_claude-4-opus` → "goose"; a folder off the convention names itself."""
    return name.split("_")[1] if _SUBMISSION.fullmatch(name) else name


class ResultsFile(BaseModel):
    """One results file of a submission, with where it sits and what it belongs to."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    file: Path
    submission: Path
    """The submission folder (`<date>_<agent>_<model>`): names the model and the agent."""
    run_name: str
    results: dict[str, Any]
    meta: dict[str, Any] | None
    sha256: str


def discover_results(paths: Sequence[str | Path]) -> list[tuple[Path, Path, str]]:
    """(results file, submission folder, run name) for every results file under `paths`, in order.

    A path is a results file, a folder holding `results.json` (a run, or a one-file submission),
    or a submission folder of flat `*_results.json` files or of run folders (natural name order).
    Raises ValidationError naming every path that holds none.
    """
    found, problems = _discover(paths)
    if problems:
        raise ValidationError(problems, _WHAT)
    return found


def _discover(paths: Sequence[str | Path]) -> tuple[list[tuple[Path, Path, str]], list[Problem]]:
    found: list[tuple[Path, Path, str]] = []
    problems: list[Problem] = []
    for given in map(Path, paths):
        if given.is_file():
            found.append(_classify(given))
        elif not given.is_dir():
            problems.append(Problem(str(given), "-", "not a directory or file",
                                    "pass Terminal-Bench submission folders, run folders or results files"))
        elif (given / "results.json").is_file():
            found.append(_classify(given / "results.json"))
        elif flat := sorted((p for p in given.iterdir() if p.is_file() and _FLAT.fullmatch(p.name)), key=_natural):
            found.extend((f, given, _FLAT.fullmatch(f.name)["stem"]) for f in flat)  # type: ignore[index]
        elif runs := sorted((p for p in given.iterdir() if (p / "results.json").is_file()), key=_natural):
            found.extend((r / "results.json", given, r.name) for r in runs)
        else:
            problems.append(Problem(str(given / "results.json"), "-",
                                    "file not found, and no *_results.json files or run folders holding results.json",
                                    "pass a Terminal-Bench submission folder, run folder or results file"))
    return found, problems


def _natural(path: Path) -> list[Any]:
    # run_2 before run_10: leaderboard runs are numbered without zero padding.
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name)]


def _classify(file: Path) -> tuple[Path, Path, str]:
    """(file, submission, run name) of a results file given on its own."""
    flat = _FLAT.fullmatch(file.name)
    if flat and file.name != "results.json":
        return file, file.parent, flat["stem"]
    folder = file.parent
    # A results.json sits in a run folder, or directly in a one-file submission (n_attempts 5).
    if _DATASET.fullmatch(folder.parent.name) or _SUBMISSION.fullmatch(folder.name):
        return file, folder, folder.name
    return file, folder.parent, folder.name


def import_terminal_bench(run_dirs: Sequence[str | Path], db: StoreLike = None, run_id: str | None = None,
                          model: str | None = None, *, null_as: str | NullPolicy = "failure",
                          dataset: str | None = None, agent: str | None = None,
                          price_table: str | Path | None = None) -> str:
    """Import Terminal-Bench results of one model (any published layout) as one run; returns its id.

    `run_dirs`: submission folders, run folders or results files, in attempt order.
    `null_as`: `failure` (default, the leaderboard's definition), `harness_error`, or
    `harness_error:MODE[,MODE…]`. `dataset` (`name@version`) names the suite when neither
    run_metadata.json nor the enclosing folder does. Reported token counts are priced from
    `price_table` (default: the shipped table). Raises `aeh.errors.ValidationError`
    listing every problem (missing file, wrong schema, mixed models without `model=`).
    """
    policy = NullPolicy.parse(null_as)
    if not run_dirs:
        raise ValidationError([Problem("-", "run_dirs", "no path given",
                                       "pass submission folders, run folders or results files")], _WHAT)
    found, problems = _discover(run_dirs)
    loaded = []
    for file, submission, run_name in found:
        try:
            loaded.append(_load(file, submission, run_name))
        except ValidationError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ValidationError(problems, _WHAT)
    model_name: str = model or _one_model(loaded)
    agent_name: str = agent or ", ".join(sorted({_agent(src) for src in loaded}))
    name, version = _dataset(loaded, dataset)

    rid = run_id or new_run_id("tb")
    batch, offset, null_modes = [], 0, []
    for src in loaded:
        trials = _trial_numbers(src.results["results"])
        for res, trial in zip(src.results["results"], trials, strict=True):
            batch.append(_trial(res, rid, offset + trial, src.run_name, model_name, agent_name, policy))
            if res.get("is_resolved") is None:
                null_modes.append(res["failure_mode"])
        offset += max(trials, default=-1) + 1
    prices = load_price_table(price_table)
    reported = _price_reported_tokens(batch, model_name, prices)
    tasks = sorted({res["task_id"] for src in loaded for res in src.results["results"]})
    # The suite is the dataset (name, version, task ids), not the results bytes or whether
    # run_metadata.json was published, so every import of the same 80 tasks compares cleanly.
    suite_key = f"{name or 'unknown'}@{version or '?'}|{','.join(tasks)}".encode()
    accuracies = [_accuracy(src) for src in loaded]
    info = run_info(
        run_id=rid, suite=f"terminal-bench:{name or 'unknown'}@{version or '?'}", suite_hash=short_hash(suite_key),
        adapter=ADAPTER, model=model_name, attempts=offset,
        concurrency=max([int(src.meta.get("n_concurrent_trials") or 1) for src in loaded if src.meta] or [1]),
        config={"sources": [str(src.file.resolve()) for src in loaded],
                "source_sha256": [src.sha256 for src in loaded],
                "agent_name": agent_name,
                "original_run_ids": [src.run_name for src in loaded],
                "source_accuracy": {"per_file": accuracies, "mean": sum(accuracies) / len(accuracies),
                                    "definition": "n_resolved / len(results) per file (the leaderboard's accuracy)"},
                "import_policy": policy.describe(null_modes),
                "null_policy": policy.record(null_modes),
                "cost_note": (f"{reported} trials with token counts priced from price table {prices.version}; "
                              "trials with 0 tokens (not reported) are unpriced (cost None), not free")},
        prices=prices,
    )
    return write_run(db, info, batch)


def _price_reported_tokens(batch: list[tuple[Attempt, list[Span]]], model: str, prices: PriceTable) -> int:
    """Price the trials whose token counts were reported; returns how many had counts."""
    reported = 0
    for attempt, _ in batch:
        if attempt.tokens_in or attempt.tokens_out:
            reported += 1
            attempt.cost_usd = prices.price(model, attempt.tokens_in, attempt.tokens_out)
    return reported


def _accuracy(src: ResultsFile) -> float:
    results = src.results["results"]
    return sum(r.get("is_resolved") is True for r in results) / len(results) if results else 0.0


def _one_model(loaded: Sequence[ResultsFile]) -> str:
    names = {_model(src) for src in loaded}
    if len(names) > 1:
        raise ValidationError(
            [
                Problem(
                    str(loaded[0].file),
                    "-",
                    f"runs come from different submissions ({sorted(names)})",
                    "import each model separately, or pass model= / --model",
                )
            ],
            _WHAT,
        )
    return names.pop()


def _model(src: ResultsFile) -> str:
    folder = src.submission.resolve().name
    if _SUBMISSION.fullmatch(folder):
        return model_from_submission(folder)
    meta_model = (src.meta or {}).get("model_name")
    return str(meta_model) if meta_model else folder


def _agent(src: ResultsFile) -> str:
    meta_agent = (src.meta or {}).get("agent_name")
    return str(meta_agent) if meta_agent else agent_from_submission(src.submission.resolve().name)


def _dataset(loaded: Sequence[ResultsFile], given: str | None) -> tuple[str | None, str | None]:
    """(name, version) from `given`, else run_metadata.json, else the folder above the submission."""
    if given:
        match = _DATASET.fullmatch(given)
        if not match:
            raise ValidationError(
                [
                    Problem(
                        "-", "--dataset", f"{given!r} is not NAME@VERSION", "e.g. --dataset terminal-bench-core@0.1.1"
                    )
                ],
                _WHAT,
            )
        return match["name"], match["version"]
    found = set()
    for src in loaded:
        meta = src.meta or {}
        if meta.get("dataset_name"):
            found.add((str(meta["dataset_name"]), str(meta.get("dataset_version") or "?")))
        elif match := _DATASET.fullmatch(src.submission.resolve().parent.name):
            found.add((match["name"], match["version"]))
    if len(found) > 1:
        raise ValidationError(
            [
                Problem(
                    str(loaded[0].file),
                    "dataset_name",
                    f"files come from different datasets ({sorted(found)})",
                    "import one dataset's results at a time",
                )
            ],
            _WHAT,
        )
    return found.pop() if found else (None, None)


def _trial_numbers(entries: Sequence[dict[str, Any]]) -> list[int]:
    """0-based trial index of each entry: from `trial_name` (`<task>.<i>-of-<n>`), else order of appearance."""
    seen: dict[str, int] = {}
    out = []
    for res in entries:
        match = re.match(r"\.(\d+)-of-\d+", str(res.get("trial_name") or "").removeprefix(res["task_id"]))
        if match:
            out.append(int(match[1]) - 1)
        else:
            out.append(seen.get(res["task_id"], 0))
        seen[res["task_id"]] = seen.get(res["task_id"], 0) + 1
    return out


def _is_count(value: Any) -> bool:
    """A whole number of 0 or more, as JSON may spell it (7, 7.0, "7")."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    if isinstance(value, float):
        return value.is_integer() and value >= 0
    return isinstance(value, str) and value.strip().isdigit() and value.strip().isascii()


def _load(file: Path, submission: Path, run_name: str) -> ResultsFile:
    results, raw = load_json(file, _WHAT, "pass a Terminal-Bench run directory (one that holds results.json)")
    where_file = str(file)
    if not isinstance(results, dict) or not isinstance(results.get("results"), list):
        raise ValidationError(
            [
                Problem(
                    where_file,
                    "results",
                    "missing or not a list",
                    refusal_fix(results, "terminal-bench") if looks_like(results) not in (None, "terminal-bench")
                    else "pass a results.json of terminal-bench (its `results` list holds the trials)",
                )
            ],
            _WHAT,
        )
    problems: list[Problem] = []
    for i, res in enumerate(results["results"]):
        where = f"results[{i}]"
        if not isinstance(res, dict):
            problems.append(Problem(where_file, where, "entry is not an object", "each entry is one trial"))
            continue
        for key, kind in _RESULT_KEYS.items():
            if not isinstance(res.get(key), kind):
                problems.append(
                    Problem(
                        where_file,
                        f"{where}.{key}",
                        f"missing or not a {kind.__name__}",
                        "see docs/realdata.md for the results.json shape",
                    )
                )
        for key in ("total_input_tokens", "total_output_tokens"):
            count = res.get(key)
            if count is not None and not _is_count(count):
                problems.append(Problem(where_file, f"{where}.{key}", f"{count!r} is not a token count",
                                        "a whole number of 0 or more, or null when unknown"))
        if isinstance(res.get("task_id"), str) and (why := unsafe_id(res["task_id"])) is not None:
            problems.append(Problem(where_file, f"{where}.task_id", f"{res['task_id']!r} {why}",
                                    "a task id names a folder: letters, digits, '-', '_' and '.'"))
        if res.get("is_resolved", "?") not in (True, False, None):
            problems.append(
                Problem(
                    where_file,
                    f"{where}.is_resolved",
                    f"{res.get('is_resolved', 'missing')!r} is not true/false/null",
                    "is_resolved must be present and boolean or null",
                )
            )
    valid = [
        (i, res)
        for i, res in enumerate(results["results"])
        if isinstance(res, dict) and isinstance(res.get("task_id"), str)
    ]
    seen: set[tuple[str, int]] = set()
    for (i, res), trial in zip(valid, _trial_numbers([res for _i, res in valid]), strict=True):
        if (res["task_id"], trial) in seen:
            problems.append(
                Problem(
                    where_file,
                    f"results[{i}].task_id",
                    f"trial {trial + 1} of task {res['task_id']!r} appears twice",
                    "each trial of a task appears once (trial_name `<task>.<i>-of-<n>`)",
                )
            )
        seen.add((res["task_id"], trial))
    if problems:
        raise ValidationError(problems, _WHAT)
    return ResultsFile(
        file=file,
        submission=submission,
        run_name=run_name,
        results=results,
        meta=_metadata(file),
        sha256=short_hash(raw),
    )


def _metadata(file: Path) -> dict[str, Any] | None:
    """The run_metadata.json beside a results file (`<stem>_run_metadata.json` for flat files), if any."""
    flat = _FLAT.fullmatch(file.name)
    candidates = [file.parent / "run_metadata.json"] if file.name == "results.json" else []
    if flat and file.name != "results.json":
        candidates.append(file.parent / file.name.replace("results.json", "run_metadata.json"))
    for candidate in candidates:
        if candidate.is_file():
            meta = load_json(candidate, _WHAT)[0]
            if isinstance(meta, dict) and not _is_count(meta.get("n_concurrent_trials") or 1):
                raise ValidationError([Problem(str(candidate), "n_concurrent_trials",
                                               f"{meta['n_concurrent_trials']!r} is not a whole number",
                                               "a whole number of 1 or more")], _WHAT)
            return meta if isinstance(meta, dict) else None
    return None


def _trial(
    res: dict[str, Any], run_id: str, position: int, run_name: str, model: str, agent: str, policy: NullPolicy
) -> tuple[Attempt, list[Span]]:
    task_id, resolved, mode = res["task_id"], res.get("is_resolved"), res["failure_mode"]
    parsed = res.get("parser_results")
    success = resolved is True
    bucket: FailureBucket | None
    status: AgentStatus
    error: str | None
    if resolved is None:
        status, bucket = policy.outcome(mode)
        error = f"no test verdict (failure_mode {mode}, is_resolved null): counted as {bucket.value} by --null-as {policy.label}"  # noqa: E501
    else:
        status = "budget_exhausted" if mode == "agent_timeout" else "answered"
        error = None if mode == "unset" else f"failure_mode {mode}"
        # The tests ran on the end state and failed: a wrong end state, there is no text answer.
        bucket = (
            None
            if success
            else (FailureBucket.budget_exhausted if status == "budget_exhausted" else FailureBucket.wrong_answer)
        )
    a0, a1 = iso_to_epoch(res.get("agent_started_at")), iso_to_epoch(res.get("agent_ended_at"))
    t0, t1 = iso_to_epoch(res.get("test_started_at")), iso_to_epoch(res.get("test_ended_at"))
    s0, s1 = iso_to_epoch(res.get("trial_started_at")), iso_to_epoch(res.get("trial_ended_at"))
    prefix = f"{task_id}-{position}"
    root_id = f"{prefix}-root"

    def span(
        suffix: str,
        category: SpanCategory,
        name: str,
        start: float | None,
        end: float | None,
        ok: bool,
        **attributes: Any,
    ) -> Span:
        return Span(
            run_id=run_id,
            task_id=task_id,
            attempt=position,
            span_id=f"{prefix}-{suffix}",
            parent_span_id=None if suffix == "root" else root_id,
            category=category,
            name=name,
            start_ts=start if start is not None else 0.0,
            end_ts=end,
            status="ok" if ok else "error",
            attributes=attributes,
        )

    spans = [
        span(
            "root",
            "scheduler",
            "attempt",
            s0 or a0,
            s1 or a1,
            success,
            task_id=task_id,
            attempt=position,
            trial_name=res.get("trial_name"),
            source_run=run_name,
            **{"gen_ai.request.model": model},
            success=success,
            status=status,
            failure_mode=mode,
            failure_bucket=bucket.value if bucket else None,
        ),
        span(
            "agent",
            "scheduler",
            "agent",
            a0,
            a1,
            mode not in ("agent_timeout", "unknown_agent_error"),
            **{"gen_ai.agent.name": agent, "gen_ai.request.model": model},
            recording_path=res.get("recording_path"),
        ),
        span("tests", "grading", "tests", t0, t1, resolved is True, parser_results=parsed, is_resolved=resolved),
    ]
    grader = GraderResult(
        tier=0,
        kind="imported_reward",
        name="terminal_bench_tests",
        passed=resolved,
        evidence={"is_resolved": resolved, "failure_mode": mode, "parser_results": parsed},
        error=error if resolved is None else None,
    )
    attempt = Attempt(
        run_id=run_id,
        task_id=task_id,
        attempt=position,
        seed=0,
        success=success,
        status=status,
        failure_bucket=bucket,
        error=error,
        tokens_in=int(res.get("total_input_tokens") or 0),
        tokens_out=int(res.get("total_output_tokens") or 0),
        cost_usd=None,
        latency_s=(a1 - a0) if a0 is not None and a1 is not None else 0.0,
        grader_results=[grader],
        root_span_id=root_id,
    )
    return attempt, spans
