"""The loader reports every problem of a broken suite as `file:field: message — fix`."""

from __future__ import annotations

from pathlib import Path

import pytest

from aeh.errors import Problem, SuiteLoadError
from aeh.models import GoldenTrace, Task
from aeh.suite import DirectorySuite, load_suite, suite_hash, validate_suite
from aeh.tools._tools import ToolRegistry

GOOD = """
id: {id}
prompt: say hi
tools: [echo]
graders:
  - kind: exact
    expected: hi
"""


def only(problems: list[Problem], **match: str) -> Problem:
    """The single problem whose fields contain the given pieces; fails loudly otherwise."""
    found = [p for p in problems if all(v in getattr(p, k) for k, v in match.items())]
    assert len(found) == 1, f"wanted one problem like {match}, got:\n" + "\n".join(map(str, problems))
    return found[0]


def problems_of(root: Path) -> list[Problem]:
    return validate_suite(DirectorySuite(root))


def test_a_good_suite_has_no_problems(make_suite):
    root = make_suite()
    assert problems_of(root) == []
    suite = load_suite(root)
    assert [t.id for t in suite.tasks()] == ["t1"]
    assert suite.name == "s"


def test_yaml_syntax_error_names_file_and_line(make_suite):
    root = make_suite({"t1": "id: t1\nprompt: [unclosed\ntools: [echo]\n"})
    p = only(problems_of(root), message="YAML syntax error")
    assert p.file.endswith("tasks/t1.yaml")
    assert p.field.startswith("line ")
    assert int(p.field.split()[1]) >= 2


def test_unknown_key_gets_a_field_path_and_a_suggestion(make_suite):
    root = make_suite({"t1": GOOD.format(id="t1") + "budget:\n  max_stepz: 3\n"})
    p = only(problems_of(root), field="budget.max_stepz")
    assert p.file.endswith("tasks/t1.yaml")
    assert p.message == "unknown key 'max_stepz'"
    assert "did you mean 'max_steps'" in (p.fix or "")
    assert "timeout_s" in (p.fix or "")


def test_missing_required_field(make_suite):
    root = make_suite({"t1": "id: t1\ntools: [echo]\ngraders: [{kind: exact, expected: hi}]\n"})
    p = only(problems_of(root), field="prompt")
    assert p.message == "missing required field"
    assert str(p).endswith("tasks/t1.yaml:prompt: missing required field — add `prompt:`")


def test_tool_not_in_registry(make_suite):
    root = make_suite({"t1": GOOD.format(id="t1").replace("[echo]", "[echo, fetch_url]")})
    p = only(problems_of(root), field="tools[1]")
    assert p.message == "unknown tool 'fetch_url'"
    assert p.fix == "registered tools: echo, other"


def test_plan_step_unknown_tool_and_outside_allowlist(make_suite):
    task = GOOD.format(id="t1") + "plan:\n  - tool: nope\n  - tool: other\n  - tool: echo\n"
    problems = problems_of(make_suite({"t1": task}))
    assert "unknown tool 'nope'" in only(problems, field="plan[0].tool").message
    assert "not in this task's tools: allowlist" in only(problems, field="plan[1].tool").message
    assert not [p for p in problems if p.field == "plan[2].tool"]


def test_golden_step_outside_allowlist(make_suite):
    task = GOOD.format(id="t1") + "golden: g\n"
    golden = "steps:\n  - tool: echo\n  - tool: other\nfinal_output: hi\n"
    p = only(problems_of(make_suite({"t1": task}, goldens={"g": golden})), field="golden.steps[1].tool")
    assert "golden 'g' step calls 'other'" in p.message


def test_golden_named_but_missing(make_suite):
    root = make_suite({"t1": GOOD.format(id="t1") + "golden: nowhere\n"}, goldens={"other": "steps: []\n"})
    p = only(problems_of(root), field="golden")
    assert p.message == "golden trace 'nowhere' not found"
    assert "goldens/nowhere.yaml" in (p.fix or "") and "other" in (p.fix or "")


def test_golden_file_schema_error(make_suite):
    root = make_suite(goldens={"g": "steps:\n  - tool: echo\n    argz: {}\n"})
    p = only(problems_of(root), field="steps[0].argz")
    assert p.file.endswith("goldens/g.yaml")
    assert p.message == "unknown key 'argz'"


