"""A third-party suite, pip-installed as a real package, loads through `aeh.suites` by name."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aeh.errors import SuiteLoadError
from aeh.suite import load_suite, validate_suite

PLUGIN = Path(__file__).resolve().parents[1] / "demo_plugin" / "aeh_demo_suite"


def _forget_plugin(dist: str) -> None:
    """Drop what the uninstalled package registered, so later tests see only the built-ins."""
    from aeh.adapters import adapters
    from aeh.grading import default_graders, default_invariants
    from aeh.importers import importers
    from aeh.suite import suites

    for registry in (suites, default_graders, default_invariants, adapters, importers):
        for name, source in registry.describe().items():
            if dist in source:
                registry.unregister(name)


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`pip install` the demo package into a temp dir (offline) and put it on sys.path.

    Installing into a --target dir, not the venv, leaves the shared environment untouched;
    importlib.metadata finds the .dist-info (and its entry points) on sys.path.
    """
    target = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--no-cache-dir", "--target", str(target), str(PLUGIN)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    if pip.returncode != 0:  # pip's own words say why (no pip in this venv, a build error, …)
        pytest.fail(f"pip install of {PLUGIN.name} exited {pip.returncode}:\n{pip.stdout}{pip.stderr}",
                    pytrace=False)
    assert (target / "aeh_demo_suite-0.1.0.dist-info" / "entry_points.txt").is_file()
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    try:
        yield target
    finally:
        _forget_plugin("aeh-demo-suite")
        sys.path.remove(str(target))
        for name in [m for m in sys.modules if m.split(".")[0] == "aeh_demo_suite"]:
            del sys.modules[name]
        importlib.invalidate_caches()


def test_plugin_suite_loads_by_name_from_a_factory(installed_plugin):
    suite = load_suite("demo_plugin")
    assert suite.name == "demo_plugin"
    assert [t.id for t in suite.tasks()] == ["reverse_word", "reverse_twice"]
    assert suite.tool_registry().names() == ["reverse"]
    assert validate_suite(suite) == []


def test_plugin_suite_loads_from_an_object_entry_point(installed_plugin):
    assert load_suite("demo_plugin_object").name == "demo_plugin_object"


def test_plugin_suites_are_validated_with_suite_and_task_in_the_file(installed_plugin):
    with pytest.raises(SuiteLoadError) as info:
        load_suite("demo_plugin_broken")
    (problem,) = info.value.problems
    assert str(problem) == ("demo_plugin_broken/reverse_word:tools[1]: unknown tool 'uppercase'"
                            " — registered tools: reverse")


def test_installed_plugins_are_listed_when_a_name_is_unknown(installed_plugin):
    with pytest.raises(SuiteLoadError) as info:
        load_suite("demo_plugn")
    fix = info.value.problems[0].fix or ""
    assert "demo_plugin" in fix and "smoke" in fix and "toy_math" in fix


def test_plugin_grader_kind_loads_through_aeh_graders(installed_plugin, tmp_path):
    import aeh
    from aeh.grading._registry import default_graders

    suite = load_suite("demo_plugin")  # validating it needs the plugin's `palindrome_verdict` kind
    assert "palindrome_verdict" in default_graders
    table = aeh.run(suite, attempts=3, seed=1, db=tmp_path / "runs.db", model="mock-strong",
                    adapter_options={"p_wrong": 0.0, "p_give_up": 0.0, "p_decline": 0.0,
                                     "p_hallucinate": 0.0, "p_bad_args": 0.0, "p_loop": 0.0})
    graded = aeh.attempts(table.run_id, tmp_path / "runs.db")
    assert graded["grader:palindrome_verdict"].dropna().astype(bool).all()


def test_plugin_adapter_loads_through_aeh_adapters(installed_plugin, tmp_path):
    import aeh
    from aeh.adapters import adapter_names

    assert "echo" in adapter_names()
    table = aeh.run("demo_plugin", adapter="echo", attempts=2, seed=1, db=tmp_path / "runs.db")
    assert table["successes"].sum() == 0
    assert set(aeh.attempts(table.run_id, tmp_path / "runs.db")["failure_bucket"]) == {"wrong_answer"}
    assert aeh.runs(tmp_path / "runs.db").iloc[0].model == "echo-1"


def test_plugin_invariant_loads_through_aeh_invariants_and_is_checked(installed_plugin, tmp_path):
    import aeh
    from aeh.grading import default_invariants
    from aeh.store import open_store

    suite = load_suite("demo_plugin")  # a task names the plugin's invariant: validation finds it
    assert "aeh-demo-suite" in default_invariants.describe()["answer_under_200_chars"]
    table = aeh.run(suite, attempts=1, seed=1, db=tmp_path / "runs.db")
    with open_store(tmp_path / "runs.db", must_exist=True) as store:
        record = store.attempt_record(table.run_id, "reverse_word", 0)
    assert "answer_under_200_chars" in {r.name for r in record.invariant_results}


def test_plugin_importer_loads_through_aeh_importers_and_the_cli(installed_plugin, tmp_path, capsys):
    import aeh
    from aeh.cli import main

    results = tmp_path / "results.jsonl"
    results.write_text('{"task_id": "a", "success": true, "output": "yes"}\n'
                       '{"task_id": "a", "success": false, "output": "no"}\n'
                       '{"task_id": "b", "success": true, "output": "yes"}\n')
    assert main(["import", "demo-jsonl", str(results), "--db", str(tmp_path / "runs.db")]) == 0
    run_id = capsys.readouterr().out.splitlines()[0]
    table = aeh.load_run(run_id, tmp_path / "runs.db").table.set_index("task_id")
    assert table.loc["a", "n"] == 2 and table.loc["a", "successes"] == 1 and table.loc["b", "successes"] == 1


def test_aeh_plugins_lists_every_plugin_with_its_package(installed_plugin, capsys):
    from aeh.cli import main

    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    for name in ("demo_plugin", "palindrome_verdict", "answer_under_200_chars", "echo", "demo-jsonl"):
        assert "aeh-demo-suite" in lines[name], name
    for name in ("smoke", "exact", "no_secret_leak", "mock", "tau-bench", "run"):
        assert lines[name].split()[-1] == "builtin", name
    assert "scorers (aeh.scorers)" in out
