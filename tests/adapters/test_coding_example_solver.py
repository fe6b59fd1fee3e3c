"""examples/llm_solver.py against the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import aeh
from aeh.testing import FakeOpenAIServer, Reply
from tests.coding_support import REPO, mini_suite, run_coding
from tests.examples_support import load_example

pytestmark = pytest.mark.slow

SOLVER = f"{sys.executable} {REPO / 'examples' / 'llm_solver.py'} --model fake-coder"


def _responder(suite: Path):
    def reply(request: dict) -> Reply:
        user = request["messages"][-1]["content"]
        for fx in sorted(p for p in suite.iterdir() if p.is_dir()):
            entry = next((fx / "reference").iterdir())
            if f"FILE: {entry.name}\n" in user:
                body = entry.read_text()
                text = f"Here is the fix.\n\nFILE: {entry.name}\n```python\n{body}```\n\nFILE: tests_public/x.py\n```python\nboom\n```"
                return Reply.text(text, prompt_tokens=1200, completion_tokens=300)
        return Reply.text("no idea")
    return reply


def test_example_solver_fixes_through_an_openai_compatible_server(tmp_path, db, monkeypatch):
    suite = mini_suite(tmp_path / "suite")
    with FakeOpenAIServer(_responder(suite)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        # Confined, as a user runs it: interpreter, workspace, $AEH_PROMPT, $AEH_USAGE_FILE and the
        # loopback network must all still be there.
        table = run_coding(suite, db, SOLVER, adapter_options={"label": "fake-coder", "price_in": 1.0,
                                                               "price_out": 4.0, "confine_solver": True})
        assert len(server.requests) == 2
        request = server.requests[0]
        assert request["model"] == "fake-coder"
        user = request["messages"][-1]["content"]
        assert "# Public tests" in user and "test_hidden" not in user
    assert table["successes"].tolist() == [1, 1]
    assert table.run.config.facts["solver_confinement"] in ("bwrap", "unavailable") or \
        table.run.config.facts["solver_confinement"].startswith("fallback-off:")
    attempts = aeh.attempts(table.run_id, db=db)
    assert attempts["tokens_in"].tolist() == [1200, 1200] and attempts["tokens_out"].tolist() == [300, 300]
    assert attempts["cost_usd"].tolist() == pytest.approx([(1200 + 300 * 4) / 1e6] * 2)
    noop = run_coding(suite, db, "noop", seed=2)
    ref = run_coding(suite, db, "reference", seed=3)
    m = aeh.matrix([noop.run_id, ref.run_id, table.run_id], db=db).table.set_index("label")
    assert m.loc["fake-coder", "solve_rate"] == 1.0 and m.loc["fake-coder", "above_floor"] == 1.0
    assert m.loc["fake-coder", "cost_per_solved_usd"] == pytest.approx((1200 + 1200) / 1e6)


def test_example_solver_parses_only_entry_files():
    llm_solver = load_example("llm_solver")
    reply = "FILE: a.py\n```python\nx = 1\n```\nFILE: `../evil.py`\n```python\nboom\n```\nFILE: ./b.py\n```\ny\n```"
    assert llm_solver.parse_files(reply, ["a.py", "b.py"]) == {"a.py": "x = 1\n", "b.py": "y\n"}
    messages = llm_solver.build_messages("fix it", {"a.py": "x"}, {"tests_public/test_public_a.py": "t"})
    assert messages[-1]["content"].count("FILE:") == 2
