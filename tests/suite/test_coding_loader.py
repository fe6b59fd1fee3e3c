"""Coding suites load through the suite loader with loud validation; the contract runs for real."""

from __future__ import annotations

import shutil

import pytest

import aeh
from aeh.cli import main
from aeh.errors import SuiteLoadError
from aeh.suite._coding import CodingSuite, validate_coding_suite
from tests.coding_support import FIXTURES, SHIPPED, mini_suite


def test_shipped_coding_suite_loads_by_name_and_by_path():
    by_name = aeh.load_suite("coding")
    by_path = aeh.load_suite(str(SHIPPED))
    assert isinstance(by_name, CodingSuite) and isinstance(by_path, CodingSuite)
    assert [t.id for t in by_name.tasks()] == FIXTURES and len(FIXTURES) >= 8
    for task in by_name.tasks():
        assert [g.kind for g in task.outcome_graders] == ["hidden_tests"]
        meta = task.metadata["coding"]
        assert meta["entry_files"] and len(meta["hidden_sha256"]) == 64
        assert "test_hidden" not in task.prompt


def test_schema_problems_name_file_and_field(tmp_path):
    suite = mini_suite(tmp_path / "s", ("csv_dedup",))
    task = suite / "csv_dedup" / "task.yaml"
    task.write_text(task.read_text().replace("entry_files:", "entry_file:").replace("timeout_seconds: 60",
                                                                                      "timeout_seconds: -1"))
    with pytest.raises(SuiteLoadError) as err:
        aeh.load_suite(str(suite))
    text = str(err.value)
    assert "task.yaml:entry_file: unknown key 'entry_file'" in text and "did you mean 'entry_files'" in text
    assert "task.yaml:timeout_seconds:" in text


def test_suite_yaml_and_layout_problems_are_loud(tmp_path):
    suite = mini_suite(tmp_path / "s", ("csv_dedup",))
    (suite / "suite.yaml").write_text("name: s\ndescription: d\nkind: coding_fixtures\nextra: 1\n")
    shutil.rmtree(suite / "csv_dedup" / "reference")
    with pytest.raises(SuiteLoadError) as err:
        aeh.load_suite(str(suite))
    assert "suite.yaml:extra: unknown key" in str(err.value)
    assert "reference: missing reference/ directory" in str(err.value)


def test_a_seed_holding_a_hidden_test_never_loads(tmp_path):
    suite = mini_suite(tmp_path / "s", ("csv_dedup",))
    shutil.copy(suite / "csv_dedup" / "tests_hidden" / "test_hidden_dedup.py", suite / "csv_dedup" / "seed")
    with pytest.raises(SuiteLoadError, match="named like hidden tests"):
        aeh.load_suite(str(suite))


def test_workspace_preparation_refuses_hidden_material(tmp_path):
    suite = CodingSuite(mini_suite(tmp_path / "s", ("csv_dedup",)))
    task = suite.tasks()[0]
    # A fixture changed after loading: preparation checks the workspace itself.
    (suite.root / "csv_dedup" / "tests_public" / "test_hidden_sneaky.py").write_text("def test_x(): pass\n")
    with pytest.raises(RuntimeError, match="separation broken"):
        suite.prepare_workspace(task, tmp_path / "ws")


@pytest.mark.slow
def test_contract_failures_name_the_half_that_failed(tmp_path, capsys):
    suite = mini_suite(tmp_path / "s", ("csv_dedup", "lru_eviction"))
    # csv_dedup: the seed already holds the fix, so it fails no hidden test.
    shutil.copy(suite / "csv_dedup" / "reference" / "dedup.py", suite / "csv_dedup" / "seed" / "dedup.py")
    # lru_eviction: the "reference" is the buggy seed.
    shutil.copy(suite / "lru_eviction" / "seed" / "lru.py", suite / "lru_eviction" / "reference" / "lru.py")
    rows, problems = validate_coding_suite(suite)
    text = "\n".join(map(str, problems))
    assert "csv_dedup:contract: seed half: the seed must fail at least one hidden test" in text
    assert "lru_eviction:contract: reference half: the reference must pass everything" in text
    assert {r["fixture"]: r["ok"] for r in rows} == {"csv_dedup": "FAIL", "lru_eviction": "FAIL"}
    assert main(["tasks", "validate", "--suite", str(suite)]) == 2
    out = capsys.readouterr().out
    assert "public_seed" in out and "hidden_ref" in out and "seed half" in out and "✗" in out


@pytest.mark.slow
def test_every_shipped_fixture_satisfies_the_contract(capsys):
    rows, problems = validate_coding_suite(SHIPPED)
    assert problems == []
    assert [r["fixture"] for r in rows] == FIXTURES
    for r in rows:
        k, n = map(int, r["hidden_seed"].split("/"))
        assert r["public_seed"].split("/")[0] == r["public_seed"].split("/")[1]  # seed green on public
        assert k < n  # and red on at least one hidden test
        assert r["public_ref"].split("/")[0] == r["public_ref"].split("/")[1]
        assert r["hidden_ref"].split("/")[0] == r["hidden_ref"].split("/")[1]
    assert main(["tasks", "validate", "--suite", "coding"]) == 0
    assert "✓ coding: 8 tasks valid" in capsys.readouterr().out
