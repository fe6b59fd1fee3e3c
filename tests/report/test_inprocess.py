"""The in-process papermill engine: a report notebook's cells run in an IPython shell in this
process, with the outputs, parameters and failures a kernel gives, and nothing left behind."""

from __future__ import annotations

import atexit
import gc
import json
import os
import re
import sys
import warnings
from pathlib import Path

import nbformat
import pytest

from aeh.cli import main as cli
from aeh.report import NotebookExecutionError, execute_notebook


def _notebook(path: Path, *sources: str) -> Path:
    cells = [nbformat.v4.new_code_cell("x = 1  # parameter")]
    cells[0].metadata["tags"] = ["parameters"]
    cells += [nbformat.v4.new_code_cell(source) for source in sources]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, path)
    return path


def _executed(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_parameters_inject_and_outputs_come_out_as_from_a_kernel(tmp_path: Path) -> None:
    source = _notebook(tmp_path / "nb.ipynb",
                       "import sys\nfrom IPython.display import HTML, display\n"
                       "print('before')\nprint('still before')\ndisplay(HTML('<b>shown</b>'))\n"
                       "print('to stderr', file=sys.stderr)\nprint('after')",
                       "x * 2",
                       "x * 3;  # a trailing semicolon shows nothing")
    out = execute_notebook(source, {"x": 21}, tmp_path / "out.ipynb", kernel="inprocess")
    cells = _executed(out)
    assert "x = 21" in "".join(cells[1]["source"]) and "injected-parameters" in cells[1]["metadata"]["tags"]
    shown = cells[2]["outputs"]
    assert [(o["output_type"], o.get("name")) for o in shown] == [
        ("stream", "stdout"), ("display_data", None), ("stream", "stderr"), ("stream", "stdout")]
    assert "".join(shown[0]["text"]) == "before\nstill before\n" and "".join(shown[3]["text"]) == "after\n"
    assert {k: "".join(v) for k, v in shown[1]["data"].items()} == {
        "text/html": "<b>shown</b>", "text/plain": "<IPython.core.display.HTML object>"}
    result = cells[3]["outputs"]
    assert [o["output_type"] for o in result] == ["execute_result"]
    assert "".join(result[0]["data"]["text/plain"]) == "42" and result[0]["execution_count"] == cells[3]["execution_count"]
    assert cells[4]["outputs"] == []
    assert [c["execution_count"] for c in cells] == [1, 2, 3, 4, 5]
    assert all(c["metadata"]["papermill"]["status"] == "completed" for c in cells)


def test_a_failing_cell_is_named_and_stops_the_notebook(tmp_path: Path) -> None:
    source = _notebook(tmp_path / "nb.ipynb", "y = 2", "raise ValueError(f'boom {y}')", "z = 3")
    out = tmp_path / "out.ipynb"
    with pytest.raises(NotebookExecutionError) as info:
        execute_notebook(source, {}, out, kernel="inprocess")
    text = str(info.value)
    assert "cell [3] `raise ValueError(f'boom {y}')`" in text and "ValueError: boom 2" in text
    cells = _executed(out)
    error = cells[2]["outputs"][-1]
    assert (error["output_type"], error["ename"], error["evalue"]) == ("error", "ValueError", "boom 2")
    assert any("boom" in line for line in error["traceback"])
    assert cells[2]["metadata"]["papermill"]["status"] == "failed"
    assert cells[3]["execution_count"] is None and cells[3]["outputs"] == []  # never ran


def test_a_cells_state_does_not_stay_in_this_process(tmp_path: Path) -> None:
    import matplotlib
    from IPython import get_ipython
    from IPython.core.interactiveshell import InteractiveShell

    source = _notebook(tmp_path / "nb.ipynb",
                       "import sys, weakref, warnings, matplotlib\n"
                       "sys.modules['aeh_probe_shell'] = weakref.ref(get_ipython())\n"
                       "left_in_cell = 'a value'\n"
                       "matplotlib.rcParams['lines.linewidth'] = 9.5\n"
                       "warnings.simplefilter('ignore')",
                       "print(left_in_cell)")
    # once first: what importing papermill, IPython and the rest leaves (urllib3 adds a warning
    # filter when imported, say) is the imports', not a cell's
    execute_notebook(_notebook(tmp_path / "warm.ipynb", "import matplotlib"), {}, tmp_path / "warm-out.ipynb",
                     kernel="inprocess")
    streams = sys.stdout, sys.stderr, sys.displayhook, sys.excepthook
    main, filters = sys.modules["__main__"], list(warnings.filters)
    width, backend = matplotlib.rcParams["lines.linewidth"], matplotlib.get_backend(auto_select=False)
    try:
        out = execute_notebook(source, {}, tmp_path / "out.ipynb", kernel="inprocess")
        assert "".join(_executed(out)[2]["outputs"][0]["text"]) == "a value\n"  # state lives across cells
        assert get_ipython() is None and not InteractiveShell.initialized()
        assert (sys.stdout, sys.stderr, sys.displayhook, sys.excepthook) == streams
        assert sys.modules["__main__"] is main and not hasattr(main, "left_in_cell")
        import builtins

        assert not hasattr(builtins, "left_in_cell") and not hasattr(builtins, "get_ipython")
        assert warnings.filters == filters
        assert matplotlib.rcParams["lines.linewidth"] == width
        assert matplotlib.get_backend(auto_select=False) == backend
        gc.collect()
        assert sys.modules["aeh_probe_shell"]() is None, "something still holds the report's shell"
    finally:
        sys.modules.pop("aeh_probe_shell", None)


def test_the_callers_open_figures_stay_out_of_the_report_and_open(tmp_path: Path) -> None:
    """The report shows every figure open after a cell; one the caller had open before the
    render (another cell of the caller's, a test) is neither shown in the report nor closed."""
    import matplotlib

    matplotlib.use("agg")
    from matplotlib import pyplot

    mine = pyplot.figure()
    mine.add_subplot().plot([1, 2, 3])
    source = _notebook(tmp_path / "nb.ipynb",
                       "from aeh.report.views import set_up_charts\nset_up_charts()",
                       "from matplotlib import pyplot\nfigure, axes = pyplot.subplots()\naxes.bar([0], [1])",
                       "pyplot.figure().add_subplot().plot([0, 1])\nraise ValueError('a failing cell')")
    try:
        with pytest.raises(NotebookExecutionError):
            execute_notebook(source, {}, tmp_path / "out.ipynb", kernel="inprocess")
        cells = _executed(tmp_path / "out.ipynb")
        images = [[o for o in cell["outputs"] if "image/png" in o.get("data", {})] for cell in cells]
        assert [len(shown) for shown in images] == [0, 0, 1, 1]  # each of the notebook's charts, once
        assert pyplot.get_fignums() == [mine.number] and pyplot.figure(mine.number) is mine
    finally:
        pyplot.close("all")


def _normalized(html: str) -> str:
    """The page without what differs between any two renders: nbformat cell ids, Styler ids."""
    html = re.sub(r"cell-id=[0-9a-f]{8}", "cell-id=X", html)
    return re.sub(r"T_[0-9a-f]{5}", "T_X", html)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_in_process_and_kernel_process_reports_show_the_same(mock_db, tmp_path: Path) -> None:
    """Tables, figures and the attempts list of `aeh report` equal those of `--kernel python3`."""
    db, _, run_id = mock_db
    pages = {}
    for kernel in ("inprocess", "python3"):
        out = tmp_path / f"{kernel}.html"
        assert cli(["report", "--run-id", run_id, "--db", str(db), "--out", str(out), "--kernel", kernel]) == 0
        pages[kernel] = _normalized(out.read_text())
    mine, theirs = pages["inprocess"], pages["python3"]
    tables = [re.findall(r"<table.*?</table>", page, re.S) for page in (mine, theirs)]
    assert len(tables[0]) >= 5 and tables[0] == tables[1]
    figures = [re.findall(r'<figure class="aeh-bars".*?</figure>', page, re.S) for page in (mine, theirs)]
    assert len(figures[0]) >= 5 and figures[0] == figures[1]  # the charts, drawn as HTML bars
    attempts = [re.search(r'<script type="application/json" id="aeh-attempts-data">(.*?)</script>', page, re.S)
                for page in (mine, theirs)]
    assert attempts[0] and attempts[1] and json.loads(attempts[0][1]) == json.loads(attempts[1][1])
    assert len(json.loads(attempts[0][1])["rows"]) > 0
    body = [page[page.index("<main>"):] for page in (mine, theirs)]
    assert body[0] == body[1]  # and nothing else differs either


@pytest.mark.slow
def test_inside_a_running_ipython_the_notebook_runs_in_a_kernel_process(tmp_path: Path) -> None:
    """The in-process engine needs IPython's singleton: inside a Jupyter kernel (or any running
    IPython) a report falls back to a `python3` kernel process and leaves that shell alone."""
    from IPython import get_ipython
    from IPython.core.interactiveshell import InteractiveShell

    source = _notebook(tmp_path / "nb.ipynb", "import os\nprint(os.getpid())")
    main = sys.modules["__main__"]
    running = InteractiveShell.instance()
    try:
        out = execute_notebook(source, {}, tmp_path / "out.ipynb", kernel="inprocess")
        assert get_ipython() is running
    finally:
        atexit.unregister(running.atexit_operations)
        InteractiveShell.clear_instance()
        sys.modules["__main__"] = main
    printed = int("".join(_executed(out)[1]["outputs"][0]["text"]))
    assert printed != os.getpid()  # a kernel process ran the cell
    assert (tmp_path / "out.kernel.log").exists()


def test_a_failing_cell_fails_aeh_report(mock_db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The command, not only the function: a cell that raises in-process ends `aeh report` with
    an error naming the cell, a non-zero exit and the failed notebook kept beside the report."""
    import aeh.report._execute as execute

    db, _, run_id = mock_db
    failing = _notebook(tmp_path / "run_suite.ipynb", "run_id = run_id or 'none'\ndb = db if 'db' in dir() else None",
                        "raise RuntimeError(f'no chart for {run_id}')")
    monkeypatch.setattr(execute, "notebook_path", lambda name: failing)
    out = tmp_path / "report.html"
    code = cli(["report", "--run-id", run_id, "--db", str(db), "--out", str(out), "--kernel", "inprocess"])
    err = capsys.readouterr().err
    assert code != 0 and not out.exists()
    assert "failed in cell [4] `raise RuntimeError(f'no chart for {run_id}')`" in err  # after the injected cell
    assert f"RuntimeError: no chart for {run_id}" in err
    assert (tmp_path / "report.failed.ipynb").exists()
