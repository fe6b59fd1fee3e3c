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
    from jupyter_client.manager import AsyncKernelManager

    src = Path(name) if str(name).endswith(".ipynb") and Path(name).is_file() else notebook_path(str(name))
    out = Path(out_ipynb)
    out.parent.mkdir(parents=True, exist_ok=True)
    kernel_log = out.with_suffix(".kernel.log")

    class LoggedKernelManager(AsyncKernelManager):
        # The kernel's own stderr (start-up notices, crashes) goes to a log beside the executed
        # notebook instead of the user's terminal.
        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> Any:
            with kernel_log.open("ab") as log:  # the child keeps its own copy of the descriptor
                kw["stderr"] = log
                return await super()._async_launch_kernel(kernel_cmd, **kw)
    try:
        pm.execute_notebook(str(src), str(out), parameters=dict(parameters), kernel_name="python3",
                            language="python", progress_bar=False, log_output=False,
                            cwd=str(Path.cwd()), execution_timeout=timeout,
                            kernel_manager_class=LoggedKernelManager)
    except pm.PapermillExecutionError as exc:
        raise NotebookExecutionError(src.name, _cell_name(exc), exc.ename, exc.evalue, out) from None
    return out
