"""An in-process Jupyter kernel for report notebooks: nbclient drives it as it drives a kernel process.

Starting a `python3` kernel process and re-importing aeh, pandas, scipy and matplotlib in it was
most of an `aeh report`: the calling process has them loaded (or loads them once). ipykernel's
in-process kernel runs the cells in this process, with the same messages, outputs and error
reports as a kernel process; this module adapts it to the calls nbclient makes and keeps its
side effects (the IPython shell is a process-wide singleton, matplotlib state, `sys.stdout`)
to the one render that runs at a time.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aeh.report._lean_imports import without_modules

__all__ = ["INPROCESS", "in_process_kernel"]

#: The kernel name that selects in-process execution.
INPROCESS = "inprocess"

# One render at a time: the shell, its namespace and pyplot are shared by the whole process.
_LOCK = threading.Lock()


class _ThreadStream:
    """`sys.stdout`/`sys.stderr` while a cell runs: the executing thread writes into the notebook,
    any other thread (a concurrent CLI command, a progress printer) still writes where it did."""

    def __init__(self, kernel_stream: Any, original: Any) -> None:
        self._kernel, self._original, self._owner = kernel_stream, original, threading.get_ident()

    def _target(self) -> Any:
        return self._kernel if threading.get_ident() == self._owner else self._original

    def write(self, text: str) -> int:
        target = self._target()
        return target.write(text) if target is not None else len(text)

    def flush(self) -> None:
        target = self._target()
        if target is not None:
            target.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)


def _classes() -> tuple[type, type]:
    """The manager class (and its client class), built on first use: ipykernel is heavy."""
    # ipykernel imports debugpy (~0.4 s, and a stderr warning about frozen modules) for a
    # debugger that nothing attaches to in a report: it is left out of this process's kernel.
    with without_modules("debugpy"):
        # heavy: loaded on first use
        import ipykernel.debugger  # noqa: F401  # decides, once, that debugpy is absent
        from ipykernel.inprocess.blocking import BlockingInProcessKernelClient
        from ipykernel.inprocess.ipkernel import InProcessKernel
        from ipykernel.inprocess.manager import InProcessKernelManager
        from traitlets.config import Config

    class ReportKernel(InProcessKernel):
        async def execute_request(self, stream: Any, ident: Any, parent: Any) -> None:
            # The shell tags `sys.stdout` with the request before the streams are swapped in,
            # so the kernel's own streams would send print() output under no request, and
            # nbclient would drop it.
            self.stdout.set_parent(parent)
            self.stderr.set_parent(parent)
            await super().execute_request(stream, ident, parent)  # type: ignore[no-untyped-call]  # ipykernel is unannotated

        @contextmanager
        def _redirected_io(self) -> Iterator[None]:
            saved = sys.stdout, sys.stderr
            sys.stdout = _ThreadStream(self.stdout, saved[0])
            sys.stderr = _ThreadStream(self.stderr, saved[1])
            try:
                yield
            finally:
                sys.stdout, sys.stderr = saved

    class ReportKernelClient(BlockingInProcessKernelClient):
        def wait_for_ready(self, timeout: float | None = None) -> None:
            # The kernel is an object in this process, ready once built; the inherited wait
            # polls for replies with 0.2 s timeouts and prints every message it drains.
            return None

    class ReportKernelManager(InProcessKernelManager):
        """nbclient calls start_kernel(extra_arguments=...) and shutdown_kernel(now=...)."""

        def start_kernel(self, **_kwargs: Any) -> None:
            config = Config()
            config.HistoryManager.hist_file = ":memory:"  # as nbclient asks of a kernel process
            # ipykernel is unannotated, so the kernel class inherits an untyped __init__
            kernel = self.kernel = ReportKernel(parent=self, session=self.session, config=config)  # type: ignore[no-untyped-call]
            if kernel.shell is not None:
                # The shell outlives a kernel (singleton): each notebook starts from an empty
                # namespace, and a new history session counting from [1].
                kernel.shell.reset(new_session=True)
                # Marked, so the rest of this process (progress bars) does not take the shell
                # left behind for Jupyter: see aeh.engine.progress.interactive.
                kernel.shell.aeh_report_shell = True

        def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
            super().shutdown_kernel()  # type: ignore[no-untyped-call]  # ipykernel is unannotated

        def client(self, **kwargs: Any) -> Any:
            kwargs["kernel"] = self.kernel
            return ReportKernelClient(parent=self, session=self.session, **kwargs)

    return ReportKernelManager, ReportKernelClient


def _fresh_process_warnings() -> None:
    """Python's default warning filters, which a kernel process starts with: cells warn as they
    would there, whatever filters the caller set (pytest's `error`, say)."""
    warnings.resetwarnings()
    for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning, DeprecationWarning):
        warnings.simplefilter("ignore", category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")


@contextmanager
def _matplotlib_restored() -> Iterator[None]:
    """The notebook's theme stays inside the render, and a backend chosen before it comes back.

    (A process that had not picked a backend yet is left with the inline one.)"""
    # heavy: loaded on first use (the notebook imports it anyway)
    import matplotlib

    backend = matplotlib.get_backend(auto_select=False)
    with matplotlib.rc_context():
        yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if backend is not None and pyplot is not None and matplotlib.get_backend(auto_select=False) != backend:
        pyplot.switch_backend(backend)


def _available() -> bool:
    """False inside a running IPython (a Jupyter kernel): its shell singleton cannot be replaced."""
    # heavy: loaded on first use
    from ipykernel.inprocess.ipkernel import InProcessInteractiveShell
    from IPython import get_ipython

    shell = get_ipython()
    return shell is None or isinstance(shell, InProcessInteractiveShell)


@contextmanager
def in_process_kernel() -> Iterator[type | None]:
    """The kernel manager class for papermill's `kernel_manager_class`, held for one render;
    None when this process already runs an IPython shell (use a kernel process then)."""
    with _LOCK:
        manager, _client = _classes()
        if not _available():
            yield None
            return
        with _matplotlib_restored(), warnings.catch_warnings():
            _fresh_process_warnings()
            yield manager
