"""Reports: the shipped notebooks executed with papermill, exported to self-contained HTML,
and per-attempt trace viewers. papermill/nbconvert are imported only when something renders.

    from aeh.report import render_run_report, render_compare_report, render_trace_html
"""

from aeh.report._execute import NotebookExecutionError, execute_notebook
from aeh.report._export import export_html
from aeh.report._paths import NOTEBOOKS, default_out, notebook_path, notebooks_dir
from aeh.report._render import render_compare_report, render_matrix_report, render_run_report
from aeh.report._trace import render_trace_html, trace_html

__all__ = ["NOTEBOOKS", "NotebookExecutionError", "default_out", "execute_notebook", "export_html",
           "notebook_path", "notebooks_dir", "render_compare_report", "render_matrix_report", "render_run_report",
           "render_trace_html", "trace_html"]
