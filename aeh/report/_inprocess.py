"""A papermill engine that runs a report notebook's cells in an IPython shell in this process.

papermill executes a notebook through an engine (`papermill.engines`, chosen with `engine_name=`);
its own engine drives a Jupyter kernel through nbclient, one message per output. Starting a
kernel process and importing aeh, pandas and matplotlib again in it was most of an `aeh report`;
ipykernel's in-process kernel avoided the process but still passed every output through the
kernel messaging (sessions, an I/O thread, an event loop) and reset its shell with a full garbage
collection on the way out. This engine runs each code cell with `InteractiveShell.run_cell` and
writes what the cell shows into the cell's outputs as nbclient writes them from a kernel's
messages: `display_data` from the shell's display publisher, `execute_result` from its display
hook, `stream` from `sys.stdout`/`sys.stderr`, `error` with the traceback. papermill still
injects the parameters, records each cell's start, end and status, and raises
`PapermillExecutionError` naming the failing cell.

The shell lives for one notebook: it is IPython's singleton while the cells run (so `display()`
and `get_ipython()` find it) and is removed afterwards with its namespace, history and exit hook;
`sys.modules["__main__"]`, the standard streams, the warning filters and matplotlib's settings and
backend are put back; pyplot figures the caller had open are hidden from the notebook and
returned. What stays in the process is what any import leaves: the modules imported.
"""

from __future__ import annotations

import atexit
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

__all__ = ["ENGINE_NAME", "INPROCESS", "in_process_engine"]

#: The `--kernel` choice that runs the notebook in this process.
INPROCESS = "inprocess"
#: The name under which the engine is registered with papermill.
ENGINE_NAME = "aeh-inprocess"

# One render at a time: the shell singleton, `sys.stdout` and pyplot are shared by the process.
_LOCK = threading.Lock()


class _Outputs:
    """The running cell's outputs, in the order the cell produced them."""

    def __init__(self) -> None:
        self.outputs: list[Any] = []

    def add(self, output: Any) -> None:
        self.outputs.append(output)

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last.output_type == "stream" and last.name == name:
            last.text += text  # consecutive writes, as a kernel's buffered stream sends them
        else:
            self.outputs.append(_output("stream", name=name, text=text))


class _Stream:
    """`sys.stdout`/`sys.stderr` while a cell runs: the executing thread writes into the cell's
    outputs; any other thread (a progress printer, a concurrent command) writes where it did."""

    def __init__(self, name: str, original: Any, sink: _Outputs) -> None:
        self.name, self._original, self._sink, self._owner = name, original, sink, threading.get_ident()

    def write(self, text: str) -> int:
        if threading.get_ident() == self._owner:
            self._sink.stream(self.name, text)
            return len(text)
        return self._original.write(text) if self._original is not None else len(text)

    def flush(self) -> None:
        if threading.get_ident() != self._owner and self._original is not None:
            self._original.flush()

    def isatty(self) -> bool:
        return threading.get_ident() != self._owner and bool(getattr(self._original, "isatty", lambda: False)())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


def _output(output_type: str, **fields: Any) -> Any:
    """An nbformat output node, as nbclient makes from a kernel message."""
    # heavy: loaded on first use (papermill has imported nbformat)
    from nbformat.v4 import new_output

    return new_output(output_type, **fields)  # type: ignore[no-untyped-call]  # nbformat is unannotated


def _json(value: Any) -> Any:
    """What a kernel message carries after JSON: lists for tuples, string keys."""
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


@cache
def _shell_class() -> Any:
    """The report shell class, built on first use (IPython is imported by the notebook anyway)."""
    # heavy: loaded on first use
    from IPython.core.display_trap import DisplayTrap
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    class Publisher(DisplayPublisher):
        sink: _Outputs | None = None

        def publish(self, data: Any, metadata: Any = None, source: Any = None, *, transient: Any = None,
                    update: bool = False, **_kwargs: Any) -> None:
            if self.sink is None:
                return
            self.sink.add(_output("display_data", data=_json(data), metadata=_json(metadata or {})))

        def clear_output(self, wait: bool = False) -> None:
            if self.sink is not None:
                self.sink.outputs.clear()

    class Hook(DisplayHook):
        sink: _Outputs | None = None
        _result: tuple[Any, Any] | None = None

        def write_output_prompt(self) -> None:
            return None

        def write_format_data(self, format_dict: Any, md_dict: Any = None) -> None:
            self._result = format_dict, md_dict or {}

        def finish_displayhook(self) -> None:
            if self.sink is not None and self._result is not None:
                data, metadata = self._result
                self.sink.add(_output("execute_result", data=_json(data), metadata=_json(metadata),
                                         execution_count=self.prompt_count))
            self._result = None
            self._is_active = False

    class ReportShell(InteractiveShell):
        #: aeh.report.views.setup shows each figure once after its cell; progress bars stay text
        aeh_report_shell = True
        sink: _Outputs | None = None

        def init_display_pub(self) -> None:
            self.display_pub = Publisher(shell=self, parent=self)  # type: ignore[no-untyped-call]  # IPython is unannotated
            self.configurables.append(self.display_pub)  # type: ignore[arg-type]  # a Configurable, typed too narrowly

        def init_displayhook(self) -> None:
            self.displayhook = Hook(shell=self, cache_size=self.cache_size)  # type: ignore[no-untyped-call]  # IPython is unannotated
            self.configurables.append(self.displayhook)  # type: ignore[arg-type]  # a Configurable, typed too narrowly
            self.display_trap = DisplayTrap(hook=self.displayhook)  # type: ignore[no-untyped-call]  # IPython is unannotated

        def _showtraceback(self, etype: Any, evalue: Any, stb: list[str]) -> None:
            if self.sink is None:
                super()._showtraceback(etype, evalue, stb)
            else:
                self.sink.add(_output("error", ename=etype.__name__, evalue=str(evalue), traceback=list(stb)))

        def enable_gui(self, gui: Any = None) -> None:  # no event loop to integrate with
            return None

    return ReportShell


