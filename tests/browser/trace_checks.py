"""What every drawing of one attempt's trace must show, in whichever page it is drawn."""

from __future__ import annotations


def assert_trace_reads_as_conversation(trace, prompt: str | None = None, answer: str | None = None) -> None:
    """One attempt drawn by the trace page (a Page or a FrameLocator): the task's prompt, the
    target and the answer on top, and a tool call with its result inside an assistant turn."""
    head = trace.locator("#aeh-head")
    head.wait_for(timeout=60_000)
    shown_prompt = head.locator("td[data-field='prompt']").inner_text()
    assert shown_prompt.strip() and "not recorded" not in shown_prompt
    if prompt is not None:
        assert prompt[:60] in shown_prompt
    target = head.locator("td[data-field='target']").inner_text()
    assert target.strip() and "no expected answer" not in target
    if answer is not None:
        assert answer[:60] in head.locator("td[data-field='answer']").inner_text()
    call = trace.locator("#aeh-conversation .turn.assistant .call").first
    assert call.is_visible() and call.locator(".sig b").inner_text().strip()
    assert call.locator(".result").count() == 1  # the result sits under its call
