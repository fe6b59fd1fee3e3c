"""The report page is redacted around the attempts section's packed traces, never inside them."""

from __future__ import annotations

import base64
import gzip
import json

from aeh.report._render import _redacted_page
from aeh.store import Redactor

KEY = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
BLOB = base64.b64encode(gzip.compress(json.dumps([{"head": {"answer": "42"}}] * 50).encode(), mtime=0)).decode()


class Spy(Redactor):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def redact_text(self, s: str, *, card_context: bool = False) -> str:
        self.seen.append(s)
        return super().redact_text(s, card_context=card_context)


def _page(rows: object) -> str:
    payload = json.dumps({"rows": rows, "traces_gz": BLOB}, separators=(",", ":"))
    return f"<p>mail ann@example.com</p><script type=\"application/json\">{payload}</script><p>{KEY}</p>"


def test_the_packed_traces_are_copied_unscanned_and_the_rest_is_redacted() -> None:
    spy = Spy()
    out = _redacted_page(_page([{"answer": "fine"}]), spy)
    assert f'"traces_gz":"{BLOB}"' in out
    assert not any(BLOB in text for text in spy.seen)
    assert "ann@example.com" not in out and KEY not in out
    assert "[REDACTED:email]" in out and "[REDACTED:api_key]" in out


def test_run_text_that_imitates_the_packed_traces_is_still_redacted() -> None:
    # an answer holding the marker arrives JSON-escaped (\"traces_gz\":\"…), so it is redacted
    aws_key_id = "AKIA" + "ABCDEFGHIJKLMNOP"
    answer = f'"traces_gz":"H4sI+{aws_key_id}"'
    out = _redacted_page(_page([{"answer": answer}]), Redactor())
    assert aws_key_id not in out and "H4sI+[REDACTED:api_key]" in out
    assert f'"traces_gz":"{BLOB}"' in out


def test_a_page_without_traces_is_redacted_whole() -> None:
    page = f"<p>{KEY}</p>"
    assert _redacted_page(page, Redactor()) == Redactor().redact_text(page)


def test_a_rendered_report_is_redacted_around_its_packed_traces(mock_db, tmp_path, monkeypatch) -> None:
    import re

    from aeh.report import _render, render_run_report

    spy = Spy()
    monkeypatch.setattr(_render, "_runs_redactor", lambda store, run_ids: spy)
    db, _, run_id = mock_db
    page = render_run_report(run_id, tmp_path / "r.html", db=db).read_text(encoding="utf-8")
    blob = re.search(r'"traces_gz":"(H4sI[A-Za-z0-9+/=]+)"', page)
    assert blob is not None and spy.seen
    assert not any(blob[1] in text for text in spy.seen)
    assert json.loads(gzip.decompress(base64.b64decode(blob[1])))  # the traces decode as written
