"""`aeh run FIXTURE… --noop | --ref | --solver CMD [--label L --price-in X --price-out Y]`: the coding
harness's own command form, as its users type it, translated onto aeh's run.

Each FIXTURE (a `task.json` fixture, or a folder of them) is one run of one attempt per fixture:
the fixture is the suite, the adapter is `command`, the solver `noop` (`--noop`), `reference`
(`--ref`) or CMD; `--price-in/--price-out` are EUR per million tokens, as that harness prices, and
otherwise the run's currency follows the solver's usage file (`cost_eur` taken as reported). Every
other `aeh run` flag keeps its meaning (`--seed`, `--sandbox-solver`, `--no-grading-sandbox`, `--db` …).
The run is stored as any run, and each attempt gets that harness's run folder
`<runs-dir>/<fixture>-<UTC time>/`: `results.json` and `run_card.md` (the attempt's card),
`transcript.txt`, `workspace/` (what the solver saw and touched) and `grading/` (the clean grading
directory, its hidden tests removed).

Exit codes are that harness's: 0 every fixture solved · 1 a harness or contract error (a fixture
that does not load, a solver that could not run, grading that could not run) · 2 every run valid
and some fixture not solved (PARTIAL or FAILED).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeh.errors import AehError

if TYPE_CHECKING:
    from aeh.analysis import RunResult

__all__ = ["EXIT_CONTRACT", "EXIT_NOT_SOLVED", "EXIT_SOLVED", "add_fixture_arguments", "is_fixture_form", "run_notes",
           "run_fixtures"]

EXIT_SOLVED = 0
EXIT_CONTRACT = 1
EXIT_NOT_SOLVED = 2

#: The flags of aeh's own form that the fixture form sets itself.
_OWN_FORM = {"suite": "--suite", "adapter": "--adapter", "resume": "--resume", "agent": "--agent"}


def add_fixture_arguments(parser: argparse.ArgumentParser) -> None:
    """The coding harness's form on `aeh run`: FIXTURE… positionally, `--noop`, `--ref`, `--runs-dir`."""
    g = parser.add_argument_group("the coding harness's form: aeh run FIXTURE… --noop | --ref | --solver CMD "
                                  "(exit 0 solved · 1 harness/contract error · 2 valid run, not solved)")
    parser.add_argument("fixtures", nargs="*", metavar="FIXTURE",
                        help="coding fixtures (task.json folders) to run once each, in the coding harness's form")
    g.add_argument("--noop", action="store_true", help="the floor: leave the workspace as prepared (solver noop)")
    g.add_argument("--ref", action="store_true", help="the ceiling: copy the fixture's reference (solver reference)")
    g.add_argument("--runs-dir", default="runs", metavar="DIR",
                   help="where each run's folder <fixture>-<UTC time>/ is written (default runs)")


def is_fixture_form(args: argparse.Namespace) -> bool:
    """True when the command line is the coding harness's form (fixtures given, or --noop / --ref)."""
    return bool(getattr(args, "fixtures", None)) or bool(getattr(args, "noop", False) or getattr(args, "ref", False))


def _refusal(args: argparse.Namespace) -> str | None:
    """Why the command line mixes the two forms, or None."""
    chosen = [flag for flag, on in (("--noop", args.noop), ("--ref", args.ref), ("--solver", args.solver)) if on]
    if not args.fixtures:
        return f"{' '.join(chosen)} runs coding fixtures: give their folders — aeh run FIXTURE… {chosen[0]}"
    if not chosen:
        return (f"aeh run {' '.join(args.fixtures)} is the coding harness's form: give one of --noop (the floor), "
                "--ref (the ceiling) or --solver CMD — or, to run a suite by name or folder, aeh run --suite NAME")
    if len(chosen) != 1:
        return f"give one of --noop (the floor), --ref (the ceiling) or --solver CMD, not {' and '.join(chosen)}"
    mixed = [flag for name, flag in _OWN_FORM.items() if getattr(args, name, None)]
    if args.adapter == "command":
        mixed.remove("--adapter")
    if args.attempts not in (None, 1):
        mixed.append("--attempts")
    if getattr(args, "dry_run", False):
        mixed.append("--dry-run")
    if mixed:
        return (f"{', '.join(mixed)} belong(s) to aeh's own form, not to aeh run FIXTURE…: run "
                f"`aeh run --suite FIXTURE --adapter command --solver …` for that")
    return None


def _solver(args: argparse.Namespace) -> str:
    return "noop" if args.noop else "reference" if args.ref else str(args.solver)


def _options(args: argparse.Namespace, fixture: str) -> dict[str, Any]:
    """aeh's run options for one fixture: the flags as aeh's own form reads them, translated."""
    from aeh.commands.run import _spec_options  # the translation aeh's own form makes of its flags

    translated = argparse.Namespace(**vars(args))
    translated.suite, translated.adapter, translated.solver, translated.attempts = fixture, "command", _solver(args), 1
    if args.price_in is not None and args.currency is None:
        translated.currency = "EUR"  # that harness's prices are EUR per million tokens
    options = _spec_options(translated)
    options["config"] = {**(options.get("config") or {}), "command_form": "fixture"}
    options.setdefault("log_level", "silent")
    return options


def _folder(runs_dir: Path, task_id: str, when: datetime) -> Path:
    base = runs_dir / f"{task_id.replace('/', '_')}-{when.strftime('%Y%m%dT%H%M%SZ')}"
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name}-{n}")
    return folder


