"""The GitHub Actions recipe in examples/ stays runnable: every aeh command in it parses, and it
installs what its steps need."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from aeh.cli import build_parser

RECIPE = Path(__file__).resolve().parents[2] / "examples" / "trajectory-gate.yml"


def _aeh_lines() -> list[list[str]]:
    steps = [s for job in yaml.safe_load(RECIPE.read_text())["jobs"].values() for s in job["steps"]]
    lines = [line.strip() for s in steps for line in str(s.get("run", "")).splitlines()]
    env = {"$SUITE": "smoke", "$ADAPTER": "mock", "$MODEL": "mock-loopy"}
    out = []
    for line in lines:
        if line.startswith("aeh "):
            for key, value in env.items():
                line = line.replace(f'"{key}"', value)
            out.append(shlex.split(line)[1:])
    return out


def test_every_aeh_command_of_the_recipe_parses() -> None:
    commands = _aeh_lines()
    assert [c[0] for c in commands] == ["run", "gate", "report"]
    parser = build_parser()
    for argv in commands:
        parser.parse_args(argv)  # SystemExit (exit 2) on a flag the CLI does not have


def test_the_recipe_installs_the_extra_its_report_needs() -> None:
    text = RECIPE.read_text()
    assert "'.[jupyter]'" in text and "|| true" not in text
