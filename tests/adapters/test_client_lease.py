"""Which clients carry the calls in flight: one for aeh's own pool, a few for httpx and the SDK."""

from __future__ import annotations

import contextlib

import pytest
from adapters_support import MODEL, Reply, calc_task

from aeh.adapters._chat import CALLS_PER_CLIENT
from aeh.adapters._http_chat import HttpChatClient
from aeh.adapters.single_shot import SingleShotAdapter

pytestmark = pytest.mark.local_http


@pytest.mark.parametrize("http_client", ["openai", "httpx"])
def test_a_new_client_only_when_every_client_is_full(http_client):
    adapter = SingleShotAdapter(model=MODEL, base_url="http://127.0.0.1:9/v1", api_key="k", http_client=http_client)
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


def test_aehs_own_pool_serves_every_call_from_one_client():
    adapter = SingleShotAdapter(model=MODEL, base_url="http://127.0.0.1:9/v1", api_key="k")
    with contextlib.ExitStack() as stack:
        leased = [stack.enter_context(adapter.lease()) for _ in range(4 * CALLS_PER_CLIENT)]
    assert isinstance(adapter.client, HttpChatClient) and adapter.client.transport == "aeh"
    assert all(c is adapter.client for c in leased)
    assert adapter._more_clients == []


@pytest.mark.parametrize(("http_client", "clients"), [("aeh", 1), ("httpx", 2), ("openai", 2)])
async def test_a_run_closes_every_client_it_opened(server, run_live, http_client, clients):
    srv = server([Reply.text("126")], hold_until_in_flight=CALLS_PER_CLIENT + 4)  # all 12 at once, at any load
    opened = []

    class Counting(SingleShotAdapter):
        def _new_client(self):
            opened.append(super()._new_client())
            return opened[-1]

    adapter = Counting(model=MODEL, base_url=srv.base_url, api_key="k", http_client=http_client)
    res = run_live(None, [calc_task()], adapter=adapter, attempts=CALLS_PER_CLIENT + 4,
                   concurrency=CALLS_PER_CLIENT + 4)
    assert res.table.attempts_total == CALLS_PER_CLIENT + 4
    assert srv.max_in_flight == CALLS_PER_CLIENT + 4
    # 12 calls at once: aeh's pool holds 12 connections in one client; httpx and the SDK put
    # 8 on the first client and 4 on a second.
    assert len(opened) == clients
    if http_client == "aeh":
        assert opened[0].connections_opened == CALLS_PER_CLIENT + 4
    assert adapter._client is None and adapter._more_clients == []
    assert all(client.is_closed() for client in opened)
