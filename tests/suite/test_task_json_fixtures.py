"""task.json fixtures load as coding suites without suite.yaml: one fixture or a folder of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import aeh
from aeh.errors import SuiteLoadError
from aeh.suite._coding import validate_coding_suite
from aeh.suite._task_json import TaskJsonSuite, is_task_json_path

SEED001 = Path(__file__).resolve().parents[1] / "fixtures" / "seed001"
GOOD = SEED001 / "fixtures" / "fx-001-clamp"
BROKEN = SEED001 / "broken" / "fx-900-broken"


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "fixtures"
    shutil.copytree(GOOD, folder / GOOD.name)
    return folder


def test_one_fixture_loads_as_a_suite_of_one_task() -> None:
    suite = aeh.load_suite(str(GOOD))
    assert [t.id for t in suite.tasks()] == ["fx-001-clamp"]


def test_every_task_json_field_maps_onto_the_coding_task() -> None:
    spec = json.loads((GOOD / "task.json").read_text())
    task = aeh.load_suite(str(GOOD)).tasks()[0]
    meta = task.metadata["coding"]
    assert (task.id, task.description, task.prompt, task.tags, meta["entry_files"], meta["timeout_seconds"],
            [g.kind for g in task.outcome_graders]) == (
        spec["id"], spec["title"], spec["prompt"], spec["taxonomy"], spec["entry_files"],
        spec["timeout_seconds"], ["hidden_tests"])


def test_a_folder_of_fixtures_loads_without_suite_yaml() -> None:
    suite = aeh.load_suite(str(SEED001 / "fixtures"))
    assert isinstance(suite, TaskJsonSuite) and [t.id for t in suite.tasks()] == ["fx-001-clamp", "fx-002-slugify"]


def test_a_single_fixture_suite_sees_only_that_fixture(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    shutil.copytree(BROKEN, folder / BROKEN.name)
    assert [t.id for t in aeh.load_suite(str(folder / GOOD.name)).tasks()] == ["fx-001-clamp"]


def test_a_directory_suite_is_not_taken_for_task_json(tmp_path: Path) -> None:
    (tmp_path / "suite.py").write_text("")
    (tmp_path / "tasks").mkdir()
    assert not is_task_json_path(tmp_path)


def test_unknown_task_json_key_names_file_and_field(tmp_path: Path) -> None:
    fixture = _copy(tmp_path) / GOOD.name
    data = json.loads((fixture / "task.json").read_text())
    data["entry_file"] = data.pop("entry_files")
    (fixture / "task.json").write_text(json.dumps(data))
    with pytest.raises(SuiteLoadError, match=r"task\.json:entry_file: unknown key 'entry_file'"):
        aeh.load_suite(str(fixture))


def test_task_json_that_is_not_json_is_a_load_problem(tmp_path: Path) -> None:
    fixture = _copy(tmp_path) / GOOD.name
    (fixture / "task.json").write_text('{"id": "fx-001-clamp",')
    with pytest.raises(SuiteLoadError, match=r"task\.json:\d+:\(file\): is not valid JSON"):
        aeh.load_suite(str(fixture))


def test_a_fixture_folder_without_task_json_is_reported(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "fx-002-missing" / "seed").mkdir(parents=True)
    with pytest.raises(SuiteLoadError, match="fixture directory has no task.json"):
        aeh.load_suite(str(folder))


def test_the_id_must_equal_the_folder_name(tmp_path: Path) -> None:
    fixture = _copy(tmp_path) / GOOD.name
    fixture.rename(tmp_path / "fixtures" / "renamed")
    with pytest.raises(SuiteLoadError, match="differs from the directory name 'renamed'"):
        aeh.load_suite(str(tmp_path / "fixtures" / "renamed"))


@pytest.mark.slow
def test_the_good_fixture_keeps_the_contract() -> None:
    rows, problems = validate_coding_suite(TaskJsonSuite(GOOD))
    assert (problems, [r["ok"] for r in rows]) == ([], ["OK"])


@pytest.mark.slow
def test_a_seed_that_passes_the_hidden_tests_breaks_the_seed_half_with_the_fix() -> None:
    _, problems = validate_coding_suite(TaskJsonSuite(BROKEN))
    assert [(p.field, p.message.split(":")[0], bool(p.fix)) for p in problems] == [("contract", "seed half", True)]


@pytest.mark.slow
def test_a_task_json_fixture_runs_end_to_end_with_the_reference_solver(tmp_path: Path) -> None:
    table = aeh.run(str(GOOD), adapter="command", adapter_options={"solver": "reference"}, attempts=1,
                    db=tmp_path / "runs.db", seed=1)
    assert table.suite_rate == 1.0