def _run_cell(shell: Any, cell: Any) -> bool:
    """Run one code cell into its outputs and execution count; False when it raised."""
    sink = _Outputs()
    shell.sink = shell.display_pub.sink = shell.displayhook.sink = sink
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Stream("stdout", saved[0], sink), _Stream("stderr", saved[1], sink)
    try:
        result = shell.run_cell(cell.source, store_history=True)
    finally:
        sys.stdout, sys.stderr = saved
        shell.sink = shell.display_pub.sink = shell.displayhook.sink = None
    cell.outputs = sink.outputs
    cell.execution_count = result.execution_count
    return bool(result.success)


@contextmanager
def _shell() -> Iterator[Any]:
    """A new shell, IPython's singleton while the notebook runs, gone afterwards."""
    # heavy: loaded on first use
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"  # as nbclient asks of a kernel process
    config.InteractiveShell.colors = "nocolor"  # tracebacks are read in an error message and a file
    main = sys.modules.get("__main__")
    shell = _shell_class().instance(config=config)
    try:
        yield shell
    finally:
        # heavy: loaded on first use
        from aeh.report._inline import drop_deferred

        drop_deferred()  # a chart set-up still waiting for matplotlib belongs to this shell
        atexit.unregister(shell.atexit_operations)
        shell.history_manager.end_session()
        shell.user_ns.clear()
        type(shell).clear_instance()  # on every class up the chain: get_ipython() is None again
        if main is not None:
            sys.modules["__main__"] = main


@cache
def _engine() -> type:
    # heavy: loaded on first use
    from papermill.engines import Engine

    class InProcessEngine(Engine):  # type: ignore[misc]  # papermill is unannotated
        """Each cell run in this process's report shell; papermill's manager records its state."""

        @classmethod
        def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **_kwargs: Any) -> None:
            with _shell() as shell:
                for index, cell in enumerate(nb_man.nb.cells):
                    nb_man.cell_start(cell, index)
                    try:
                        if cell.cell_type == "code" and not _run_cell(shell, cell):
                            nb_man.cell_exception(cell, cell_index=index)
                            break
                    finally:
                        nb_man.cell_complete(cell, cell_index=index)
            version = ".".join(map(str, sys.version_info[:3]))
            nb_man.nb.metadata["language_info"] = {  # what ipykernel's kernel_info reply says
                "name": "python", "version": version, "mimetype": "text/x-python", "file_extension": ".py",
                "pygments_lexer": "ipython3", "codemirror_mode": {"name": "ipython", "version": 3},
                "nbconvert_exporter": "python"}

    return InProcessEngine


def _fresh_process_warnings() -> None:
    """Python's default warning filters, which a kernel process starts with: cells warn as they
    would there, whatever filters the caller set (pytest's `error`, say)."""
    warnings.resetwarnings()
    for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning, DeprecationWarning):
        warnings.simplefilter("ignore", category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")


@contextmanager
def _callers_figures_set_aside() -> Iterator[None]:
    """pyplot figures the caller has open are out of the notebook's sight while it runs, and back
    afterwards: the report shows and closes every open figure after a cell, and would otherwise
    show (and close) figures it did not draw. Figures the notebook left open (a failing cell's)
    are closed: they were the report's."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:  # pyplot never imported: the caller has no figures
        yield
        return
    figures = helpers.Gcf.figs
    kept = dict(figures)
    figures.clear()
    try:
        yield
    finally:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close("all")
        figures.clear()
        figures.update(kept)


@contextmanager
def _matplotlib_restored() -> Iterator[None]:
    """The notebook's theme stays inside the render, and a backend chosen before it comes back.

    matplotlib is not imported for this: a notebook that draws no figure never imports it. When
    the notebook imported it first, its settings go back to matplotlib's defaults afterwards (what
    the import had set). (A process that had not picked a backend yet is left with Agg, which the
    report chose.)"""
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is None:
        try:
            yield
        finally:
            if "matplotlib" in sys.modules:  # imported by the notebook: its theme goes
                sys.modules["matplotlib"].rc_file_defaults()
        return
    backend = matplotlib.get_backend(auto_select=False)
    with _callers_figures_set_aside():  # outermost: switching the backend back closes open figures
        with matplotlib.rc_context():
            yield
        pyplot = sys.modules.get("matplotlib.pyplot")
        if backend is not None and pyplot is not None and matplotlib.get_backend(auto_select=False) != backend:
            pyplot.switch_backend(backend)


def _available() -> bool:
    """False inside a running IPython (a Jupyter kernel): its shell singleton cannot be replaced."""
    # heavy: loaded on first use
    from IPython import get_ipython

    return get_ipython() is None


@contextmanager
def in_process_engine() -> Iterator[str | None]:
    """The papermill engine name that runs a notebook in this process, held for one render;
    None when this process already runs an IPython shell (use a kernel process then)."""
    with _LOCK:
        if not _available():
            yield None
            return
        # heavy: loaded on first use
        from papermill.engines import papermill_engines

        if ENGINE_NAME not in papermill_engines._engines:
            papermill_engines.register(ENGINE_NAME, _engine())
        with _matplotlib_restored(), warnings.catch_warnings():
            _fresh_process_warnings()
            yield ENGINE_NAME
