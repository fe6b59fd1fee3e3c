"""The coding harness's own commands, from its README, on fixtures written in its layout
(`task.json`, `seed/`, `tests_public/`, `tests_hidden/`, `reference/`), with its exit codes:
0 solved · 1 harness/contract error · 2 valid run but not solved.

    aeh validate fixtures/fx-001-… fixtures/fx-002-…
    aeh run fixtures/fx-001-… --noop          # exit 2, PARTIAL
    aeh run fixtures/fx-001-… --ref           # exit 0, SOLVED
    aeh run fixtures/fx-001-… --solver 'claude -p "$(cat PROMPT.md)" --permission-mode acceptEdits' \\
      --label claude-sonnet --price-in 2.5 --price-out 12.0
    aeh matrix runs/* --out runs/matrix

Each test runs in a folder laid out as that harness's users have it (`fixtures/`, `runs/`,
`runs.db` made where the command runs).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
from pathlib import Path

import pytest

from aeh.cli import main
from aeh.grading import hidden_sha256
from aeh.suite.builtin import BUILTIN_SUITES

SEED001 = Path(__file__).resolve().parents[1] / "fixtures" / "seed001"
CLAMP, SLUGIFY = "fixtures/fx-001-clamp", "fixtures/fx-002-slugify"
FIXED_CLAMP = ("def clamp(value, low, high):\n    low, high = min(low, high), max(low, high)\n"
               "    return max(low, min(value, high))\n")
#: A stand-in for the agent CLI of that README's example: it must be given the prompt, and it fixes the fixture.
FAKE_CLAUDE = f"""#!/bin/sh
[ "$1" = "-p" ] && [ -n "$2" ] && [ "$3" = "--permission-mode" ] && [ "$4" = "acceptEdits" ] || exit 64
case "$2" in *clamp*) ;; *) exit 65 ;; esac
cat > clamp.py <<'PY'
{FIXED_CLAMP}PY
printf '{{"tokens_in": 12000, "tokens_out": 3000}}' > "$AEH_USAGE_FILE"
"""
README_SOLVER = 'claude -p "$(cat PROMPT.md)" --permission-mode acceptEdits'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder as that harness's users have it: fixtures/ in its layout, commands run from here."""
    shutil.copytree(SEED001 / "fixtures", tmp_path / "fixtures")
    shutil.copytree(SEED001 / "broken", tmp_path / "broken")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AEH_DB", raising=False)
    return tmp_path


def _cards(project: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((project / "runs").glob("*/results.json"))]


def test_validate_exits_0_when_every_fixture_keeps_the_contract(project: Path) -> None:
    assert main(["validate", CLAMP, SLUGIFY]) == 0


def test_validate_exits_1_on_a_contract_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", CLAMP, "broken/fx-900-broken"]) == 1
    assert "fx-900-broken:contract: seed half" in capsys.readouterr().out


