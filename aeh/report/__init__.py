"""Reports: the shipped notebooks executed with papermill, exported to self-contained HTML,
and per-attempt trace viewers. papermill/nbconvert are imported only when something renders.

    from aeh.report import render_run_report, render_compare_report, render_trace_html
"""

import typing as _typing

from aeh._util.lazy import lazy_exports as _lazy_exports
from aeh.report._copy import NotebookCopy, copy_notebooks
from aeh.report._execute import NotebookExecutionError, execute_notebook
from aeh.report._export import export_html
from aeh.report._paths import NOTEBOOKS, default_out, notebook_path, notebooks_dir
from aeh.report._pick import RunPick, pick_newest_run, pick_run_pair
from aeh.report._render import render_compare_report, render_matrix_report, render_run_report
from aeh.report._stored_form import set_save_hook, stored_text, strip_notebooks
from aeh.report._trace_view import money, render_trace_html, trace_document, trace_frame, trace_html, trace_page

if _typing.TYPE_CHECKING:
    # one unwrapped line a module, so these imports read as the `_NAMES` table below does
    # isort: off
    from aeh.report._lean_imports import import_lean, lean_render
    from aeh.report._stored_form import _jupyter_server_extension_points, _load_jupyter_server_extension
    from aeh.report._trace_view import attempt_scores, input_and_target, model_call_lines
    from aeh.report._tree import SpanNode, build_tree, cited_span_ids, localized_span_ids, span_label, walk
    # isort: on

# Names not imported above load on first use: what other packages take from here, kept off this package's
# import.
_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.report._copy": ("NotebookCopy", "copy_notebooks"),
    "aeh.report._execute": ("NotebookExecutionError", "execute_notebook"),
    "aeh.report._export": ("export_html",),
    "aeh.report._paths": ("NOTEBOOKS", "default_out", "notebook_path", "notebooks_dir"),
    "aeh.report._pick": ("RunPick", "pick_newest_run", "pick_run_pair"),
    "aeh.report._render": ("render_compare_report", "render_matrix_report", "render_run_report"),
    "aeh.report._stored_form": ("set_save_hook", "stored_text", "strip_notebooks", "_jupyter_server_extension_points",
                                "_load_jupyter_server_extension"),
    "aeh.report._trace_view": ("money", "render_trace_html", "trace_document", "trace_frame", "trace_html",
                               "trace_page", "attempt_scores", "input_and_target", "model_call_lines"),
    "aeh.report._lean_imports": ("import_lean", "lean_render"),
    "aeh.report._tree": ("SpanNode", "build_tree", "cited_span_ids", "localized_span_ids", "span_label", "walk"),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES)
