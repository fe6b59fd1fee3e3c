"""`BoundedKernelManager`: the cap, the wait and the 503, and which kernels count as abandoned
(kernel processes are stood in for; tests/browser/test_viewer_serving.py runs the real server)."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from tornado.httpserver import HTTPServer
from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine
from tornado.netutil import bind_sockets
from tornado.web import Application, HTTPError, RequestHandler

from aeh.viewer._kernels import BoundedKernelManager, _client_gone


@pytest.fixture
def manager(monkeypatch: pytest.MonkeyPatch) -> BoundedKernelManager:
    async def start(self: BoundedKernelManager, *args: Any, **kwargs: Any) -> str:
        kernel_id = str(uuid.uuid4())
        self._kernels[kernel_id] = SimpleNamespace(last_activity=datetime.now(UTC))
        self._kernel_connections[kernel_id] = 0  # as jupyter_server's start_kernel does
        return kernel_id

    async def shutdown(self: BoundedKernelManager, kernel_id: str, *args: Any, **kwargs: Any) -> None:
        self._kernels.pop(kernel_id, None)

    monkeypatch.setattr(AsyncMappingKernelManager, "start_kernel", start)
    monkeypatch.setattr(AsyncMappingKernelManager, "shutdown_kernel", shutdown)
    return BoundedKernelManager(max_kernels=2, slot_wait=0.5, abandon_after=30, cull_every=0)


def _age(manager: BoundedKernelManager, kernel_id: str, seconds: float) -> None:
    manager._kernels[kernel_id].last_activity = datetime.now(UTC) - timedelta(seconds=seconds)


def test_beyond_the_cap_a_request_waits_then_gets_503_never_a_new_kernel(manager: BoundedKernelManager) -> None:
    async def go() -> None:
        first = await manager.start_kernel()
        await manager.start_kernel()
        manager._kernel_connections[first] = 1  # a page is connected to both: neither is abandoned
        with pytest.raises(HTTPError) as refused:
            await manager.start_kernel()
        assert refused.value.status_code == 503 and "at most 2 kernels" in str(refused.value.log_message)
        assert len(manager.list_kernel_ids()) == 2 and manager.started == 2 and manager.refused == 1

    asyncio.run(go())


def test_an_abandoned_kernel_makes_room_and_a_connected_or_busy_one_does_not(manager: BoundedKernelManager) -> None:
    async def go() -> None:
        connected, recent = await manager.start_kernel(), await manager.start_kernel()
        manager._kernel_connections[connected] = 1
        _age(manager, connected, 3600)  # idle for an hour, but a page is connected: kept
        assert manager._abandoned() == []
        _age(manager, recent, 31)  # no page, quiet past abandon_after …
        manager._kernels[recent].execution_state = "busy"  # … but still rendering the viewer: kept
        assert manager._abandoned() == []
        manager._kernels[recent].execution_state = "idle"  # rendered, and no page came: abandoned
        assert manager._abandoned() == [recent]
        third = await manager.start_kernel()  # at the cap: the abandoned one is shut down first
        assert set(manager.list_kernel_ids()) == {connected, third}

    asyncio.run(go())


def test_a_request_that_waits_gets_the_slot_a_closing_page_frees(manager: BoundedKernelManager) -> None:
    manager.slot_wait = 5

    async def go() -> None:
        first = await manager.start_kernel()
        await manager.start_kernel()
        for kernel_id in manager.list_kernel_ids():
            manager._kernel_connections[kernel_id] = 1

        async def close_first() -> None:
            await asyncio.sleep(0.3)
            await manager.shutdown_kernel(first)  # the page was closed: Voila shuts its kernel down

        closing = asyncio.create_task(close_first())
        third = await manager.start_kernel()
        await closing
        assert third in manager.list_kernel_ids() and len(manager.list_kernel_ids()) == 2

    asyncio.run(go())


def _pool(manager: BoundedKernelManager, *kernel_ids: str) -> list[asyncio.Future[dict[str, str]]]:
    """Voila's pool of pre-heated kernels (tasks whose result names the kernel)."""
    tasks = []
    for kernel_id in kernel_ids:
        task: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        task.set_result({"kernel_id": kernel_id})
        tasks.append(task)
    manager._pools = {"view.ipynb": tasks}  # type: ignore[attr-defined]  # Voila's subclass adds it
    return tasks


