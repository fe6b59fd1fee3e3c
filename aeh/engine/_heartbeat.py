"""A running run's heartbeat: a thread that refreshes `runs.heartbeat_at` every few seconds, so
readers can tell a live run from one whose process died without a word."""

from __future__ import annotations

import contextlib
import datetime as dt
import threading

from aeh.store import RunWriter

__all__ = ["Heartbeat"]


class Heartbeat:
    """Refreshes the run's heartbeat every `every_s` seconds until `stop()`."""

    def __init__(self, store: RunWriter, run_id: str, every_s: float) -> None:
        self.store = store
        self.run_id = run_id
        self.every_s = max(0.05, every_s)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="aeh-heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop beating. Waits briefly: a beat stuck on a store lock must not hold up the run's end."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def _beat(self) -> None:
        while not self._stop.wait(self.every_s):
            stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            with contextlib.suppress(Exception):  # a missed beat is harmless; the next one retries
                self.store.update_run(self.run_id, heartbeat_at=stamp)
