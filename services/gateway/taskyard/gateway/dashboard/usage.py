"""``GET /api/limits``: the Limits page's feed, the busiest limits and their
usage, read once per ``REFRESH`` for every page at once.

However many pages show the limits, the gateway reads once per interval the
store's limits (``STORE_LIMITS``, with the version it knows: an unchanged
catalog is one cheap read and no copy) and the leading scheduler's usage of all
of them (``FlowGates`` with ``limits=["*"]``, waited for at most
``USAGE_TIMEOUT``), and sends the same encoded frame to every page when it
changed (and at least every ``IDLE`` seconds). A scheduler that does not
answer leaves the limits listed without their usage (``scheduler.answered``
false); a store that does not answer leaves the last limits read, marked stale.

Bounded: a frame carries at most ``MAX_SHOWN`` limits, the busiest (most units
in use, then most waiting, then most throttled, then by name), with how many
there are in all and how many are not shown; the store may hold 10,000
(``core.limits.MAX_LIMITS``), and converting and sending every one each second
would cost the gateway's event loop most of that second and every page a frame
of megabytes. The busiest are chosen on the messages as read, and only those
shown are converted (each limit once per catalog version). At most
``MAX_BUSIEST_KEYS`` busiest keys per limit; polling as hub.Feed (started by the
first page, stopped after the last), and a page that reads slowly skips to the
latest frame.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from google.protobuf import json_format

from taskyard.bus.v1 import flow_pb2
from taskyard.core import errors
from taskyard.gateway.dashboard.hub import Authorize, Feed, frame
from taskyard.v1 import limit_pb2

# Seconds between two reads of the limits and their usage.
REFRESH = 1.0
# Seconds the scheduler's usage is waited for: past it the page says no scheduler answered.
USAGE_TIMEOUT = 1.0
# A frame goes out at least this often (seconds), even when nothing changed.
IDLE = 5.0
# Limits a frame carries (the busiest); the others are counted, not sent.
MAX_SHOWN = 200
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
    """The store's limits as read, by name; a limit is converted to what a page shows
    only when it is shown, and once per version read."""

    version: int
    limits: Mapping[str, limit_pb2.Limit]
    # Each shown limit's JSON without usage, by name, filled as limits are shown.
    _entries: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, reply: flow_pb2.ReadLimitsReply) -> Catalog:
        return cls(version=reply.version, limits={limit.name: limit for limit in reply.limits})

    def entry(self, name: str) -> dict[str, Any]:
        entry = self._entries.get(name)
        if entry is None:
            entry = json_format.MessageToDict(self.limits[name])
            entry.pop("usage", None)  # the store keeps none; the scheduler's is added per frame
            self._entries[name] = entry
        return entry


def busiest(names: Iterable[str], by_name: Mapping[str, limit_pb2.LimitUsage], count: int) -> list[str]:
    """The ``count`` busiest of ``names``: most units in use, then most waiting, then
    most throttled, then by name (a limit without usage counts as idle)."""

    def rank(name: str) -> tuple[int, int, int, str]:
        # get, not []: indexing a map of messages would add the name to it.
        used = by_name.get(name)
        if used is None:
            return (0, 0, 0, name)
        return (-used.units_in_use, -used.waiting, -used.throttled, name)

    return heapq.nsmallest(count, names, key=rank)


def snapshot(
    catalog: Catalog | None,
    usage: flow_pb2.FlowGatesReply | None,
    *,
    at: float,
    store_error: str = "",
    scheduler_error: str = "",
) -> dict[str, Any]:
    """What every page is sent: the busiest limits (at most MAX_SHOWN, busiest first),
    each with its usage when the scheduler answered, how many limits there are and how
    many are not shown, and whether the store and the scheduler answered."""
    by_name: Mapping[str, limit_pb2.LimitUsage] = usage.usage if usage is not None else {}
    shown = []
    total = 0
    if catalog is not None:
        total = len(catalog.limits)
        for name in busiest(catalog.limits, by_name, MAX_SHOWN):
            used = by_name.get(name)
            shown.append({**catalog.entry(name), "usage": _usage(used) if used is not None else None})
    return {
        "at": round(at, 3),
        "limits": shown,
        "total": total,
        "notShown": total - len(shown),
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
