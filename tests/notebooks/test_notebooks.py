"""CI executes every shipped notebook with papermill on a small mock run; any cell error fails."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

import aeh
from aeh.report import NOTEBOOKS, execute_notebook, notebooks_dir

pytestmark = pytest.mark.timeout(300)


def _text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            data = out.get("data", {})
            parts.append(data.get("text/html", "") + data.get("text/plain", ""))
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def test_notebooks_ship_inside_the_package():
    folder = Path(aeh.__file__).parent / "_bundled" / "notebooks"
    assert folder.resolve() == notebooks_dir().resolve()
    # In a checkout the package links the top-level notebooks/ (what `jupyter lab notebooks/` opens),
    # as it links suites/; the wheel holds the files themselves (tests/test_distribution.py).
    checkout = Path(aeh.__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file():
        assert folder.resolve() == (checkout / "notebooks").resolve()
    assert not any(p.is_symlink() for p in folder.iterdir())
    assert sorted(p.stem for p in folder.glob("*.ipynb")) == sorted(NOTEBOOKS)
    for name in NOTEBOOKS:
        nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1 and nb.cells[0] is tagged[0], name
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{name} is stored with outputs"


@pytest.mark.slow  # papermill executions
def test_every_notebook_executes(mock_db, tmp_path):
    db, run_a, run_b = mock_db
    jobs = {
        # run mode writes a run: into a store of its own, never the shared fixture's
        "run_suite": {"suite": "toy_math", "adapter": "mock", "attempts": 3, "seed": 5,
                      "db": str(tmp_path / "run_mode.db")},
        "compare_runs": {"run_a": run_a, "run_b": run_b, "db": str(db)},
        "judge_agreement": {"run_id": run_b, "db": str(db)},
        "explore": {"run_id": run_b, "db": str(db), "only_failed": True},
    }
    assert set(jobs) == set(NOTEBOOKS) - {"coding_matrix"}  # executed on coding runs in tests/analysis/test_coding_matrix.py
    with ThreadPoolExecutor(max_workers=2) as pool:  # kernels are separate processes
        futures = {name: pool.submit(execute_notebook, name, params, tmp_path / f"{name}.ipynb")
                   for name, params in jobs.items()}
        done = {name: nbformat.read(f.result(), as_version=4) for name, f in futures.items()}

    run = _text(done["run_suite"])
    assert "per-task-table" in run and "Wilson 95%" in run and "Suite rate" in run
    assert len(aeh.runs(str(tmp_path / "run_mode.db"))) == 1  # run mode executed the agent and stored a run
    assert len(aeh.runs(str(db))) == 2
    assert "Per-task deltas" in "".join(c.source for c in done["compare_runs"].cells)
    assert "compare-table" in _text(done["compare_runs"])
    assert "No judge verdicts in this run" in _text(done["judge_agreement"])
    assert "TraceBrowser" in _text(done["explore"]) or "application/vnd.jupyter.widget-view+json" in str(done["explore"])


@pytest.mark.slow  # papermill executions
def test_run_notebook_draws_a_recovery_curve_when_asked(tmp_path):
    # core's tools time out after 0.3 s, so injected timeouts stay cheap.
    params = {"suite": "core", "attempts": 1, "seed": 2, "db": str(tmp_path / "runs.db"),
              "recovery_rates": "0,0.5"}
    out = execute_notebook("run_suite", params, tmp_path / "curve.ipynb")
    text = _text(nbformat.read(out, as_version=4))
    assert "Recovery curve" in text and "burst" in text and "uniform" in text
    runs = aeh.runs(tmp_path / "runs.db")
    assert len(runs) == 1 + 4, "the suite run plus one run per (mode, rate)"


def _stderr_and_errors(nb) -> list[str]:
    return [str(out) for cell in nb.cells for out in cell.get("outputs", [])
            if out.get("output_type") == "error"]


@pytest.mark.slow  # papermill executions
def test_notebooks_without_parameters_explain_an_empty_or_single_run_store(tmp_path):
    """No parameters, the kernel one folder below the store: one friendly sentence, no traceback."""
    import papermill as pm

    from aeh.store import Store

    empty, single = tmp_path / "empty", tmp_path / "single"
    for project in (empty, single):
        (project / "notebooks").mkdir(parents=True)
    Store(empty / "runs.db").close()  # a store with zero runs
    aeh.run("smoke", adapter="mock", attempts=1, seed=1, db=single / "runs.db")
    jobs = {("empty", "compare_runs"): empty, ("empty", "explore"): empty,
            ("empty", "judge_agreement"): empty, ("single", "compare_runs"): single,
            ("single", "run_suite"): single}

    def execute(key):
        project = jobs[key]
        out = tmp_path / f"{key[0]}-{key[1]}.ipynb"
        pm.execute_notebook(str(notebooks_dir() / f"{key[1]}.ipynb"), str(out), parameters={},
                            kernel_name="python3", language="python", progress_bar=False,
                            cwd=str(project / "notebooks"))
        return nbformat.read(out, as_version=4)

    # One at a time: papermill's `cwd` is an os.chdir of this whole process around the kernel's
    # start, so two threads can start a kernel in each other's folder (and find the other store).
    done = {key: execute(key) for key in jobs}
    for (state, name), nb in done.items():
        text = _text(nb)
        assert not _stderr_and_errors(nb), (state, name)
        assert f"store: {jobs[(state, name)] / 'runs.db'}" in text and "walking up" in text, (state, name)
        if state == "empty":
            assert "No runs stored yet" in text and "aeh run --suite smoke --adapter mock" in text, name
    assert "Comparing needs two runs" in _text(done[("single", "compare_runs")])
    (only,) = aeh.runs(single / "runs.db").run_id
    reported = _text(done[("single", "run_suite")])
    assert f"reporting run {only}" in reported and "per-task-table" in reported
    assert len(aeh.runs(single / "runs.db")) == 1  # no parameters: the stored run reported, no new one
    assert not (empty / "notebooks" / "runs.db").exists()  # reading never created a store


@pytest.mark.slow  # papermill executions
def test_compare_runs_without_parameters_compares_the_newest_two_runs_of_one_suite(tmp_path):
    """Two smoke runs, then a toy_math run: the newest run's suite has one run, so the notebook says so;
    after a second toy_math run it compares the two toy_math runs, not the newest two of the store."""
    import papermill as pm

    db = tmp_path / "runs.db"
    (tmp_path / "notebooks").mkdir()
    for seed in (1, 2):
        aeh.run("smoke", adapter="mock", attempts=1, seed=seed, db=db, progress=False)
    math_a = aeh.run("toy_math", adapter="mock", attempts=1, seed=1, db=db, progress=False).run_id

    def execute(name: str) -> str:
        out = tmp_path / f"{name}.ipynb"
        pm.execute_notebook(str(notebooks_dir() / "compare_runs.ipynb"), str(out), parameters={},
                            kernel_name="python3", language="python", progress_bar=False,
                            cwd=str(tmp_path / "notebooks"))
        return _text(nbformat.read(out, as_version=4))

    lonely = execute("lonely")
    assert f"The newest run {math_a} is the only run of suite toy_math" in lonely and "smoke" in lonely
    assert "compare-table" not in lonely
    math_b = aeh.run("toy_math", adapter="mock", attempts=1, seed=2, db=db, progress=False).run_id
    paired = execute("paired")
    assert f"A {math_a}" in paired and f"B {math_b}" in paired and "compare-table" in paired