def test_a_kernel_taken_from_the_pool_is_not_culled_before_its_page_connects(manager: BoundedKernelManager) -> None:
    """The defect this guards: a pre-heated kernel that waited in the pool longer than abandon_after
    was shut down in the second between Voila handing it to a page and the page connecting."""
    async def go() -> None:
        heated = await manager.start_kernel()
        pool = _pool(manager, heated)
        _age(manager, heated, 3600)  # rendered the viewer an hour ago, waiting in the pool since
        assert manager._abandoned() == []  # in the pool: kept
        pool.pop(0)  # a request takes it (VoilaKernelManager.get_rendered_notebook)
        assert manager._abandoned() == []  # handed to a page just now: its page has abandon_after to connect
        manager._touched[heated] -= 31  # … and 31 s later no page has connected: abandoned
        assert manager._abandoned() == [heated]

    asyncio.run(go())


def _refill(manager: BoundedKernelManager) -> asyncio.Task[str]:
    """A pool refill as Voila starts one: a task in the pool that starts a pre-heated kernel."""
    task = asyncio.create_task(manager.start_kernel(env={"VOILA_PREHEAT": "True"}))
    manager._pools = {"view.ipynb": [task]}  # type: ignore[attr-defined]  # Voila's subclass adds it
    return task


def test_a_pool_refill_waits_until_the_page_that_took_the_kernel_has_loaded(manager: BoundedKernelManager) -> None:
    """The browser runs the page's scripts on the same cores: a refill started then delayed its paint."""
    manager.page_settle = 1.0  # margins of 0.9 s against a loaded machine's stalls

    async def go() -> None:
        taken = await manager.start_kernel()  # handed to a page: out of the pool, no page connected yet
        _age(manager, taken, 10)  # it rendered the viewer 10 s ago, in the pool
        refill = _refill(manager)
        await asyncio.sleep(0.5)
        assert not refill.done() and len(manager.list_kernel_ids()) == 1  # the page is loading: held back
        manager.notify_connect(taken)  # type: ignore[no-untyped-call]
        await asyncio.sleep(0.1)
        assert not refill.done()  # connected, not yet drawn
        await asyncio.wait_for(refill, 3.0)  # page_settle later the refill starts
        assert len(manager.list_kernel_ids()) == 2

    asyncio.run(go())


def test_a_refill_a_request_awaits_starts_at_once(manager: BoundedKernelManager) -> None:
    async def go() -> None:
        await manager.start_kernel()  # a page still loading
        refill = _refill(manager)
        manager._pools["view.ipynb"].pop(0)  # type: ignore[attr-defined]  # a request took it and awaits it
        await asyncio.wait_for(refill, 3.0)  # at once: a held refill waits refill_yield (6 s)

    asyncio.run(go())


def test_a_refill_waits_for_a_page_that_never_connects_only_refill_yield(manager: BoundedKernelManager) -> None:
    manager.refill_yield = 1.5

    async def go() -> None:
        stale = await manager.start_kernel()  # a health check's kernel: no page will ever connect to it
        _age(manager, stale, 10)
        refill = _refill(manager)
        await asyncio.sleep(0.3)
        assert not refill.done()
        await asyncio.wait_for(refill, 3.0)

    asyncio.run(go())


def test_a_kernel_still_rendering_for_a_page_holds_no_refill_back(manager: BoundedKernelManager) -> None:
    """Pages loaded back to back: a request took a refill before it had rendered, and its page waits
    for that render; the next refill starts at once, as Voila would, or the next page waits for both."""
    manager.max_kernels = 5

    async def go() -> None:
        rendering = await manager.start_kernel()
        manager._kernels[rendering].execution_state = "busy"
        await asyncio.wait_for(_refill(manager), 3.0)
        manager._kernels[rendering].execution_state = "idle"  # between two cells of the render
        await asyncio.wait_for(_refill(manager), 3.0)
        _age(manager, rendering, 10)  # rendered, and its page has still not connected: held back
        refill = _refill(manager)
        await asyncio.sleep(0.3)
        assert not refill.done()
        refill.cancel()

    asyncio.run(go())


def test_the_first_fill_of_the_pool_does_not_wait(manager: BoundedKernelManager) -> None:
    async def go() -> None:
        await asyncio.wait_for(_refill(manager), 3.0)  # no page has taken a kernel: nothing to yield to

    asyncio.run(go())


def test_a_kernel_a_page_left_is_culled_abandon_after_later(manager: BoundedKernelManager) -> None:
    async def go() -> None:
        kernel_id = await manager.start_kernel()
        manager.notify_connect(kernel_id)  # type: ignore[no-untyped-call]
        _age(manager, kernel_id, 3600)  # the page was open an hour without a click
        assert manager._abandoned() == []
        manager.notify_disconnect(kernel_id)  # it reloads, or closes
        assert manager._abandoned() == []
        manager._touched[kernel_id] -= 31
        assert manager._abandoned() == [kernel_id]

    asyncio.run(go())


