"""Export an executed notebook to one self-contained HTML file: no script, style or font fetched."""

from __future__ import annotations

from pathlib import Path

__all__ = ["export_html"]

# The lab template loads require.js, MathJax and mermaid from CDNs and, when widget state is
# present, the widget renderer: empty those blocks. Images are embedded as base64 already.
_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{% block extra_css %}<style>
.jp-Notebook { max-width: 1180px; margin: 0 auto; }
.aeh-banner { padding: 12px 16px; border-radius: 6px; font-weight: 600; margin: 6px 0 12px; }
.aeh-banner.warn { background: #fdecea; border: 1px solid #e0a5a0; color: #8a1f17; }
.aeh-banner.info { background: #eef4fb; border: 1px solid #a9c4e4; color: #173b63; }
</style>{% endblock extra_css %}
"""


def export_html(ipynb: str | Path) -> str:
    """The notebook as HTML with code cells hidden and charts embedded as base64 PNG."""
    # heavy: loaded on first use
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(ipynb), as_version=4)  # type: ignore[no-untyped-call]  # nbformat is unannotated
    nb.metadata.pop("widgets", None)  # static page: no widget renderer is loaded
    exporter = HTMLExporter(  # type: ignore[no-untyped-call]  # nbconvert is unannotated
        extra_loaders=[jinja2.DictLoader({"aeh_report.html.j2": _TEMPLATE})],
        template_file="aeh_report.html.j2", embed_images=True, exclude_input=True,
        exclude_input_prompt=True, exclude_output_prompt=True,
    )
    # Charts are described by the text around them; nbconvert's alt-text nag is noise here.
    exporter.log.setLevel("ERROR")
    body, _ = exporter.from_notebook_node(nb)
    return body
