"""Live adapters spread calls in flight over a few clients, so no connection pool grows large."""

from __future__ import annotations

import contextlib

import pytest
from adapters_support import MODEL, Reply, calc_task

from aeh.adapters._chat import CALLS_PER_CLIENT
from aeh.adapters.single_shot import SingleShotAdapter

pytestmark = pytest.mark.local_http


def test_a_new_client_only_when_every_client_is_full():
    adapter = SingleShotAdapter(model=MODEL, base_url="http://127.0.0.1:9/v1", api_key="k")
    with contextlib.ExitStack() as stack:
        first = [stack.enter_context(adapter.lease()) for _ in range(CALLS_PER_CLIENT)]
        assert all(c is adapter.client for c in first)
        second = stack.enter_context(adapter.lease())
        assert second is not adapter.client
        with adapter.lease() as third:
            assert third is second  # the second client has room: no third one
    with adapter.lease() as again:
        assert again is adapter.client  # released calls free the first client again
    assert adapter._more_clients == [second]


async def test_a_run_closes_every_client_it_opened(server, run_live):
    srv = server([Reply.text("126", delay_s=0.2)])
    opened = []

    class Counting(SingleShotAdapter):
        def _new_client(self):
            opened.append(super()._new_client())
            return opened[-1]

    adapter = Counting(model=MODEL, base_url=srv.base_url, api_key="k")
    res = run_live(None, [calc_task()], adapter=adapter, attempts=CALLS_PER_CLIENT + 4,
                   concurrency=CALLS_PER_CLIENT + 4)
    assert res.table.attempts_total == CALLS_PER_CLIENT + 4
    assert srv.max_in_flight == CALLS_PER_CLIENT + 4
    assert len(opened) == 2  # 12 calls at once: 8 on the first client, 4 on a second
    assert adapter._client is None and adapter._more_clients == []
    assert all(client.is_closed() for client in opened)