def test_a_schema_error_does_not_hide_other_problems_in_the_same_file(make_suite):
    task = GOOD.format(id="t1").replace("[echo]", "[echo, ghost]") + "budget: {max_stepz: 3}\n"
    problems = problems_of(make_suite({"t1": task}))
    only(problems, field="budget.max_stepz")
    only(problems, field="tools[1]", message="unknown tool 'ghost'")
    assert DirectorySuite(make_suite({"t1": task}, name="again")).tasks() == []  # never runs


def test_unknown_invariant(make_suite):
    root = make_suite({"t1": GOOD.format(id="t1") + "invariants: [no_secret_leak, no_sekret_leak]\n"})
    p = only(problems_of(root), field="invariants[1]")
    assert p.message == "unknown invariant 'no_sekret_leak'"
    assert "always_ok" in (p.fix or "") and "no_secret_leak" in (p.fix or "")


def test_unknown_grader_kind_lists_known_kinds(make_suite):
    root = make_suite({"t1": GOOD.format(id="t1").replace("kind: exact", "kind: exakt")})
    p = only(problems_of(root), field="graders[0].kind")
    assert p.message == "unknown grader kind 'exakt'"
    assert p.fix is not None and p.fix.startswith("known kinds: ")
    for kind in ("contains", "declined", "exact", "numeric", "regex", "tool_sequence"):
        assert kind in p.fix


def test_grader_options_are_validated_against_the_kind(make_suite):
    task = GOOD.format(id="t1") + (
        "  - kind: numeric\n    expected: 3\n    tolerance: 0.1\n"
        "  - kind: numeric\n    expected: three\n"
        "  - kind: regex\n    pattern: '(unclosed'\n"
    )
    problems = problems_of(make_suite({"t1": task}))
    p = only(problems, field="graders[1].tolerance")
    assert p.message == "unknown key 'tolerance'"
    assert "abs_tol" in (p.fix or "") and "rel_tol" in (p.fix or "")
    assert "valid number" in only(problems, field="graders[2].expected").message
    assert "pattern does not compile" in only(problems, field="graders[3].pattern").message


def test_duplicate_task_id_names_both_files(make_suite):
    root = make_suite({"a": GOOD.format(id="same"), "b": GOOD.format(id="same")})
    p = only(problems_of(root), field="id")
    assert p.file.endswith("tasks/b.yaml")
    assert "duplicate task id 'same'" in p.message and "tasks/a.yaml" in p.message


def test_missing_fixture_and_fixture_outside_the_suite(make_suite):
    task = GOOD.format(id="t1") + "fixtures: [data/here.txt, data/gone.txt, ../escape.txt]\n"
    problems = problems_of(make_suite({"t1": task}, files={"data/here.txt": "x"}))
    assert "'data/gone.txt' does not exist" in only(problems, field="fixtures[1]").message
    assert "outside the suite directory" in only(problems, field="fixtures[2]").message
    assert not [p for p in problems if p.field == "fixtures[0]"]


def test_empty_suite(make_suite):
    p = only(problems_of(make_suite({})), field="(dir)")
    assert p.file.endswith("tasks")
    assert "the suite has no tasks" in p.message


def test_suite_py_problems(make_suite):
    no_tools = make_suite(suite_py="x = 1\n", name="no_tools")
    p = only(problems_of(no_tools), file="suite.py", field="tools")
    assert p.message == "suite.py defines no `tools`"
    broken = make_suite(suite_py="from aeh.tools._tools import ToolRegistry\n\n1 / 0\n", name="broken")
    p = only(problems_of(broken), message="importing suite.py failed")
    assert p.field == "line 3" and "ZeroDivisionError" in p.message
    missing = make_suite(suite_py=None, name="missing")
    assert only(problems_of(missing), message="suite.py is missing").file.endswith("suite.py")


def test_suite_invariant_may_not_shadow_a_shipped_one(make_suite):
    suite_py = "from aeh.tools._tools import ToolRegistry\ntools = ToolRegistry()\n" \
               "invariants = {'no_secret_leak': lambda t: True}\n"
    root = make_suite({"t1": "id: t1\nprompt: p\ngraders: [{kind: exact, expected: x}]\n"}, suite_py=suite_py)
    assert "shadows a shipped invariant" in only(problems_of(root), field="invariants['no_secret_leak']").message


