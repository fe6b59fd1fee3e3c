"""`aeh.RecordedRun`: record an agent's attempts with `Recorder`s straight into a stored, graded run.

    with aeh.RecordedRun("toy_math", db="runs.db", path="trajectories.jsonl") as session:
        for task in session.tasks:
            for _ in range(3):
                with session.record(task.id) as rec:
                    rec.answer(my_agent(task.prompt))
    print(session.run_id)        # one run: per-task table, compare, report, TraceBrowser

Each `session.record(task_id)` is an `aeh.Recorder`; on leaving the session its trajectories are
graded against the suite into ONE run of the store (`aeh.importers.grade_trajectories`), the
same as `aeh grade --suite S FILE` does later from a JSONL file. With `path=` every trajectory is
also appended to that file as it ends, so a crash in the agent loop loses nothing and the file
can be graded again against another suite version.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

from aeh.errors import ConfigError
from aeh.importers import grade_trajectories, grade_trajectories_async
from aeh.models import Task
from aeh.recording import Recorder
from aeh.store import StoreLike
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import load_suite
from aeh.trajectory import Trajectory

__all__ = ["RecordedRun"]


class _SessionRecorder(Recorder):
    """A Recorder that hands its trajectory to the session when it ends."""

    def __init__(self, session: RecordedRun, task_id: str, **options: Any) -> None:
        super().__init__(task_id, **options)
        self._session = session

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        super().__exit__(exc_type, exc, tb)
        if self.trajectory is not None:
            self._session.trajectories.append(self.trajectory)


class RecordedRun:
    """Recorders whose attempts become one graded run when the session ends; see the module docstring."""

    def __init__(self, suite: str | Path | EvalSuite, *, db: StoreLike = None, path: str | Path | None = None,
                 agent: str = "recorded", model: str | None = None, run_id: str | None = None,
                 model_free: bool = False) -> None:
        self.suite = load_suite(suite)
        self._suite_spec = suite
        self.db = db
        self.path = Path(path) if path is not None else None
        self.agent = agent
        self.model = model
        self.model_free = model_free
        self.trajectories: list[Trajectory] = []
        self.run_id: str | None = run_id
        self._graded = False
        self._known = {t.id: t for t in self.suite.tasks()}

    @property
    def tasks(self) -> list[Task]:
        """The suite's tasks, to drive the agent with."""
        return list(self._known.values())

    def record(self, task_id: str, *, attempt: int | None = None, **metadata: Any) -> Recorder:
        """A `Recorder` for one attempt of `task_id` (a suite task; a typo is refused here, not at the end)."""
        if task_id not in self._known:
            # only on this error path
            import difflib

            close = difflib.get_close_matches(task_id, list(self._known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"task {task_id!r} is not in suite {self.suite.name!r}{hint}; "
                              f"its tasks: {', '.join(sorted(self._known))}")
        return _SessionRecorder(self, task_id, path=self.path, attempt=attempt, agent=self.agent,
                                model=self.model, metadata=metadata)

    def _grade_options(self) -> dict[str, Any]:
        if self._graded:
            raise ConfigError("this RecordedRun was already graded; start a new one for more attempts")
        if not self.trajectories:
            raise ConfigError("the RecordedRun recorded no attempt: call session.record(task_id) for each")
        self._graded = True
        return {"run_id": self.run_id, "name": self.agent, "model_free": self.model_free,
                "source": str(self.path) if self.path else "aeh.RecordedRun"}

    def _graded_suite(self) -> str | Path | EvalSuite:
        # a name or path is recorded on the run (replay, rescoring); an object only as itself
        return self._suite_spec if isinstance(self._suite_spec, str | Path) else self.suite

    def grade(self) -> str:
        """Grade the recorded attempts into one stored run (done on leaving the `with`); returns its id."""
        self.run_id = grade_trajectories(self._graded_suite(), self.trajectories, self.db, **self._grade_options())
        return self.run_id

    async def grade_async(self) -> str:
        """`grade` for async code."""
        self.run_id = await grade_trajectories_async(self._graded_suite(), self.trajectories, self.db,
                                                     **self._grade_options())
        return self.run_id

    def __enter__(self) -> RecordedRun:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # An agent loop that failed part-way still stores what it recorded; an interrupt does not wait.
        if exc is None or (self.trajectories and isinstance(exc, Exception)):
            self.grade()

    async def __aenter__(self) -> RecordedRun:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if exc is None or (self.trajectories and isinstance(exc, Exception)):
            await self.grade_async()
