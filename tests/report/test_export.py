"""The report page: nbconvert's lab template with aeh's blocks, rendered without HTMLExporter's
BeautifulSoup pass, JupyterLab's stylesheet or the highlighting preprocessor."""

from __future__ import annotations

import base64

import nbformat
import pytest

from aeh.report._export import export_node

_PNG = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                                      "1f15c4890000000d49444154789c6300010000050001a5f645400000000049454e44ae426082")).decode()


def _notebook() -> nbformat.NotebookNode:
    code = nbformat.v4.new_code_cell("secret_code_line = 1")
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="printed line\n"),
        nbformat.v4.new_output("display_data", data={"text/html": "<table id='t1'><tr><td>cell</td></tr></table>",
                                                     "text/plain": "<table>"}),
        nbformat.v4.new_output("display_data", data={"image/png": _PNG, "text/plain": "<Figure>"}),
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("## A heading\n\nSome *text*."), code],
                                  metadata={"title": "aeh run report", "widgets": {"state": {}}})
    return nb


def test_the_page_is_the_lab_template_with_aehs_blocks_and_nothing_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    import bs4

    def no_soup(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the export parsed the page again with BeautifulSoup")

    monkeypatch.setattr(bs4.BeautifulSoup, "__init__", no_soup)
    page = export_node(_notebook())
    head, body = page[: page.index("<main>")], page[page.index("<main>"):]
    assert page.startswith("<!DOCTYPE html>") and '<html lang="en">' in page
    assert "<title>aeh run report</title>" in head
    # aeh's stylesheet instead of JupyterLab's ~250 KB, no highlighting CSS, nothing loaded from elsewhere
    assert len(head) < 8_000 and ".jp-RenderedHTMLCommon table" in head and "--jp-" not in head
    assert "<script" not in head and "<link" not in page and "http" not in head
    assert "highlight" not in head
    # outputs as the lab template writes them; code hidden
    assert "secret_code_line" not in body and "jp-CodeMirrorEditor" not in body
    assert '<h2 id="A-heading">A heading' in body and "<em>text</em>" in body
    assert "printed line" in body and "<table id='t1'>" in body
    assert 'class="jp-Cell jp-CodeCell jp-Notebook-cell' in body and "jp-OutputArea-output" in body
    assert f'<img alt="chart (described by the text around it)"\n src="data:image/png;base64,{_PNG}">' in body


def test_compiled_templates_are_kept_and_reused(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import copy

    import jinja2

    nb = _notebook()
    first = export_node(copy.deepcopy(nb), cache_dir=str(tmp_path))
    assert any(tmp_path.iterdir())  # Jinja's bytecode cache, filled by the first export
    compiled: list[str | None] = []
    compile_ = jinja2.Environment.compile
    monkeypatch.setattr(jinja2.Environment, "compile",
                        lambda env, source, name=None, *a, **k: (compiled.append(name), compile_(env, source, name,
                                                                                                 *a, **k))[1])
    assert export_node(copy.deepcopy(nb), cache_dir=str(tmp_path)) == first
    assert compiled == []  # every template of the chain came from the cache
