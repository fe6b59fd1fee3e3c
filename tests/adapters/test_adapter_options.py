"""Adapters own their options: one model gives the `aeh run` flags and the `aeh.run` keywords,
and the API and the command line store the same spec for the same run."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pytest

import aeh
from aeh.adapters.command import CommandAdapter
from aeh.cli import build_parser, main
from aeh.commands.run import _spec_options
from aeh.engine.runspec import DEFAULT_RETENTION
from aeh.errors import ConfigError
from tests.coding_support import mini_suite


def _stored_spec(db: Path) -> dict:
    with sqlite3.connect(db) as conn:
        (config,) = conn.execute("SELECT config FROM runs").fetchone()
    return json.loads(config)["spec"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    return mini_suite(tmp_path_factory.mktemp("coding") / "suite", ("csv_dedup",))


@pytest.mark.slow
def test_the_api_and_the_command_line_store_the_same_spec(suite, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # kept workspaces: in the test's folder
    api_db, cli_db = tmp_path / "api.db", tmp_path / "cli.db"
    aeh.run(str(suite), adapter="command", solver="noop", label="floor", attempts=1, seed=3, db=api_db,
            progress=False)
    assert main(["run", "--suite", str(suite), "--adapter", "command", "--solver", "noop", "--label", "floor",
                 "--attempts", "1", "--seed", "3", "--db", str(cli_db), "--log-level", "silent"]) == 0
    api, cli = _stored_spec(api_db), _stored_spec(cli_db)
    assert api == cli
    assert api["workspace_retention"] == DEFAULT_RETENTION  # the command adapter's default, either way
    assert api["adapter_options"] == {"solver": "noop", "label": "floor"}
    assert len(list((tmp_path / "aeh-workspaces").glob("aeh-*"))) == 2  # both kept theirs, as retention says


def test_adapter_options_come_from_the_model_as_flags_and_keywords():
    args = build_parser().parse_args(["run", "--suite", "s", "--adapter", "command", "--solver", "true",
                                      "--sandbox-solver", "--price-in", "1", "--price-out", "2",
                                      "--currency", "eur", "--solver-timeout", "3"])
    options = _spec_options(args)
    assert options["adapter_options"] == {"solver": "true", "sandbox_solver": True, "price_in": 1.0,
                                          "price_out": 2.0, "currency": "EUR", "timeout_s": 3.0}
    adapter = CommandAdapter(**options["adapter_options"])
    assert adapter.sandbox_solver is True and adapter.fixed_currency == "EUR" and adapter.timeout_s == 3.0
    # keywords of aeh.run: the same model
    assert CommandAdapter(solver="true", confine_solver=False).confine_solver is False


def test_an_adapters_flags_with_another_adapter_or_without_its_required_flag_are_refused():
    parser = build_parser()
    with pytest.raises(ConfigError, match="--no-solver-confinement belong.* to --adapter command"):
        _spec_options(parser.parse_args(["run", "--suite", "s", "--adapter", "mock", "--no-solver-confinement"]))
    with pytest.raises(ConfigError, match="--adapter command needs --solver"):
        _spec_options(parser.parse_args(["run", "--suite", "s", "--adapter", "command"]))


@pytest.mark.parametrize(("keywords", "flags", "named"), [
    ({"solver_confinement": False}, ["--no-solver-confinement"], "solver_confinement"),
    ({"solver": "noop"}, ["--solver", "noop"], "solver"),
])
def test_an_adapters_option_with_another_adapter_is_refused_by_the_api_as_by_the_cli(tmp_path, keywords, flags,
                                                                                      named):
    db = tmp_path / "r.db"
    with pytest.raises(ConfigError, match=f"{named} belong.* to adapter 'command': pass adapter='command'"):
        aeh.run("smoke", adapter="mock", attempts=1, db=db, progress=False, **keywords)
    assert not db.exists()  # refused before a store was made
    with pytest.raises(ConfigError, match=f"{flags[0]} belong.* to --adapter command"):
        _spec_options(build_parser().parse_args(["run", "--suite", "s", "--adapter", "mock", *flags]))
    # the option's default, or the adapter it belongs to, is no conflict
    assert aeh.run("smoke", adapter="mock", attempts=1, db=db, progress=False, solver_confinement=True) is not None


def test_an_adapter_keyword_given_twice_or_unknown_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="solver given both by keyword and in adapter_options"):
        aeh.run("smoke", adapter="command", solver="noop", adapter_options={"solver": "x"}, db=tmp_path / "r.db")
    with pytest.raises(ConfigError, match="unknown command adapter option"):
        CommandAdapter(solvr="noop")