def test_graders_alias_and_both_keys(make_suite):
    suite = load_suite(make_suite())
    assert suite.tasks()[0].outcome_graders[0].kind == "exact"
    both = GOOD.format(id="t1") + "outcome_graders:\n  - kind: exact\n    expected: hi\n"
    p = only(problems_of(make_suite({"t1": both}, name="both")), message="either `graders` or `outcome_graders`")
    assert p.file.endswith("tasks/t1.yaml")


def test_every_problem_is_reported_at_once(make_suite):
    root = make_suite({
        "a_syntax": "id: a\nprompt: [oops\n",
        "b_key": GOOD.format(id="b") + "colour: red\n",
        "c_refs": GOOD.format(id="c").replace("[echo]", "[echo, ghost]") + "invariants: [imaginary]\n",
        "d_dup": GOOD.format(id="c"),
    })
    with pytest.raises(SuiteLoadError) as info:
        load_suite(root)
    problems = info.value.problems
    text = str(info.value)
    expected = [
        ("a_syntax.yaml", "line", "YAML syntax error"),
        ("b_key.yaml", "colour", "unknown key 'colour'"),
        ("c_refs.yaml", "tools[1]", "unknown tool 'ghost'"),
        ("c_refs.yaml", "invariants[0]", "unknown invariant 'imaginary'"),
        ("d_dup.yaml", "id", "duplicate task id 'c'"),
    ]
    for file, field, message in expected:
        only(problems, file=file, field=field, message=message)
        assert message in text
    assert len(problems) == len(expected)
    assert "5 problem(s)" in text and "suite 's'" in text


def test_unknown_suite_name_lists_installed_and_mentions_paths():
    with pytest.raises(SuiteLoadError) as info:
        load_suite("no_such_suite_xyz")
    p = info.value.problems[0]
    assert p.message == "no suite named 'no_such_suite_xyz' is installed"
    assert "installed suites:" in (p.fix or "") and "path of a suite directory" in (p.fix or "")


def test_missing_directory_path(tmp_path):
    with pytest.raises(SuiteLoadError, match="no such suite directory"):
        load_suite(tmp_path / "nope")
    with pytest.raises(SuiteLoadError, match="no such suite directory"):
        load_suite("./nope/suite")


class ObjectSuite:
    """A suite made in code, as an entry-point plugin would make one."""

    name = "objsuite"

    def __init__(self, tasks: list[Task]) -> None:
        self._tasks = tasks
        self._tools = ToolRegistry()
        self._tools.register("echo", lambda args, env: args)

    def tasks(self) -> list[Task]:
        return self._tasks

    def tool_registry(self) -> ToolRegistry:
        return self._tools

    def invariants(self) -> dict:
        return {}

    def golden_traces(self) -> dict[str, GoldenTrace]:
        return {}


def _task(**over) -> Task:
    data = {"id": "t1", "prompt": "p", "tools": ["echo"], "graders": [{"kind": "exact", "expected": "x"}]}
    return Task.model_validate({**data, **over})


def test_object_suites_pass_through_and_name_problems_by_suite_and_task():
    good = ObjectSuite([_task()])
    assert load_suite(good) is good
    bad = ObjectSuite([_task(tools=["echo", "ghost"], fixtures=["f.txt"])])
    with pytest.raises(SuiteLoadError) as info:
        load_suite(bad)
    p = only(info.value.problems, field="tools[1]")
    assert p.file == "objsuite/t1"
    assert "no root directory" in only(info.value.problems, field="fixtures[0]").message
    empty = ObjectSuite([])
    assert only(validate_suite(empty), field="tasks").message == "the suite has no tasks"


def test_suite_hash_is_stable_and_tracks_tasks_and_fixtures(make_suite):
    task = GOOD.format(id="t1") + "fixtures: [data.txt]\n"
    root = make_suite({"t1": task}, files={"data.txt": "v1"})
    first = suite_hash(DirectorySuite(root))
    assert len(first) == 16 and int(first, 16) >= 0
    assert suite_hash(DirectorySuite(root)) == first
    (root / "data.txt").write_text("v2")
    second = suite_hash(DirectorySuite(root))
    assert second != first
    (root / "tasks" / "t1.yaml").write_text(task.replace("say hi", "say hello"))
    assert suite_hash(DirectorySuite(root)) not in (first, second)
