"""Export an executed notebook to one self-contained HTML file: no script, style or font fetched.

nbconvert's `TemplateExporter` renders JupyterLab's HTML template (`lab`, as `jupyter nbconvert
--to html` does) with aeh's blocks over it; everything here is nbconvert configuration:

- `HTMLExporter` would add, after rendering, a BeautifulSoup pass over the whole page (alt text on
  images, `tabindex` on outputs): about 0.1 s of a report's CPU, most of it compiling soupsieve's
  CSS-selector grammar. The exporter under it renders the same template without that pass; aeh's
  template gives its images their alt text itself.
- JupyterLab's stylesheet (some 250 KB, mostly for editors, menus and widgets) is replaced by
  `templates/report.css`, what the report's headings, tables and text outputs need.
- The code-highlighting stylesheet preprocessor (`CSSHTMLHeaderPreprocessor`) is off: code cells
  are hidden. The notebook is validated once, after the preprocessors (`optimistic_validation`),
  not after each one.
- The templates' compiled code is kept in Jinja's own bytecode cache (`FileSystemBytecodeCache`,
  by default a per-user directory under the system's temp dir, keyed by each template's source):
  compiling the lab template's chain was ~0.05 s of every report.
- The lab template loads require.js, MathJax and mermaid from CDNs and, when widget state is
  present, the widget renderer: those blocks are empty. Images are embedded as base64 already.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["export_html", "export_node"]

_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{% block notebook_css %}<style type="text/css">
@@CSS@@</style>{% endblock notebook_css %}
{% block extra_css %}<style>
.jp-Notebook { max-width: 1180px; margin: 0 auto; }
.aeh-banner { padding: 12px 16px; border-radius: 6px; font-weight: 600; margin: 6px 0 12px; }
.aeh-banner.warn { background: #fdecea; border: 1px solid #e0a5a0; color: #8a1f17; }
.aeh-banner.info { background: #eef4fb; border: 1px solid #a9c4e4; color: #173b63; }
</style>{% endblock extra_css %}
{% block data_png scoped %}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img alt="chart (described by the text around it)"
 src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}">
</div>
{%- endblock data_png %}
"""


@cache
def _template() -> str:
    css = resources.files("aeh.report").joinpath("templates/report.css").read_text(encoding="utf-8")
    return _TEMPLATE.replace("@@CSS@@", css)


def _exporter(cache_dir: str | None = None) -> Any:
    # heavy: loaded on first use
    import jinja2
    from nbconvert.exporters import TemplateExporter
    from traitlets.config import Config

    config = Config()
    config.CSSHTMLHeaderPreprocessor.enabled = False  # code cells are hidden: no highlighting CSS
    exporter = TemplateExporter(  # type: ignore[no-untyped-call]  # nbconvert is unannotated
        config=config, extra_loaders=[jinja2.DictLoader({"aeh_report.html.j2": _template()})],
        template_name="lab", template_file="aeh_report.html.j2", exclude_input=True,
        exclude_input_prompt=True, exclude_output_prompt=True, optimistic_validation=True,
        # referenced by the template's input block, which exclude_input never renders
        filters={"highlight_code": "nbconvert.filters.highlight.Highlight2HTML"},
    )
    exporter.log.setLevel("ERROR")
    exporter.environment.bytecode_cache = jinja2.FileSystemBytecodeCache(cache_dir)
    return exporter


def export_node(nb: Any, *, cache_dir: str | None = None) -> str:
    """An executed notebook node as the report page, code cells hidden, charts embedded as base64
    (`cache_dir`: where compiled templates are kept; None: Jinja's per-user default)."""
    nb.metadata.pop("widgets", None)  # static page: no widget renderer is loaded
    body, _ = _exporter(cache_dir).from_notebook_node(nb, resources={"language_code": "en"})
    return str(body)


def export_html(ipynb: str | Path) -> str:
    """The executed notebook file as the report page (see `export_node`)."""
    # heavy: loaded on first use
    import nbformat

    return export_node(nbformat.read(str(ipynb), as_version=4))  # type: ignore[no-untyped-call]  # nbformat is unannotated
