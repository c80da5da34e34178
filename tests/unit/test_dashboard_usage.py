"""The Limits page's feed without a gateway: the store's limits and the scheduler's
usage as one frame (the busiest 200, only those converted, the rest counted),
read once per interval however many pages listen, the catalog read again only
when its version moved, the limits still listed (without usage) when no
scheduler answers, and /api/limits open to tokens that may list limits only."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from google.protobuf import duration_pb2, json_format
from support.waiting import wait_until_async

from taskyard.bus.v1 import flow_pb2
from taskyard.core import errors
from taskyard.core import limits as flow_limits
from taskyard.gateway import auth
from taskyard.gateway.dashboard import hub, site, streams, usage
from taskyard.v1 import limit_pb2


def catalog(version: int = 1) -> flow_pb2.ReadLimitsReply:
    return flow_pb2.ReadLimitsReply(
        version=version,
        limits=[
            limit_pb2.Limit(
                name="payments",
                rate=limit_pb2.RateLimit(units=100, period=duration_pb2.Duration(seconds=1), burst=20),
                description="the payment provider's <quota>",
            ),
            limit_pb2.Limit(
                name="exports",
                concurrency=limit_pb2.ConcurrencyLimit(max_units=3),
                per_key=True,
                task_name="export",
                key_argument="customer_id",
            ),
        ],
    )


def gates(keys: int = 12) -> flow_pb2.FlowGatesReply:
    busiest = [limit_pb2.KeyUsage(key=f"customer:{i}", units_in_use=1, waiting=keys - i) for i in range(keys)]
    return flow_pb2.FlowGatesReply(
        term=7,
        usage={
            "exports": limit_pb2.LimitUsage(
                units_in_use=keys, admitted=40, throttled=9, waiting=5, keys=keys, busiest_keys=busiest
            )
        },
    )


class Upstream:
    """The store's ReadLimits and the scheduler's FlowGates, counting their calls; the
    scheduler may be made silent (never answers) or refusing."""

    def __init__(self) -> None:
        self.catalog = catalog()
        self.reads: list[flow_pb2.ReadLimitsRequest] = []
        self.asks: list[flow_pb2.FlowGatesRequest] = []
        self.silent = False
        self.refusing = False

    async def read_limits(self, request: flow_pb2.ReadLimitsRequest) -> flow_pb2.ReadLimitsReply:
        self.reads.append(request)
        if request.known_version == self.catalog.version:
            return flow_pb2.ReadLimitsReply(version=self.catalog.version, unchanged=True)
        return self.catalog

    async def flow_gates(self, request: flow_pb2.FlowGatesRequest) -> flow_pb2.FlowGatesReply:
        self.asks.append(request)
        if self.silent:
            await asyncio.Event().wait()
        if self.refusing:
            raise errors.TaskyardError(errors.Code.UNAVAILABLE, "NO_RESPONDER", "no scheduler")
        return gates()


def test_a_frame_lists_every_limit_by_name_with_its_numbers_and_its_busiest_keys() -> None:
    data = usage.snapshot(usage.Catalog.of(catalog()), gates(), at=1.5)
    assert [lim["name"] for lim in data["limits"]] == ["exports", "payments"]
    exports, payments = data["limits"]
    assert payments["rate"] == {"units": "100", "period": "1s", "burst": "20"}
    assert payments["usage"] is None  # the scheduler reported none for it
    assert exports["concurrency"] == {"maxUnits": "3"} and exports["perKey"] is True
    assert exports["taskName"] == "export" and exports["keyArgument"] == "customer_id"
    assert exports["usage"]["unitsInUse"] == "12" and exports["usage"]["throttled"] == "9"
    assert [k["key"] for k in exports["usage"]["busiestKeys"]] == [f"customer:{i}" for i in range(10)]
    assert data["scheduler"] == {"answered": True, "term": 7, "error": ""}
    silent = usage.snapshot(usage.Catalog.of(catalog()), None, at=1.5, scheduler_error="no answer within 1 s")
    assert [lim["usage"] for lim in silent["limits"]] == [None, None]
    assert silent["scheduler"]["answered"] is False


def many(count: int) -> flow_pb2.ReadLimitsReply:
    reply = flow_pb2.ReadLimitsReply(version=1)
    for i in range(count):
        limit = reply.limits.add(name=f"limit-{i:05d}", per_key=True, description="d" * 200)
        limit.concurrency.max_units = 3
    return reply


def test_a_frame_carries_the_busiest_limits_first_and_counts_those_not_shown() -> None:
    shown = usage.MAX_SHOWN
    reply = many(shown + 5)
    last = [f"limit-{i:05d}" for i in range(shown + 5)][-4:]
    reply_usage = flow_pb2.FlowGatesReply(
        term=3,
        usage={
            last[3]: limit_pb2.LimitUsage(units_in_use=5),
            last[2]: limit_pb2.LimitUsage(units_in_use=5, waiting=2),
            last[1]: limit_pb2.LimitUsage(waiting=9),
            last[0]: limit_pb2.LimitUsage(throttled=4),
            "limit-00000": limit_pb2.LimitUsage(),
        },
    )
    data = usage.snapshot(usage.Catalog.of(reply), reply_usage, at=1.0)
    names = [lim["name"] for lim in data["limits"]]
    # In use, then waiting, then throttled, then by name (idle or without usage alike).
    assert names[:4] == [last[2], last[3], last[1], last[0]]
    assert names[4:] == [f"limit-{i:05d}" for i in range(shown - 4)]
    assert data["total"] == shown + 5 and data["notShown"] == 5
    assert data["limits"][0]["usage"]["waiting"] == "2" and data["limits"][5]["usage"] is None
    # Without the scheduler: the first by name.
    silent = usage.snapshot(usage.Catalog.of(reply), None, at=1.0)
    assert [lim["name"] for lim in silent["limits"]] == [f"limit-{i:05d}" for i in range(shown)]
    assert silent["notShown"] == 5
    few = usage.snapshot(usage.Catalog.of(catalog()), gates(), at=1.0)
    assert few["total"] == 2 and few["notShown"] == 0
    assert usage.snapshot(None, None, at=1.0, store_error="UNAVAILABLE")["total"] == 0


def test_every_refresh_of_the_most_limits_a_store_holds_converts_only_those_shown(monkeypatch: Any) -> None:
    reply = many(flow_limits.MAX_LIMITS)
    busy = flow_pb2.FlowGatesReply(term=1)
    for i, limit in enumerate(reply.limits):
        used = busy.usage[limit.name]
        used.units_in_use, used.admitted, used.keys = 3, 1000 + i, 100
        for k in range(10):
            used.busiest_keys.add(key=f"customer:{k:04d}".ljust(40, "x"), units_in_use=3, waiting=k)
    converted: list[str] = []
    to_dict = json_format.MessageToDict

    def counting(message: Any, **kwargs: Any) -> dict[str, Any]:
        converted.append(message.DESCRIPTOR.name)
        return to_dict(message, **kwargs)

    monkeypatch.setattr(json_format, "MessageToDict", counting)
    catalog_read = usage.Catalog.of(reply)
    assert converted == []  # reading the store's limits converts none
    first = usage.snapshot(catalog_read, busy, at=1.0)
    assert converted.count("Limit") == usage.MAX_SHOWN and converted.count("LimitUsage") == usage.MAX_SHOWN
    assert (
        len(first["limits"]) == usage.MAX_SHOWN
        and first["notShown"] == flow_limits.MAX_LIMITS - usage.MAX_SHOWN
    )
    # The next refresh of the same catalog converts the shown usage again, its limits not.
    converted.clear()
    usage.snapshot(catalog_read, busy, at=2.0)
    assert converted.count("Limit") == 0 and converted.count("LimitUsage") == usage.MAX_SHOWN
    # One frame for every page: the shown limits' size, not the catalog's.
    sent = hub.frame("limits", "", first)
    assert len(sent) < usage.MAX_SHOWN * 2_000 < reply.ByteSize()


async def test_one_read_per_interval_for_every_page_and_the_catalog_again_only_when_changed() -> None:
    upstream = Upstream()
    feed = usage.UsageFeed(upstream.read_limits, upstream.flow_gates, interval=0.01)
    pages = [hub.Listener(None) for _ in range(5)]
    for page in pages:
        feed._join(page)
    assert feed.polls_started == 1
    first = [await asyncio.wait_for(p.next(), 2) for p in pages]
    assert first[0] is not None and first[0].startswith(b"event: limits\n")
    assert all(f is first[0] for f in first)  # one encoding for all
    await wait_until_async(lambda: feed.reads >= 4, 5, "four refreshes")
    # Nothing changed (but the time read): nothing more was sent.
    assert not any(p._ready.is_set() for p in pages)
    upstream.catalog = catalog(version=2)
    del upstream.catalog.limits[1]
    changed = await asyncio.wait_for(pages[0].next(), 2)
    assert changed is not None and b'"name":"exports"' not in changed
    await feed.close()
    # One read of each upstream a refresh, whatever the number of pages.
    assert len(upstream.reads) == len(upstream.asks) == feed.reads
    assert [r.known_version for r in upstream.reads[:2]] == [-1, 1]
    assert all(list(a.limits) == ["*"] and not a.task_ids for a in upstream.asks)


@pytest.mark.parametrize("how", ["silent", "refusing"])
async def test_without_a_scheduler_the_limits_are_listed_without_usage(how: str, monkeypatch: Any) -> None:
    monkeypatch.setattr(usage, "USAGE_TIMEOUT", 0.05)
    upstream = Upstream()
    setattr(upstream, how, True)
    feed = usage.UsageFeed(upstream.read_limits, upstream.flow_gates, interval=0.01)
    page = hub.Listener(None)
    feed._join(page)
    data = await asyncio.wait_for(page.next(), 2)
    await feed.close()
    assert data is not None
    sent = json.loads(data.split(b"data: ", 1)[1])
    assert sent["scheduler"]["answered"] is False and sent["scheduler"]["error"]
    assert [lim["name"] for lim in sent["limits"]] == ["exports", "payments"]
    assert all(lim["usage"] is None for lim in sent["limits"])


async def test_a_page_joining_later_gets_the_last_frame_at_once() -> None:
    upstream = Upstream()
    feed = usage.UsageFeed(upstream.read_limits, upstream.flow_gates, interval=0.01)
    early = hub.Listener(None)
    feed._join(early)
    sent = await asyncio.wait_for(early.next(), 2)
    late = hub.Listener(None)
    feed._join(late)
    assert await asyncio.wait_for(late.next(), 2) is sent  # before the next refresh
    await feed.close()


async def test_api_limits_takes_a_token_that_may_list_limits(tmp_path: Path) -> None:
    reader, submitter = "rd-" + "r" * 20, "sb-" + "s" * 20
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{reader}  read  viewer\n{submitter}  submit  producer\n")
    authorize = site._authorizer(auth.Authenticator(auth.TokensFile(str(tokens))), usage.LIMITS_PATH)
    upstream = Upstream()
    feed = usage.UsageFeed(upstream.read_limits, upstream.flow_gates, authorize=authorize, interval=0.01)
    live = streams.Streams(None, None, limit=64, per_client=8)  # type: ignore[arg-type]
    app = web.Application()
    app.router.add_get("/api/limits", functools.partial(live.feed, feed))
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        refused = await client.get("/api/limits", headers={"Authorization": f"Bearer {submitter}"})
        assert refused.status == 403 and (await refused.json())["reason"] == "SCOPE_MISSING"
        assert (await client.get("/api/limits")).status == 401
        assert not upstream.reads  # a refused page costs no read
        reply = await client.get("/api/limits", headers={"Authorization": f"Bearer {reader}"})
        assert reply.status == 200
        async with asyncio.timeout(5):
            seen = b""
            while b"event: limits" not in seen:
                seen += await reply.content.readany()
        assert b'"name":"payments"' in seen and live.slots.open == 1
        reply.close()
    await feed.close()
