"""`RunSpec` declares every run option once: the CLI flags, `aeh.run`'s signature and the stored spec follow it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import aeh
from aeh.cli import build_parser
from aeh.engine.runspec import RunSpec, option_meta
from aeh.errors import ConfigError


def test_the_signature_of_run_lists_every_option() -> None:
    assert list(inspect.signature(aeh.run).parameters) == list(RunSpec.model_fields)


def test_the_signature_of_run_async_shows_each_default() -> None:
    params = inspect.signature(aeh.run_async).parameters
    assert {n: p.default for n, p in params.items()} == {n: f.default for n, f in RunSpec.model_fields.items()}


def test_help_of_run_names_every_option() -> None:
    assert all(f"    {name}=" in (aeh.run.__doc__ or "") for name in RunSpec.model_fields)


def test_aeh_run_help_lists_every_declared_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    text = capsys.readouterr().out
    flags = [option_meta(n)["flag"] for n in RunSpec.model_fields if option_meta(n)["flag"]]
    assert [f for f in flags if f not in text] == []


def test_a_flag_parses_into_its_option() -> None:
    from aeh.commands._spec_flags import flag_names, spec_values

    args = build_parser().parse_args(["run", "--suite", "smoke", "--task", "a", "--task", "b", "--no-redact"])
    assert spec_values(args, flag_names()) == {"suite": "smoke", "tasks": ["a", "b"], "redact": False,
                                               "log_level": "progress"}


def test_an_option_out_of_bounds_names_its_bounds() -> None:
    with pytest.raises(ConfigError, match="ray_workers must be an integer >= 1, got 0"):
        RunSpec.build(ray_workers=0)


def test_none_for_an_option_that_cannot_be_none_is_its_default() -> None:
    assert RunSpec.build(attempts=None).attempts == 5


def test_a_run_stores_its_spec(db: Path) -> None:
    table = aeh.run("smoke", attempts=1, seed=3, db=db, judge_max_connections=1)
    assert table.run.config.spec["judge_max_connections"] == 1


def test_a_resumed_run_takes_a_default_option_from_the_stored_spec() -> None:
    spec, problems = RunSpec.build(attempts=2).resumed("r1", {"attempts": 2, "grading_sandbox": False})
    assert (spec.grading_sandbox, problems) == (False, [])


def test_a_resumed_run_refuses_a_given_option_that_differs() -> None:
    _, problems = RunSpec.build(seed=4).resumed("r1", {"seed": 5})
    assert problems == ["seed 4 (stored: 5)"]
