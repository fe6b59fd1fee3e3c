"""`render_run_report` and `render_compare_report`: papermill against stored runs, then nbconvert.

Every file written here (the HTML, a kept or failed notebook) goes through the runs' redactor
first: the store redacts on write, and this catches what an older store kept raw. The one part of
the page left as it is: the attempts section's packed traces (`_PACKED_TRACES`).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from aeh._util.optional import require_extra
from aeh.errors import ConfigError
from aeh.report._execute import NotebookExecutionError, run_notebook
from aeh.report._export import export_node
from aeh.report._paths import default_out
from aeh.report._schema_cache import cached_schema_validators
from aeh.store import Redactor, Store, StoreLike, default_db, open_store, redactor_for_run

__all__ = ["render_compare_report", "render_matrix_report", "render_run_report"]


#: The attempts section's traces in the HTML page: gzip-compressed JSON in base64 (`H4sI…` is gzip's
#: header), built from documents the run's redactor redacted (`trace_document`). Text patterns find
#: nothing in base64 (the redactor leaves the tail of a longer base64 run alone), and scanning it was
#: a third of the page's redaction. Exactly `"traces_gz":"` with no backslash: text from a run shows in
#: the page HTML-escaped or inside a JSON string (`\"`), so it cannot make its way in here.
_PACKED_TRACES = re.compile(r'"traces_gz":"(H4sI[A-Za-z0-9+/=]*)"')


def _redacted_page(html: str, redactor: Redactor) -> str:
    """`html` redacted, except the packed traces (`_PACKED_TRACES`), which are copied as they are."""
    parts: list[str] = []
    done = 0
    for found in _PACKED_TRACES.finditer(html):
        parts += [redactor.redact_text(html[done:found.start(1)]), found[1]]
        done = found.end(1)
    parts.append(redactor.redact_text(html[done:]))
    return "".join(parts)


def _db_path(db: StoreLike) -> str:
    """The store path the kernel opens (absolute: the kernel may run elsewhere)."""
    path = db.path if isinstance(db, Store) else str(db or default_db())
    return path if path == ":memory:" else str(Path(path).resolve())


def _runs_redactor(store: Store, run_ids: list[str]) -> Redactor:
    """On unless every run was stored with redaction off on purpose."""
    redactors = [redactor_for_run(store.run_info(r).config) for r in run_ids]
    return Redactor(enabled=any(r.enabled for r in redactors))


def _copy_redacted(source: Path, target: Path, redactor: Redactor) -> None:
    target.write_text(redactor.redact_text(source.read_text(encoding="utf-8")), encoding="utf-8")


def _render(notebook: str, parameters: dict[str, Any], out: Path, keep_ipynb: bool, redactor: Redactor,
            kernel: str | None = None) -> Path:
    require_extra("an HTML report")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="aeh-report-") as tmp, cached_schema_validators():
        executed = Path(tmp) / f"{notebook}.ipynb"
        try:
            nb = run_notebook(notebook, parameters, executed, kernel=kernel)
        except NotebookExecutionError as exc:  # keep the failing notebook next to the report
            kept = out.parent / f"{out.stem}.failed.ipynb"
            _copy_redacted(executed, kept, redactor)
            raise NotebookExecutionError(exc.notebook, exc.cell, exc.ename, exc.evalue, kept) from None
        out.write_text(_redacted_page(export_node(nb), redactor), encoding="utf-8")
        if keep_ipynb:
            _copy_redacted(executed, out.with_suffix(".ipynb"), redactor)
    return out


def render_run_report(run_id: str, out: str | Path | None = None, db: StoreLike = None, *,
                      keep_ipynb: bool = False, kernel: str | None = None) -> Path:
    """Render the stored run `run_id` (no agent re-execution) to one self-contained HTML file.

    `kernel`: where the notebook runs — `inprocess` (the default, or $AEH_REPORT_KERNEL) or a
    Jupyter kernel name such as `python3` for a separate kernel process.
    """
    path = _db_path(db)
    if path == ":memory:":
        raise ConfigError("reports read a store file; an in-memory store is not visible to the notebook kernel")
    with open_store(path, must_exist=True) as store:  # RunNotFoundError before a kernel starts
        full = store.resolve_run_id(run_id)
        redactor = _runs_redactor(store, [full])
    target = Path(out) if out else default_out(f"report-{full}.html")
    return _render("run_suite", {"run_id": full, "db": path}, target, keep_ipynb, redactor, kernel)


def render_compare_report(run_a: str, run_b: str, out: str | Path | None = None, db: StoreLike = None, *,
                          keep_ipynb: bool = False, fdr: float = 0.05, kernel: str | None = None,
                          allow_unfinished: bool = False, overlap: bool = False) -> Path:
    """Render the comparison of run_b (new) against run_a (baseline) to one self-contained HTML file
    (with `aeh.compare`'s options: a comparison it cannot judge shows the red refusal banner)."""
    path = _db_path(db)
    if path == ":memory:":
        raise ConfigError("reports read a store file; an in-memory store is not visible to the notebook kernel")
    with open_store(path, must_exist=True) as store:
        full_a, full_b = store.resolve_run_id(run_a), store.resolve_run_id(run_b)
        redactor = _runs_redactor(store, [full_a, full_b])
    target = Path(out) if out else default_out(f"compare-{full_a}-vs-{full_b}.html")
    return _render("compare_runs", {"run_a": full_a, "run_b": full_b, "db": path, "fdr": fdr,
                                    "allow_unfinished": allow_unfinished, "overlap": overlap}, target,
                   keep_ipynb, redactor, kernel)


def render_matrix_report(run_ids: list[str], out: str | Path | None = None, db: StoreLike = None, *,
                         keep_ipynb: bool = False, kernel: str | None = None) -> Path:
    """Render the coding matrix of `run_ids` (notebooks/coding_matrix.ipynb) to one HTML file."""
    path = _db_path(db)
    if path == ":memory:":
        raise ConfigError("reports read a store file; an in-memory store is not visible to the notebook kernel")
    with open_store(path, must_exist=True) as store:
        full = [store.resolve_run_id(r) for r in run_ids]
        redactor = _runs_redactor(store, full)
    target = Path(out) if out else default_out(f"matrix-{full[0]}.html")
    return _render("coding_matrix", {"run_ids": full, "db": path}, target, keep_ipynb, redactor, kernel)
