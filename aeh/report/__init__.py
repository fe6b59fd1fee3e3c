"""Reports: the shipped notebooks executed with papermill, exported to self-contained HTML,
and per-attempt trace viewers. papermill/nbconvert are imported only when something renders.

    from aeh.report import render_run_report, render_compare_report, render_trace_html
"""

import typing as _typing

from aeh._util.lazy import lazy_getattr as _lazy_getattr
from aeh.report._copy import NotebookCopy, copy_notebooks
from aeh.report._execute import NotebookExecutionError, execute_notebook
from aeh.report._export import export_html
from aeh.report._paths import NOTEBOOKS, default_out, notebook_path, notebooks_dir
from aeh.report._pick import RunPick, pick_newest_run, pick_run_pair
from aeh.report._render import render_compare_report, render_matrix_report, render_run_report
from aeh.report._stored_form import set_save_hook, stored_text, strip_notebooks
from aeh.report._trace_view import money, render_trace_html, trace_document, trace_frame, trace_html, trace_page

if _typing.TYPE_CHECKING:
    from aeh.report._lean_imports import import_lean
    from aeh.report._trace_view import attempt_scores, input_and_target, model_call_lines
    from aeh.report._tree import SpanNode, build_tree, cited_span_ids, localized_span_ids, span_label, walk

# loaded on first use: what other packages take from here, kept off this package's import
_LAZY = {
    "import_lean": "aeh.report._lean_imports",
    "attempt_scores": "aeh.report._trace_view",
    "model_call_lines": "aeh.report._trace_view",
    "input_and_target": "aeh.report._trace_view",
    "SpanNode": "aeh.report._tree",
    "build_tree": "aeh.report._tree",
    "cited_span_ids": "aeh.report._tree",
    "localized_span_ids": "aeh.report._tree",
    "span_label": "aeh.report._tree",
    "walk": "aeh.report._tree",
    # Jupyter Server loads aeh.report as an extension: shipped notebooks are saved without outputs
    "_jupyter_server_extension_points": "aeh.report._stored_form",
    "_load_jupyter_server_extension": "aeh.report._stored_form",
}


__getattr__ = _lazy_getattr(__name__, _LAZY)


__all__ = [
    "NOTEBOOKS",
    "NotebookCopy",
    "NotebookExecutionError",
    "RunPick",
    "SpanNode",
    "attempt_scores",
    "build_tree",
    "cited_span_ids",
    "copy_notebooks",
    "default_out",
    "execute_notebook",
    "export_html",
    "import_lean",
    "input_and_target",
    "localized_span_ids",
    "model_call_lines",
    "money",
    "notebook_path",
    "notebooks_dir",
    "pick_newest_run",
    "pick_run_pair",
    "render_compare_report",
    "render_matrix_report",
    "render_run_report",
    "render_trace_html",
    "set_save_hook",
    "span_label",
    "stored_text",
    "strip_notebooks",
    "trace_document",
    "trace_frame",
    "trace_html",
    "trace_page",
    "walk",
]