def _copy(source: Any, target: Path) -> str | None:
    """Copy a kept workspace, grading directory or transcript into the run folder (links as links)."""
    if not source or not Path(str(source)).exists():
        return None
    src = Path(str(source))
    if src.is_dir():
        shutil.copytree(src, target, symlinks=True)
    else:
        shutil.copyfile(src, target)
    return str(target)


def _run_folders(run_id: str, db: Any, runs_dir: Path) -> list[tuple[str, str, Path]]:
    """Write each attempt's run folder; (task, verdict, folder) per attempt."""
    from aeh.importers import write_attempt_card  # heavy: loaded on first use (the store)
    from aeh.store import default_db, using_store

    store_path = Path(str(db or default_db())).resolve()
    out = []
    with using_store(db) as store:
        info = store.run_info(run_id)
        keys = sorted(store.attempts_frame(run_id, ["task_id", "attempt"]).iter_rows())
        attempts = [store.attempt_record(run_id, str(t), int(a)) for t, a in keys]
    for attempt in attempts:
        folder = _folder(runs_dir, attempt.task_id, datetime.now(UTC))
        folder.mkdir(parents=True)
        grader = next((g for g in attempt.grader_results if g.kind == "hidden_tests"), None)
        evidence = grader.evidence if grader is not None else {}
        kept = {"workspace": _copy(evidence.get("workspace"), folder / "workspace"),
                "grading_dir": _copy(evidence.get("grading_dir"), folder / "grading"),
                "transcript": _copy(evidence.get("transcript"), folder / "transcript.txt")}
        card = write_attempt_card(folder, info, attempt, db=str(store_path), **kept)
        out.append((attempt.task_id, str(card["verdict"]), folder))
    return out


def _run_one(args: argparse.Namespace, fixture: str) -> int:
    from aeh.api import run_async, run_sync  # heavy: loaded on first use (the engine)

    try:
        table = run_sync(run_async(db=args.db, **_options(args, fixture)))
    except AehError as exc:
        print(f"✗ {fixture}: {exc}", file=sys.stderr)
        return EXIT_CONTRACT
    verdicts, broken = [], []
    for task, verdict, folder in _run_folders(table.run_id, args.db, Path(args.runs_dir)):
        contract = _contract_broken(args, verdict)
        print(f"{task}: {verdict} → {folder}" + (f"  (CONTRACT: {contract} — `aeh validate {fixture}`)"
                                                 if contract else ""))
        verdicts.append(verdict)
        broken += [contract] if contract else []
    for line in run_notes(table):
        print(f"  {line}")
    print(f"  run id {table.run_id}")
    if table.invalid_measurement or broken or "HARNESS_ERROR" in verdicts or not verdicts:
        return EXIT_CONTRACT
    return EXIT_SOLVED if all(v == "SOLVED" for v in verdicts) else EXIT_NOT_SOLVED


def _contract_broken(args: argparse.Namespace, verdict: str) -> str | None:
    """The fixture contract a floor or ceiling run shows broken: the seed must fail a hidden test,
    the reference must pass every test."""
    if args.noop and verdict == "SOLVED":
        return "the seed already passes every hidden test, so the fixture measures nothing"
    if args.ref and verdict in ("PARTIAL", "FAILED"):
        return "the reference does not pass every test: the fixture or the grading environment is broken"
    return None


def run_fixtures(args: argparse.Namespace) -> int:
    """Run each fixture in the coding harness's form; that harness's exit code over all of them."""
    refused = _refusal(args)
    if refused is not None:
        print(f"aeh: error: {refused}", file=sys.stderr)
        return EXIT_CONTRACT
    codes = [_run_one(args, fixture) for fixture in args.fixtures]
    worst = EXIT_CONTRACT if EXIT_CONTRACT in codes else max(codes)
    meaning = {EXIT_SOLVED: "solved", EXIT_CONTRACT: "harness or contract error", EXIT_NOT_SOLVED: "not solved"}
    print(f"exit {worst}: {meaning[worst]}")
    return worst


def run_notes(table: RunResult) -> list[str]:
    """Lines printed after a coding run: the grading sandbox, never silently off; kept workspaces."""
    facts = table.run.config.facts  # the coding suite's and the command adapter's
    mode = facts.get("grading_sandbox")
    if mode is None:
        return []
    lines = [f"grading sandbox: {mode}" + ("" if mode == "unshare" else
                                            "  (WARNING: graded code ran with the network available)")]
    from aeh.importers import hidden_set_lines  # heavy: loaded on first use

    lines += hidden_set_lines(facts)
    from aeh.grading import CONFINED, unconfined_lines

    for key in ("solver_confinement", "grading_confinement"):
        mode = facts.get(key)
        if mode and not str(mode).startswith("none") and mode in CONFINED:
            lines.append(f"{key.replace('_', ' ')}: {mode}")
    lines += unconfined_lines(facts)
    if table.run.config.workspace_root:
        lines.append(f"workspaces kept in {table.run.config.workspace_root}")
    return lines + _ceiling_note(table, facts)


def _ceiling_note(table: RunResult, facts: dict[str, Any]) -> list[str]:
    """The reference solution must solve everything: anything less is the suite's or the
    environment's fault, and is said so rather than left as a low score."""
    if facts.get("solver_role") != "ceiling" or not len(table):
        return []
    total = table.attempts_total
    solved = int(table["successes"].sum())
    if solved == total:
        return []
    return [f"WARNING: the reference solution (the ceiling) solved {solved} of {total} attempts "
            f"({table.harness_errors} harness errors): the fixtures or the grading environment "
            "are broken, not an agent — `aeh tasks validate --suite SUITE` runs the fixture contract"]
