"""``GET /api/limits``: the Limits page's feed, every limit and its usage, read
once per ``REFRESH`` for every page at once.

However many pages show the limits, the gateway reads once per interval the
store's limits (``STORE_LIMITS``, with the version it knows: an unchanged
catalog is one cheap read and no copy) and the leading scheduler's usage of all
of them (``FLOW_GATES`` with ``limits=["*"]``, waited for at most
``USAGE_TIMEOUT``), and sends the same encoded frame to every page when it
changed (and at least every ``IDLE`` seconds). A scheduler that does not
answer leaves the limits listed without their usage (``scheduler.answered``
false); a store that does not answer leaves the last limits read, marked stale.

Bounded: at most ``core.limits.MAX_LIMITS`` limits (what the store may hold),
``MAX_BUSIEST_KEYS`` busiest keys per limit; polling as hub.Feed (started by the
first page, stopped after the last), and a page that reads slowly skips to the
latest frame.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from google.protobuf import json_format

from taskyard.bus.v1 import flow_pb2
from taskyard.core import errors
from taskyard.core import limits as flow_limits
from taskyard.gateway.dashboard.hub import Authorize, Feed, frame
from taskyard.v1 import limit_pb2

# Seconds between two reads of the limits and their usage.
REFRESH = 1.0
# Seconds the scheduler's usage is waited for: past it the page says no scheduler answered.
USAGE_TIMEOUT = 1.0
# A frame goes out at least this often (seconds), even when nothing changed.
IDLE = 5.0
# Busiest keys shown per limit (the scheduler sends at most 10).
MAX_BUSIEST_KEYS = 10
# A page may read limits when its token may list them.
LIMITS_PATH = "/taskyard.v1.LimitService/ListLimits"
# The store's ReadLimits, and the leading scheduler's FlowGates.
ReadLimits = Callable[[flow_pb2.ReadLimitsRequest], Awaitable[flow_pb2.ReadLimitsReply]]
FlowGates = Callable[[flow_pb2.FlowGatesRequest], Awaitable[flow_pb2.FlowGatesReply]]


def _usage(usage: limit_pb2.LimitUsage) -> dict[str, Any]:
    trimmed = limit_pb2.LimitUsage()
    trimmed.CopyFrom(usage)
    del trimmed.busiest_keys[MAX_BUSIEST_KEYS:]
    return json_format.MessageToDict(trimmed, always_print_fields_with_no_presence=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Catalog:
    """The store's limits as a page shows them, converted once per version read."""

    version: int
    # By name, at most MAX_LIMITS, each the Limit's JSON without usage.
    entries: tuple[dict[str, Any], ...]
    more: bool

    @classmethod
    def of(cls, reply: flow_pb2.ReadLimitsReply) -> Catalog:
        limits = sorted(reply.limits, key=lambda lim: lim.name)
        entries = []
        for limit in limits[: flow_limits.MAX_LIMITS]:
            entry = json_format.MessageToDict(limit)
            entry.pop("usage", None)  # the store keeps none; the scheduler's is added per frame
            entries.append(entry)
        return cls(version=reply.version, entries=tuple(entries), more=len(limits) > flow_limits.MAX_LIMITS)


def snapshot(
    catalog: Catalog | None,
    usage: flow_pb2.FlowGatesReply | None,
    *,
    at: float,
    store_error: str = "",
    scheduler_error: str = "",
) -> dict[str, Any]:
    """What every page is sent: the limits by name (at most MAX_LIMITS), each with its
    usage when the scheduler answered, and whether the store and the scheduler did."""
    by_name: Mapping[str, limit_pb2.LimitUsage] = usage.usage if usage is not None else {}
    shown = []
    for entry in catalog.entries if catalog is not None else ():
        name = entry["name"]
        shown.append({**entry, "usage": _usage(by_name[name]) if name in by_name else None})
    return {
        "at": round(at, 3),
        "limits": shown,
        "more": catalog is not None and catalog.more,
        "store": {"answered": catalog is not None and not store_error, "error": store_error},
        "scheduler": {
            "answered": usage is not None,
            "term": usage.term if usage is not None else 0,
            "error": scheduler_error,
        },
    }


def _changed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    if old is None:
        return True
    return any(old[k] != new[k] for k in new if k != "at")


class UsageFeed(Feed):
    """The limits and their usage, polled once per interval while a page listens."""

    def __init__(
        self,
        read_limits: ReadLimits,
        flow_gates: FlowGates,
        *,
        authorize: Authorize | None = None,
        interval: float = REFRESH,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(authorize=authorize, name="dashboard-limits")
        self._read_limits = read_limits
        self._flow_gates = flow_gates
        self._interval = interval
        self._clock = clock
        self._catalog: Catalog | None = None
        self.last: dict[str, Any] | None = None
        self._last_frame: bytes | None = None
        self.reads = 0

    def greeting(self) -> bytes | None:
        # The last frame, however old: the page shows its time, and the next poll follows.
        return self._last_frame

    async def refresh(self) -> dict[str, Any]:
        """One read of the store's limits and one of the scheduler's usage."""
        self.reads += 1
        store_error = scheduler_error = ""
        known = self._catalog.version if self._catalog is not None else -1
        try:
            reply = await self._read_limits(flow_pb2.ReadLimitsRequest(known_version=known))
        except errors.TaskyardError as exc:
            store_error = f"{exc.code.name}: {exc.message}"
        else:
            if not reply.unchanged or self._catalog is None:
                self._catalog = Catalog.of(reply)
        usage: flow_pb2.FlowGatesReply | None = None
        try:
            async with asyncio.timeout(USAGE_TIMEOUT):
                usage = await self._flow_gates(flow_pb2.FlowGatesRequest(limits=["*"]))
        except TimeoutError:
            scheduler_error = f"no answer within {USAGE_TIMEOUT:g} s"
        except errors.TaskyardError as exc:
            scheduler_error = f"{exc.code.name}: {exc.message}"
        return snapshot(
            self._catalog,
            usage,
            at=self._clock(),
            store_error=store_error,
            scheduler_error=scheduler_error,
        )

    def publish(self, data: dict[str, Any]) -> bytes:
        self.last = data
        self._last_frame = frame("limits", "", data)
        return self.offer(self._last_frame)

    async def _poll(self) -> None:
        loop = asyncio.get_running_loop()
        sent = -IDLE
        while True:
            started = loop.time()
            data = await self.refresh()
            self._judge_tokens()
            if _changed(self.last, data) or started - sent >= IDLE:
                self.publish(data)
                sent = started
            await asyncio.sleep(max(0.0, started + self._interval - loop.time()))