def test_noop_exits_2_partial_with_the_run_folder(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", CLAMP, "--noop"]) == 2
    assert "fx-001-clamp: PARTIAL" in capsys.readouterr().out
    (folder,) = (project / "runs").iterdir()
    assert folder.name.startswith("fx-001-clamp-")
    assert {p.name for p in folder.iterdir()} == {"results.json", "run_card.md", "transcript.txt", "workspace",
                                                  "grading"}
    assert (folder / "workspace" / "clamp.py").is_file() and (folder / "workspace" / "PROMPT.md").is_file()
    assert not (folder / "grading" / "tests_hidden").exists()  # the clean grading, its hidden tests removed
    (card,) = _cards(project)
    assert (card["verdict"], card["tests"]["public"], card["tests"]["hidden"]) == (
        "PARTIAL", {"passed": 2, "total": 2}, {"passed": 1, "total": 2})
    assert (project / "runs.db").is_file()


def test_ref_exits_0_solved(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", CLAMP, "--ref"]) == 0
    assert "fx-001-clamp: SOLVED" in capsys.readouterr().out


@pytest.mark.slow
def test_the_readme_solver_command_with_label_and_eur_prices(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = project / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text(FAKE_CLAUDE)
    (bin_dir / "claude").chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    code = main(["run", CLAMP, "--solver", README_SOLVER, "--label", "claude-sonnet", "--price-in", "2.5",
                 "--price-out", "12.0"])
    (card,) = _cards(project)
    assert (code, card["verdict"], card["solver"]["label"]) == (0, "SOLVED", "claude-sonnet")
    # EUR per million tokens, as that harness prices: 12000 × 2.5 + 3000 × 12.0 = 66000 → €0.066
    assert (card["usage"]["currency"], card["usage"]["cost"]) == ("EUR", pytest.approx(0.066))


@pytest.mark.slow
def test_matrix_over_the_run_folders(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    eur = ("printf '%s' " + shlex.quote(FIXED_CLAMP) + " > clamp.py && "
           "printf '{\"tokens_in\": 10, \"tokens_out\": 5, \"cost_eur\": 0.25}' > \"$AEH_USAGE_FILE\"")
    assert main(["run", CLAMP, "--noop"]) == 2
    assert main(["run", CLAMP, "--ref"]) == 0
    assert main(["run", CLAMP, "--solver", eur, "--label", "fixer"]) == 0
    capsys.readouterr()
    folders = sorted(str(p) for p in (project / "runs").iterdir())
    assert main(["matrix", *folders, "--out", "runs/matrix"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line.split()[:1] in (["noop"], ["reference"],
                                                                                         ["fixer"])}
    assert " floor " in rows["noop"] and " ceiling " in rows["reference"]
    assert rows["fixer"].rstrip().endswith("€0.2500")  # EUR per solved task, cost_eur taken as reported
    assert "different currencies" not in out  # the built-in solvers' zero is in no currency
    matrix = json.loads((project / "runs" / "matrix" / "matrix.json").read_text())
    assert {r["label"] for r in matrix["rows"]} == {"noop", "reference", "fixer"}
    # `runs/*` again, now holding the matrix folder too: it is recognised and left out
    assert main(["matrix", *sorted(str(p) for p in (project / "runs").iterdir())]) == 0
    assert "left out" in capsys.readouterr().out


def test_a_folder_that_is_no_run_folder_exits_1(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "runs" / "notes").mkdir(parents=True)
    assert main(["matrix", "runs/notes"]) == 1
    assert "runs/notes: not a run folder (no results.json)" in capsys.readouterr().err


@pytest.mark.slow
def test_cost_eur_is_accepted_as_reported(project: Path) -> None:
    solver = ("printf '%s' " + shlex.quote(FIXED_CLAMP) + " > clamp.py && "
              "printf '{\"tokens_in\": 10, \"tokens_out\": 5, \"cost_eur\": 0.031}' > \"$AEH_USAGE_FILE\"")
    assert main(["run", CLAMP, "--solver", solver]) == 0
    (card,) = _cards(project)
    assert (card["usage"]["currency"], card["usage"]["cost"]) == ("EUR", pytest.approx(0.031))


@pytest.mark.slow
def test_a_solver_that_cannot_run_is_a_harness_error_exit_1(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", CLAMP, "--solver", "no-such-agent-cli --go"]) == 1
    assert "fx-001-clamp: HARNESS_ERROR" in capsys.readouterr().out


@pytest.mark.slow
def test_a_noop_run_that_solves_shows_a_broken_contract_exit_1(project: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "broken/fx-900-broken", "--noop"]) == 1
    assert "CONTRACT: the seed already passes every hidden test" in capsys.readouterr().out


def test_a_fixture_that_does_not_load_exits_1(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "fixtures/fx-404", "--noop"]) == 1
    assert "fixtures/fx-404" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    ([CLAMP], "give one of --noop (the floor), --ref (the ceiling) or --solver CMD"),
    ([CLAMP, "--noop", "--ref"], "not --noop and --ref"),
    (["--noop"], "give their folders"),
    ([CLAMP, "--noop", "--suite", "coding"], "--suite belong(s) to aeh's own form"),
    ([CLAMP, "--noop", "--attempts", "3"], "--attempts belong(s) to aeh's own form"),
])
def test_a_mixed_or_incomplete_command_line_exits_1_with_the_fix(project: Path, capsys: pytest.CaptureFixture[str],
                                                                 argv: list[str], message: str) -> None:
    assert main(["run", *argv]) == 1
    assert message in capsys.readouterr().err


def test_the_card_and_its_reproduce_command_agree_on_the_seed(project: Path) -> None:
    assert main(["run", CLAMP, "--noop", "--seed", "4242"]) == 2
    (card,) = _cards(project)
    assert card["seed"] == 4242
    assert card["reproduce"] == f"aeh run {project / CLAMP} --noop --seed 4242"
    assert main(shlex.split(card["reproduce"])[1:] + ["--runs-dir", "again"]) == 2
    (again,) = [json.loads(p.read_text()) for p in (project / "again").glob("*/results.json")]
    assert (again["seed"], again["attempt_seed"]) == (card["seed"], card["attempt_seed"])


def test_one_hidden_set_hash_per_card_named_as_such(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", CLAMP, "--noop"]) == 2
    out = capsys.readouterr().out
    (card,) = _cards(project)
    digest = hidden_sha256(project / CLAMP)
    assert card["hidden_sha256"] == digest
    assert f"hidden set sha256 (fx-001-clamp/tests_hidden): {digest}" in out
    assert out.count("sha256") == 1  # no second, different hash under the same name
    run_card = next((project / "runs").glob("*/run_card.md")).read_text()
    assert run_card.count(digest) == 1 and "Hidden set SHA-256 (`fx-001-clamp/tests_hidden`" in run_card


def test_aeh_run_help_lists_every_shipped_suite(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert all(name in help_text for name in BUILTIN_SUITES), BUILTIN_SUITES
    assert "aeh run FIXTURE… --noop | --ref | --solver CMD" in help_text
