"""Flow control's values as the client shows them: a task's use of a limit, a limit, its
live usage, a fairness key's weight, and the gate that holds a queued task back.

A task names the limits it takes units of at submit: ``limits={"openai": "customer:42"}``
(limit name to key, one unit each), or ``limits=[LimitUse(limit="tokens", key="c:42",
units=500)]`` for more units, or the ``taskyard.v1.LimitUse`` messages themselves.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from taskyard.v1 import limit_pb2


def _when(msg: Any, field: str) -> datetime.datetime | None:
    return getattr(msg, field).ToDatetime(tzinfo=datetime.UTC) if msg.HasField(field) else None


@dataclasses.dataclass(frozen=True, kw_only=True)
class LimitUse:
    """One limit a task takes ``units`` of (0 means 1) from the bucket ``key`` (per-key
    limits; a global limit ignores it)."""

    limit: str
    key: str = ""
    units: int = 0

    def to_proto(self) -> limit_pb2.LimitUse:
        return limit_pb2.LimitUse(limit=self.limit, key=self.key, units=self.units)

    @classmethod
    def from_proto(cls, u: limit_pb2.LimitUse) -> LimitUse:
        return cls(limit=u.limit, key=u.key, units=u.units)


# What ``limits=`` takes: {limit: key}, or a sequence of LimitUse (or its message).
LimitUses: TypeAlias = Mapping[str, str] | Sequence[LimitUse | limit_pb2.LimitUse]


def limit_uses(limits: LimitUses | None) -> list[limit_pb2.LimitUse]:
    """``limits=`` as the TaskSpec's messages, in the order given. The server checks the
    names, keys and units (INVALID_ARGUMENT); only the shape is checked here."""
    if not limits:
        return []
    if isinstance(limits, Mapping):
        out = []
        for name, key in limits.items():
            if not isinstance(name, str) or not isinstance(key, str):
                raise TypeError(
                    f"limits={{name: key}} takes str to str, got {type(name).__name__} "
                    f"to {type(key).__name__} (units: limits=[LimitUse(...)])"
                )
            out.append(limit_pb2.LimitUse(limit=name, key=key))
        return out
    if isinstance(limits, str):
        # A lone name would iterate as its letters.
        raise TypeError(f"limits= takes {{name: key}} or a sequence of LimitUse, got the str {limits!r}")
    out = []
    for i, use in enumerate(limits):
        if isinstance(use, LimitUse):
            out.append(use.to_proto())
        elif isinstance(use, limit_pb2.LimitUse):
            out.append(limit_pb2.LimitUse(limit=use.limit, key=use.key, units=use.units))
        else:
            raise TypeError(f"limits[{i}]: a LimitUse, got {type(use).__name__}")
    return out


@dataclasses.dataclass(frozen=True, kw_only=True)
class Rate:
    """``units`` per ``period``, in bursts of up to ``burst`` (0 means ``units``)."""

    units: int
    period: datetime.timedelta
    burst: int = 0


def _span(value: float | datetime.timedelta) -> datetime.timedelta:
    return value if isinstance(value, datetime.timedelta) else datetime.timedelta(seconds=value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Breaker:
    """A circuit breaker: it opens when ``failures`` attempts failed within ``window``
    (after at least ``min_attempts`` ended there; 0 means ``failures``), holds its key's
    tasks for ``cool_down``, then admits ``probes`` at once: a probe's success closes it,
    a failure opens it again. Durations in seconds or timedeltas."""

    failures: int
    window: float | datetime.timedelta = 60.0
    cool_down: float | datetime.timedelta = 30.0
    probes: int = 1
    min_attempts: int = 0

    def to_proto(self) -> limit_pb2.CircuitBreaker:
        out = limit_pb2.CircuitBreaker(
            failure_threshold=self.failures, half_open_probes=self.probes, min_attempts=self.min_attempts
        )
        out.window.FromTimedelta(_span(self.window))
        out.cool_down.FromTimedelta(_span(self.cool_down))
        return out

    @classmethod
    def from_proto(cls, m: limit_pb2.CircuitBreaker) -> Breaker:
        return cls(
            failures=m.failure_threshold,
            window=m.window.ToTimedelta() if m.HasField("window") else datetime.timedelta(seconds=60),
            cool_down=m.cool_down.ToTimedelta()
            if m.HasField("cool_down")
            else datetime.timedelta(seconds=30),
            probes=m.half_open_probes or 1,
            min_attempts=m.min_attempts,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class KeyUsage:
    key: str
    units_in_use: int
    waiting: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class LimitUsage:
    """The leading scheduler's live view of a limit: units held (concurrency) or admitted in
    the last period (rate); attempts admitted and held back since its term began; tasks
    waiting at it; keys with a bucket; the busiest keys (at most 10)."""

    units_in_use: int
    admitted: int
    throttled: int
    waiting: int
    keys: int
    busiest_keys: tuple[KeyUsage, ...]

    @classmethod
    def from_proto(cls, u: limit_pb2.LimitUsage) -> LimitUsage:
        return cls(
            units_in_use=u.units_in_use,
            admitted=u.admitted,
            throttled=u.throttled,
            waiting=u.waiting,
            keys=u.keys,
            busiest_keys=tuple(
                KeyUsage(key=k.key, units_in_use=k.units_in_use, waiting=k.waiting) for k in u.busiest_keys
            ),
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class LimitInfo:
    """A limit: exactly one of ``rate``, ``concurrency`` (its max units) and ``breaker`` is set.
    ``task_name`` is set for a limit a task declares (``@task(rate_limit=...)``), keyed by
    its argument ``key_argument``. ``usage`` is None when no scheduler answered."""

    name: str
    rate: Rate | None
    concurrency: int | None
    per_key: bool
    description: str
    task_name: str
    key_argument: str
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    usage: LimitUsage | None
    breaker: Breaker | None = None

    # Whose it is ("" the default tenant): an operator reading every tenant tells them apart by it.
    tenant: str = ""

    @classmethod
    def from_proto(cls, m: limit_pb2.Limit) -> LimitInfo:
        kind = m.WhichOneof("kind")
        return cls(
            name=m.name,
            rate=Rate(units=m.rate.units, period=m.rate.period.ToTimedelta(), burst=m.rate.burst)
            if kind == "rate"
            else None,
            concurrency=m.concurrency.max_units if kind == "concurrency" else None,
            per_key=m.per_key,
            description=m.description,
            task_name=m.task_name,
            key_argument=m.key_argument,
            created_at=_when(m, "created_at"),
            updated_at=_when(m, "updated_at"),
            usage=LimitUsage.from_proto(m.usage) if m.HasField("usage") else None,
            breaker=Breaker.from_proto(m.breaker) if kind == "breaker" else None,
            tenant=m.tenant,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class LimitPage:
    limits: tuple[LimitInfo, ...]
    next_page_token: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class KeyWeight:
    """A fairness key's share of its lane: weight 3 is served three tasks for every one
    of a key of weight 1 (keys without a weight have 1)."""

    key: str
    weight: int

    # Whose key it is ("" the default tenant).
    tenant: str = ""

    @classmethod
    def from_proto(cls, w: limit_pb2.KeyWeight) -> KeyWeight:
        return cls(key=w.key, weight=w.weight, tenant=w.tenant)


@dataclasses.dataclass(frozen=True, kw_only=True)
class FlowGate:
    """What holds a queued task back at admission (``Explanation.gate``): for
    RATE_LIMITED the limit, key and ``next_admission_at``; for CONCURRENCY_FULL the limit,
    key and up to 10 ``holder_ids``; for FAIR_SHARE its fairness ``key``, its ``position``
    within it and the other keys waiting (``keys_ahead``)."""

    limit: str
    key: str
    next_admission_at: datetime.datetime | None
    holder_ids: tuple[str, ...]
    position: int
    keys_ahead: int
    waited: datetime.timedelta | None

    @classmethod
    def from_proto(cls, g: limit_pb2.FlowGate) -> FlowGate:
        return cls(
            limit=g.limit,
            key=g.key,
            next_admission_at=_when(g, "next_admission_at"),
            holder_ids=tuple(g.holder_ids),
            position=g.position,
            keys_ahead=g.keys_ahead,
            waited=g.waited.ToTimedelta() if g.HasField("waited") else None,
        )