def test_sweeps_that_overlap_shut_an_abandoned_kernel_down_once(manager: BoundedKernelManager,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    async def slow_shutdown(self: BoundedKernelManager, kernel_id: str, *args: Any, **kwargs: Any) -> None:
        calls.append(kernel_id)
        await asyncio.sleep(0.2)  # a kernel process takes a moment to exit
        del self._kernels[kernel_id]  # a second shutdown of the same kernel would raise KeyError

    monkeypatch.setattr(AsyncMappingKernelManager, "shutdown_kernel", slow_shutdown)

    async def go() -> None:
        kernel_id = await manager.start_kernel()
        _age(manager, kernel_id, 31)
        culled = await asyncio.gather(manager.cull_abandoned(), manager.cull_abandoned(), manager.cull_abandoned())
        assert calls == [kernel_id] and sorted(culled) == [0, 0, 1] and manager.list_kernel_ids() == []

    asyncio.run(go())


def test_at_the_cap_a_kernel_its_page_left_makes_room_seconds_later(manager: BoundedKernelManager) -> None:
    """A closed tab whose shutdown never reached the server held its slot for abandon_after (20 s):
    every few quick page loads waited that long. At the cap, a kernel a page left reclaim_after ago
    makes room; one handed out whose page has not connected yet, or whose page came back, does not."""
    manager.reclaim_after = 2

    async def go() -> None:
        closed, handed = await manager.start_kernel(), await manager.start_kernel()
        manager.notify_connect(closed)  # type: ignore[no-untyped-call]
        manager.notify_disconnect(closed)  # the tab closed; no shutdown came
        manager._touched[handed] = manager._touched[closed] = manager._left[closed] - 3
        _age(manager, closed, 3)
        _age(manager, handed, 3)
        assert manager._abandoned() == []  # the sweep waits abandon_after
        assert manager._abandoned(for_a_page=True) == [closed]  # a page waiting for a slot does not
        manager.notify_connect(closed)  # type: ignore[no-untyped-call]  # … unless the page came back
        assert manager._abandoned(for_a_page=True) == []
        manager.notify_disconnect(closed)
        manager._touched[closed] -= 3
        third = await manager.start_kernel()  # at the cap: the left kernel is shut down for it
        assert set(manager.list_kernel_ids()) == {handed, third}

    asyncio.run(go())


class _Page(RequestHandler):
    """A page request as Voila's handler serves it: it awaits `start_kernel` itself."""

    async def get_kernel(self, manager: BoundedKernelManager) -> str:
        return await manager.start_kernel()


def _page(*, client_left: bool) -> _Page:
    stream = SimpleNamespace(closed=lambda: client_left)
    connection = SimpleNamespace(stream=stream, set_close_callback=lambda callback: None)
    request = HTTPServerRequest(start_line=RequestStartLine("GET", "/", "HTTP/1.1"), connection=connection,
                                headers=HTTPHeaders({"Host": "127.0.0.1"}))
    return _Page(Application(), request)


def test_a_request_whose_client_left_gets_no_kernel_and_stops_waiting(manager: BoundedKernelManager) -> None:
    manager.slot_wait = 5

    async def go() -> None:
        for _ in range(2):  # at the cap, both kernels with a page connected
            manager._kernel_connections[await manager.start_kernel()] = 1
        began = time.monotonic()
        with pytest.raises(HTTPError) as refused:
            await _page(client_left=True).get_kernel(manager)
        assert refused.value.status_code == 503 and time.monotonic() - began < 1  # not slot_wait
        assert manager.gone == 1 and manager.refused == 0 and manager.started == 2

    asyncio.run(go())


def test_a_free_slot_starts_no_kernel_for_a_client_that_left(manager: BoundedKernelManager) -> None:
    async def go() -> None:
        with pytest.raises(HTTPError):
            await _page(client_left=True).get_kernel(manager)
        assert manager.list_kernel_ids() == [] and manager.gone == 1
        kernel_id = await _page(client_left=False).get_kernel(manager)  # a client still there
        assert manager.list_kernel_ids() == [kernel_id] and manager.started == 1

    asyncio.run(go())


def test_tornado_tells_a_handler_its_client_closed_the_connection() -> None:
    """What `_client_gone` reads is real: a client that sends a request and closes its socket is
    seen gone by the handler still serving it."""
    seen: list[bool] = []

    class Slow(RequestHandler):
        async def get(self) -> None:
            for _ in range(40):
                if _client_gone(self):
                    break
                await asyncio.sleep(0.05)
            seen.append(_client_gone(self))

    async def go() -> None:
        sockets = bind_sockets(0, "127.0.0.1")
        server = HTTPServer(Application([("/", Slow)]))
        server.add_sockets(sockets)
        port = sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.close()  # the client gives up
        for _ in range(60):
            if seen:
                break
            await asyncio.sleep(0.05)
        server.stop()

    asyncio.run(go())
    assert seen == [True]
