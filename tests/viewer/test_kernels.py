"""`BoundedKernelManager`: the cap, the wait and the 503, and which kernels count as abandoned
(kernel processes are stood in for; tests/browser/test_viewer_serving.py runs the real server)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from tornado.web import HTTPError

from aeh.viewer._kernels import BoundedKernelManager


@pytest.fixture
def manager(monkeypatch: pytest.MonkeyPatch) -> BoundedKernelManager:
    async def start(self: BoundedKernelManager, *args: Any, **kwargs: Any) -> str:
        kernel_id = str(uuid.uuid4())
        self._kernels[kernel_id] = SimpleNamespace(last_activity=datetime.now(UTC))
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
