"""Run a shipped notebook with papermill; a failing cell becomes an AehError that says where and why."""

from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from aeh.errors import AehError, ConfigError
from aeh.report._inprocess import INPROCESS, in_process_engine
from aeh.report._paths import notebook_path
from aeh.report._stored_form import is_shipped_notebook

__all__ = ["KERNEL_ENV", "NotebookExecutionError", "execute_notebook", "kernel_choice", "run_notebook"]

#: Environment variable naming the kernel reports run in (`inprocess`, or e.g. `python3`).
KERNEL_ENV = "AEH_REPORT_KERNEL"


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


def kernel_choice(kernel: str | None = None) -> str:
    """`kernel`, else $AEH_REPORT_KERNEL, else in-process; a Jupyter kernel name starts a process."""
    choice = (kernel or os.environ.get(KERNEL_ENV) or INPROCESS).strip()
    if not choice:
        raise ConfigError(f"empty kernel name (from --kernel or ${KERNEL_ENV}): use `{INPROCESS}` to run the "
                          "notebook in this process, or a Jupyter kernel name such as `python3`")
    return choice


def execute_notebook(name: str | Path, parameters: dict[str, Any], out_ipynb: str | Path, *,
                     timeout: float | None = 600, kernel: str | None = None) -> Path:
    """Execute a shipped notebook (by name, e.g. "run_suite") or a path, with papermill parameters.

    `kernel` (default $AEH_REPORT_KERNEL, else `inprocess`): `inprocess` runs the cells in an
    IPython shell in this process, through aeh's papermill engine (aeh, pandas and matplotlib are
    imported once; see `aeh.report._inprocess`);
    a Jupyter kernel name such as `python3` starts that kernel as a separate process, which in an
    aeh install is the same Python (see docs/notebooks.md). Inside a running IPython the
    in-process engine is not available and `python3` is used.
    """
    run_notebook(name, parameters, out_ipynb, timeout=timeout, kernel=kernel)
    return Path(out_ipynb)


def run_notebook(name: str | Path, parameters: dict[str, Any], out_ipynb: str | Path, *,
                 timeout: float | None = 600, kernel: str | None = None) -> Any:
    """`execute_notebook`, returning the executed notebook node as written to `out_ipynb` (an
    export then needs no second read and validation of the file)."""
    import papermill as pm  # heavy: imported only when a report is rendered

    src = Path(name) if str(name).endswith(".ipynb") and Path(name).is_file() else notebook_path(str(name))
    out = Path(out_ipynb)
    if is_shipped_notebook(out):  # the shipped notebooks stay without outputs: papermill writes a copy
        raise ConfigError(f"{out} is a shipped notebook: write the executed notebook elsewhere")
    out.parent.mkdir(parents=True, exist_ok=True)
    choice = kernel_choice(kernel)
    # The executed notebook is written once, at the end (or at the failing cell): saved after
    # every cell, a notebook with a dozen charts and the embedded traces was re-serialized and
    # re-validated some 50 times per report.
    options: dict[str, Any] = dict(parameters=dict(parameters), language="python", progress_bar=False,
                                   log_output=False, cwd=str(Path.cwd()), execution_timeout=timeout,
                                   request_save_on_cell_execute=False)
    try:
        with in_process_engine() if choice == INPROCESS else nullcontext() as engine:
            if engine is not None:
                nb = pm.execute_notebook(str(src), str(out), kernel_name="python3", engine_name=engine, **options)
            else:  # a kernel process, as asked or because this process is a kernel already
                name = "python3" if choice == INPROCESS else choice
                nb = pm.execute_notebook(str(src), str(out), kernel_name=name,
                                         kernel_manager_class=_logged_kernel_manager(out.with_suffix(".kernel.log")),
                                         **options)
    except pm.PapermillExecutionError as exc:
        raise NotebookExecutionError(src.name, _cell_name(exc), exc.ename, exc.evalue, out) from None
    return nb


def _logged_kernel_manager(kernel_log: Path) -> type:
    """A kernel-process manager whose kernel's own stderr (start-up notices, crashes) goes to a
    log beside the executed notebook instead of the user's terminal."""
    from jupyter_client.manager import AsyncKernelManager  # heavy: loaded on first use

    class LoggedKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> Any:
            with kernel_log.open("ab") as log:  # the child keeps its own copy of the descriptor
                kw["stderr"] = log
                return await super()._async_launch_kernel(kernel_cmd, **kw)

    return LoggedKernelManager
