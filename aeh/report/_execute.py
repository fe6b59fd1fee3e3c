"""Run a shipped notebook with papermill; a failing cell becomes an AehError that says where and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aeh.errors import AehError
from aeh.report._paths import notebook_path

__all__ = ["NotebookExecutionError", "execute_notebook"]


class NotebookExecutionError(AehError):
    """A cell of a report notebook raised."""

    def __init__(self, notebook: str, cell: str, ename: str, evalue: str, output: Path) -> None:
        self.notebook, self.cell, self.ename, self.evalue, self.output = notebook, cell, ename, evalue, output
        hint = ""
        if ename in ("ModuleNotFoundError", "ImportError") and "aeh" in evalue:
            hint = (" — the `python3` Jupyter kernel runs a Python without aeh; check "
                    "`jupyter kernelspec list` or run aeh from the environment it is installed in")
        super().__init__(f"notebook {notebook} failed in {cell}: {ename}: {evalue}{hint} "
                         f"(executed notebook kept at {output})")


def _cell_name(exc: Any) -> str:
    number = getattr(exc, "exec_count", None)
    source = (getattr(exc, "source", "") or "").strip().splitlines()
    first = next((line for line in source if line.strip() and not line.startswith("#")), source[0] if source else "")
    where = f"cell [{number}]" if number is not None else f"cell {getattr(exc, 'cell_index', '?')}"
    return f"{where} `{first[:80]}`" if first else where


def execute_notebook(name: str | Path, parameters: dict[str, Any], out_ipynb: str | Path, *,
                     timeout: float | None = 600) -> Path:
    """Execute a shipped notebook (by name, e.g. "run_suite") or a path, with papermill parameters.

    Uses the `python3` kernel, which in an aeh install is the same Python (see docs/notebooks.md).
    """
    import papermill as pm  # heavy: imported only when a report is rendered

    src = Path(name) if str(name).endswith(".ipynb") and Path(name).is_file() else notebook_path(str(name))
    out = Path(out_ipynb)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        pm.execute_notebook(str(src), str(out), parameters=dict(parameters), kernel_name="python3",
                            language="python", progress_bar=False, log_output=False,
                            cwd=str(Path.cwd()), execution_timeout=timeout)
    except pm.PapermillExecutionError as exc:
        raise NotebookExecutionError(src.name, _cell_name(exc), exc.ename, exc.evalue, out) from None
    return out
