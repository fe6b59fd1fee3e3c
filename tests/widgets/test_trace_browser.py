"""TraceBrowser driven by simulated clicks: task → attempt → span tree, details, failed filter."""

from __future__ import annotations

import aeh
from aeh.store import Store


def _labels(browser) -> list[str]:
    return [b.description for b in browser.tree.children]


def test_lazy_attribute_and_initial_view(degraded_run):
    db, run = degraded_run
    browser = aeh.TraceBrowser(run, db=db)
    assert type(browser).__module__ == "aeh.widgets._browser"
    assert [v for _, v in browser.task_select.options] == ["add_then_multiply", "average_to_two_decimals",
                                                           "split_the_bill"]
    assert browser.task_select.value == "add_then_multiply"
    assert browser.attempt_select.value == 0
    labels = _labels(browser)
    assert labels[0].startswith("▾ [scheduler] attempt")  # root open, its children shown collapsed
    assert any("] agent" in label and label.startswith("▸") for label in labels)
    assert "add_then_multiply #0" in browser.summary.value


def test_click_expands_collapses_and_shows_details(degraded_run):
    db, run = degraded_run
    browser = aeh.TraceBrowser(run, db=db)
    agent = next(sid for sid, n in browser.nodes.items() if n.span.name == "agent")
    before = len(browser.tree.children)
    browser.node_buttons[agent].click()
    assert browser.selected == agent and agent in browser.expanded
    assert len(browser.tree.children) == before + len(browser.nodes[agent].children)
    assert any("model:call" in label for label in _labels(browser))
    assert "agent" in browser.detail.value and "adapter" in browser.detail.value  # attributes shown
    tool = next(sid for sid, n in browser.nodes.items() if n.span.category == "tools")
    browser.node_buttons[tool].click()
    assert "args" in browser.detail.value
    browser.node_buttons[agent].click()  # collapse again
    assert len(browser.tree.children) == before
    browser.expand_all.click()
    assert len(browser.tree.children) == len(browser.nodes)
    browser.collapse_all.click()
    assert len(browser.tree.children) == 1


def test_failed_filter_and_attempt_choice(degraded_run):
    db, run = degraded_run
    with Store(db) as store:
        frame = store.attempts_frame(run)
    failed = {(t, a) for t, a, ok in zip(frame["task_id"], frame["attempt"], frame["success"], strict=True) if not ok}
    browser = aeh.TraceBrowser(run, db=db)
    browser.failed_only.value = True
    shown = set()
    for _, task in browser.task_select.options:
        browser.task_select.value = task
        for _, attempt in browser.attempt_select.options:
            browser.attempt_select.value = attempt
            shown.add((task, attempt))
            assert "FAILED" in browser.summary.value
    assert shown == failed
    browser.failed_only.value = False
    assert len(browser.attempt_select.options) == 3
    browser.attempt_select.value = 2
    assert f"{browser.task_select.value} #2" in browser.summary.value


def test_rows_are_left_aligned_at_their_depth(degraded_run):
    db, run = degraded_run
    browser = aeh.TraceBrowser(run, db=db)
    browser._set_all(True)
    depths = set()
    for sid, button in browser.node_buttons.items():
        # Sized to the text and starting at the indent: a stretched, centred button hides depth.
        assert button.layout.align_self == "flex-start" and button.layout.width == "auto"
        assert "aeh-tree-row" in button._dom_classes
        depth = browser.nodes[sid].depth
        assert button.layout.margin.endswith(f" {depth * 18}px")
        depths.add(depth)
    assert len(depths) >= 3
    assert any("text-align: left" in getattr(c, "value", "") for c in browser.children)


def test_failed_grader_label_gives_a_reason_once(degraded_run):
    db, run = degraded_run
    browser = aeh.TraceBrowser(run, db=db)
    browser.failed_only.value = True
    browser._set_all(True)
    graders = [label for label in _labels(browser) if "grader:" in label]
    failed = [label for label in graders if "not passed" in label]
    assert failed, graders
    for label in graders:
        assert "error: failed" not in label and "FAILED" not in label
    assert any("expected" in label and "got" in label for label in failed)


def test_step_count_is_pluralized():
    from aeh.widgets._browser import plural

    assert plural(1, "step") == "1 step" and plural(0, "step") == "0 steps" and plural(3, "step") == "3 steps"


def test_summary_says_one_step_not_one_steps(degraded_run):
    db, run = degraded_run
    browser = aeh.TraceBrowser(run, db=db)
    seen = set()
    for _, task in browser.task_select.options:
        browser.task_select.value = task
        for _, attempt in browser.attempt_select.options:
            browser.attempt_select.value = attempt
            seen.add(browser.summary.value)
    assert not any(" 1 steps" in s for s in seen)
    assert any(" 1 step " in s for s in seen)


def test_a_model_span_shows_the_messages_it_sent_and_its_reply(degraded_run):
    db, run = degraded_run
    browser = aeh.TraceBrowser(run, db=db)
    browser.expand_all.click()
    models = [sid for sid, n in browser.nodes.items() if n.span.category == "model"]
    assert len(models) >= 2
    browser.node_buttons[models[0]].click()
    first = browser.detail.value
    assert "in · user: " in first and "aeh-call-messages" in first
    prompt = next(t.prompt for t in aeh.load_suite("toy_math").tasks() if t.id == "add_then_multiply")
    assert prompt in first
    called = browser.nodes[models[1]].span.attributes["gen_ai.input.messages"][1]["tool_calls"][0]["function"]
    assert "out · assistant" in first and f"→ {called['name']}(" in first  # the reply: the tool call it made
    browser.node_buttons[models[1]].click()
    second = browser.detail.value
    assert "earlier message" in second and "in · tool (reply to" in second  # the tool's result, fed back
