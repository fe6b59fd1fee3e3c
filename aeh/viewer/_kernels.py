"""The kernels `aeh view` runs: at most `max_kernels`, abandoned ones shut down, readiness said.

Voila starts a kernel for every request of the page. A page that is closed shuts its kernel
down (Voila's page script asks for it on unload), but a client that never runs the page's script
— a health check, a request that timed out, a browser killed mid-load — leaves its kernel behind,
and nothing bounded them. `BoundedKernelManager` is the multi-kernel manager `aeh view` gives
Voila (`VoilaConfiguration.multi_kernel_manager_class`):

- at most `max_kernels` kernels, the pre-heated one included; a request beyond that first shuts
  down abandoned kernels and kernels a page has left `reclaim_after` seconds ago or more (a closed
  tab: Voila's shutdown on unload does not always reach the server before the tab is gone, and such
  kernels held the slots for `abandon_after` seconds, so every few quick page loads waited 15–20 s),
  then waits up to `slot_wait` seconds for a slot, then gets 503 — never a new process;
- a kernel is abandoned when no page is connected to it, it is idle (not starting, not rendering),
  and for `abandon_after` seconds it has done nothing, has not been handed to a page, and no page
  has left it (the page it was started for never connected, or went away); they are also culled
  every `cull_every` seconds, so an idle server goes back to its pre-heated kernel. A pre-heated
  kernel is idle from the moment it has rendered the viewer: when Voila takes it from the pool for
  a page, its quiet time starts again, or a kernel that waited in the pool longer than
  `abandon_after` would be shut down in the second before the page connects to it (the page then
  asks for a kernel that no longer exists and never renders);
- a request whose client has gone (its connection closed while it waited for a slot, or before it
  asked) gets no kernel: it stops waiting and frees its place in the queue (`gone` counts them).
  Voila hands the kernel manager no handle on the request, so the handler is found on the stack of
  the coroutine that awaits `start_kernel`; a pool refill has none and is never refused for it;
- a pool refill nobody waits for yields to pages still loading: Voila starts it `fill_delay` (1 s)
  after a page took the pre-heated kernel, while the browser is still running the page's scripts,
  and the new kernel's start and render then shared two cores with it (the first paint came
  0.2–0.4 s later than with the refill held back). It starts once every page handed a rendered
  kernel in the last `refill_yield` seconds has been connected for `page_settle` seconds, or
  `refill_yield` seconds have passed (a client that never connects), or a request takes it from
  the pool. A kernel still starting or rendering for a page holds nothing back: that page's browser
  is waiting for it, with no scripts to run yet (pages loaded back to back wait for such kernels);
- readiness: once a kernel has rendered the viewer, the notebook's last cell calls
  `aeh.viewer.ready()` (`_ready.py`), and `aeh view` prints its address only then.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from datetime import UTC, datetime
from typing import Any

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from tornado.ioloop import PeriodicCallback
from tornado.web import HTTPError, RequestHandler
from traitlets import Float, Int

__all__ = ["BoundedKernelManager"]


class BoundedKernelManager(AsyncMappingKernelManager):
    """Voila's kernels, bounded: a cap, a wait then 503 beyond it, and culling of abandoned kernels."""

    max_kernels = Int(4, config=True, help="Kernels alive at most, the pre-heated one included.")
    slot_wait = Float(10.0, config=True, help="Seconds a request waits for a free kernel before 503.")
    abandon_after = Float(20.0, config=True,
                          help="Seconds a kernel no page is connected to may stay idle before it is shut down.")
    cull_every = Float(5.0, config=True, help="Seconds between two sweeps for abandoned kernels.")
    reclaim_after = Float(2.0, config=True,
                          help="At the cap, seconds after its page left it that a kernel makes room for a new page.")
    refill_yield = Float(6.0, config=True,
                         help="Seconds at most a refill no request awaits is held back for pages still loading.")
    render_quiet = Float(0.5, config=True,
                         help="Seconds a kernel out of the pool is idle and quiet before it counts as rendered.")
    page_settle = Float(1.0, config=True,
                        help="Seconds after its page connected that a page counts as loaded (it paints ~0.4 s after).")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]  # jupyter_server's __init__ is unannotated
        self._sweeper: PeriodicCallback | None = None
        self._starting = 0  # kernels being started: they hold a slot before they are listed
        self._was_pooled: set[str] = set()  # the pool at the last look
        #: kernel → when (time.monotonic) it was last handed to a page, or a page left it
        self._touched: dict[str, float] = {}
        self._left: dict[str, float] = {}  # kernel → when (time.monotonic) its last page left it
        self._handed: dict[str, float] = {}  # kernel → when (time.monotonic) it was first seen out of the pool
        self._connected: dict[str, float] = {}  # kernel → when (time.monotonic) a page first connected to it
        self._culling: set[str] = set()  # being shut down: one shutdown each, however many sweeps see them
        #: kernels started in all, requests refused with 503, and requests whose client left first
        self.started = 0
        self.refused = 0
        self.gone = 0

    def _pooled(self) -> set[str]:
        """Kernels Voila keeps pre-heated for the next page (never abandoned: they wait on purpose)."""
        found: set[str] = set()
        for pool in getattr(self, "_pools", {}).values():
            for task in pool:
                if task.done() and not task.cancelled() and task.exception() is None:
                    found.add(str(task.result().get("kernel_id")))
        return found

    def notify_disconnect(self, kernel_id: str) -> None:
        """A page's connection to `kernel_id` closed: its quiet time starts now."""
        super().notify_disconnect(kernel_id)  # type: ignore[no-untyped-call]  # unannotated upstream
        self._touched[kernel_id] = time.monotonic()
        if self._kernel_connections.get(kernel_id, 0) <= 0:
            self._left[kernel_id] = time.monotonic()

    def notify_connect(self, kernel_id: str) -> None:
        """A page connected to `kernel_id` (again): it is no longer left."""
        super().notify_connect(kernel_id)  # type: ignore[no-untyped-call]  # unannotated upstream
        self._left.pop(kernel_id, None)
        self._connected.setdefault(kernel_id, time.monotonic())

    def _note_handed_out(self) -> set[str]:
        """The pool now; a kernel that has left it since the last look went to a page (Voila pops
        it for a request): its quiet time starts now, not when it finished pre-rendering."""
        pooled = self._pooled()
        now = time.monotonic()
        for kernel_id in self._was_pooled - pooled:
            self._touched[kernel_id] = now
        self._was_pooled = pooled
        listed = set(self.list_kernel_ids())
        for seen in (self._touched, self._left, self._handed, self._connected):
            for kernel_id in set(seen) - listed:
                del seen[kernel_id]
        return pooled

    def _rendered(self, kernel_id: str) -> bool:
        """Whether `kernel_id` has rendered the viewer: idle, and quiet for `render_quiet` seconds
        (between two cells of its render a kernel is idle for milliseconds)."""
        kernel = self._kernels.get(kernel_id)
        last = getattr(kernel, "last_activity", None)
        return (getattr(kernel, "execution_state", "idle") == "idle" and last is not None
                and (datetime.now(UTC) - last).total_seconds() >= self.render_quiet)

    def _pages_loading(self) -> bool:
        """Whether a page is still loading: a kernel out of the pool that has rendered the viewer
        (seen so less than `refill_yield` seconds ago) and no page has been connected to for
        `page_settle` seconds. A kernel still starting or rendering for a page does not count: that
        page's browser is waiting for it, with no scripts to run yet."""
        pooled, now = self._note_handed_out(), time.monotonic()
        loading = False
        for kernel_id in self.list_kernel_ids():
            if kernel_id in pooled or (kernel_id not in self._handed and not self._rendered(kernel_id)):
                continue
            handed = self._handed.setdefault(kernel_id, now)
            connected = self._connected.get(kernel_id, now)
            loading |= now - handed < self.refill_yield and now - connected < self.page_settle
        return loading

    def _waits_in_pool(self, task: asyncio.Task[Any] | None) -> bool:
        """Whether `task` (a refill) is still in Voila's pool: no request has taken it and awaits it."""
        return any(item is task for pool in getattr(self, "_pools", {}).values() for item in pool)

    async def _yield_to_loading_pages(self) -> None:
        """Hold a pool refill back while pages load, unless a request awaits it (see the module's doc)."""
        refill, deadline = asyncio.current_task(), time.monotonic() + self.refill_yield
        while self._waits_in_pool(refill) and self._pages_loading() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)

    def _abandoned(self, *, for_a_page: bool = False) -> list[str]:
        """Kernels to shut down: quiet for `abandon_after`; with `for_a_page` (a request waits at the
        cap) also those a page left `reclaim_after` ago."""
        pooled = self._note_handed_out()
        now, mono = datetime.now(UTC), time.monotonic()
        out = []
        for kernel_id in self.list_kernel_ids():
            if kernel_id in pooled or kernel_id in self._culling or self._kernel_connections.get(kernel_id, 0) > 0:
                continue
            kernel = self._kernels.get(kernel_id)
            if getattr(kernel, "execution_state", "idle") != "idle":
                continue  # still starting, or rendering the viewer (a pre-heated kernel before it joins its pool)
            last = getattr(kernel, "last_activity", None)
            if kernel is None or last is None:
                continue
            quiet = min((now - last).total_seconds(), mono - self._touched.get(kernel_id, -math.inf))
            left = for_a_page and kernel_id in self._left  # a page was connected, and went away
            if quiet >= self.abandon_after or (left and quiet >= self.reclaim_after):
                out.append(kernel_id)
        return out

    async def cull_abandoned(self, *, for_a_page: bool = False) -> int:
        """Shut down every abandoned kernel now (`for_a_page`: and those pages have left); how many."""
        gone = self._abandoned(for_a_page=for_a_page)
        for kernel_id in gone:
            self.log.info("aeh view: shutting down kernel %s (no page connected%s)", kernel_id,
                          " and a page needs its slot" if for_a_page else f" for {self.abandon_after:.0f} s")
            self._culling.add(kernel_id)
            try:
                await self.shutdown_kernel(kernel_id)  # type: ignore[no-untyped-call]  # unannotated upstream
            except (KeyError, HTTPError) as exc:  # the page's own shutdown (on unload) came first
                self.log.info("aeh view: kernel %s was already gone (%r)", kernel_id, exc)
            finally:
                self._culling.discard(kernel_id)
        return len(gone)

    def _start_sweeping(self) -> None:
        if self._sweeper is None and self.cull_every > 0:
            self._sweeper = PeriodicCallback(self.cull_abandoned, 1000 * self.cull_every)
            self._sweeper.start()

    def _refuse_if_gone(self, handler: RequestHandler | None) -> None:
        if handler is not None and _client_gone(handler):
            self.gone += 1
            self.log.info("aeh view: no kernel for %s: its client has gone", handler.request.uri)
            raise HTTPError(503, "the client closed its connection before a kernel was started")

    async def start_kernel(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]  # async, as Voila awaits it
        """A new kernel when there is room for one and its client is still there: else cull, wait,
        and refuse with 503."""
        self._start_sweeping()
        preheat = (kwargs.get("env") or {}).get("VOILA_PREHEAT") == "True"
        handler = None if preheat else _requesting_handler()
        if preheat:
            await self._yield_to_loading_pages()
        deadline = time.monotonic() + self.slot_wait
        while len(self.list_kernel_ids()) + self._starting >= self.max_kernels:
            self._refuse_if_gone(handler)
            if await self.cull_abandoned(for_a_page=True):
                continue
            if not preheat and time.monotonic() >= deadline:  # a refill of the pool waits its turn
                self.refused += 1
                raise HTTPError(503, f"aeh view runs at most {self.max_kernels} kernels and all are in use: "
                                     "close a tab of the viewer, or try again in a moment")
            await asyncio.sleep(0.25)
        self._refuse_if_gone(handler)
        self.started += 1
        self._starting += 1
        try:
            kernel_id: str = await super().start_kernel(*args, **kwargs)
        finally:
            self._starting -= 1
        return kernel_id


def _requesting_handler() -> RequestHandler | None:
    """The request handler whose coroutine awaits `start_kernel` (its frame is on the stack while
    `start_kernel` runs), or None when none does."""
    frame = sys._getframe(2)
    while frame is not None:
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, RequestHandler):
            return candidate
        frame = frame.f_back  # type: ignore[assignment]  # None ends the walk
    return None


def _client_gone(handler: RequestHandler) -> bool:
    """Whether the handler's client closed its connection (tornado notices a close while the
    request is served: the stream listens for it)."""
    stream = getattr(getattr(handler.request, "connection", None), "stream", None)
    closed = getattr(stream, "closed", None)
    return bool(closed()) if callable(closed) else False
