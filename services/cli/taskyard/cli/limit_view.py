"""How limits, their usage, fairness weights and a task's flow look in a table
(``taskyard limit ...``, ``task get``, ``task explain``)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import RenderableType

from taskyard.cli import durations
from taskyard.cli.output import fields, table, when
from taskyard.core import limits as rules
from taskyard.v1 import limit_pb2

Row = tuple[str, RenderableType]

# Largest first: a period prints in the largest unit it is a whole number of.
_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000), ("ms", 1))


def rate_text(rate: limit_pb2.RateLimit) -> str:
    """``100/s``, ``10/min``, ``5/2s``: as ``--rate`` takes it back."""
    ms = rules.period_ms(rate)
    for unit, size in _UNITS:
        if ms and ms % size == 0:
            count = ms // size
            return f"{rate.units}/{unit}" if count == 1 else f"{rate.units}/{count}{unit}"
    return f"{rate.units}/{ms}ms"


def kind(limit: limit_pb2.Limit) -> str:
    return limit.WhichOneof("kind") or "-"


def amount(limit: limit_pb2.Limit) -> str:
    """A rate with its burst, or a concurrency's units at once."""
    if limit.HasField("rate"):
        burst = f", burst {limit.rate.burst}" if limit.rate.burst else ""
        return rate_text(limit.rate) + burst
    if limit.HasField("breaker"):
        b = limit.breaker
        window = rate_text(limit_pb2.RateLimit(units=b.failure_threshold, period=b.window))
        if not b.HasField("window"):
            window = f"{b.failure_threshold}/{rules.DEFAULT_WINDOW_MS // 1000}s"
        cool_down = rules.cool_down_ms(b) / 1000
        return f"opens at {window} failed, cool-down {cool_down:g}s, {rules.probes_of(b)} probe(s)"
    return f"{limit.concurrency.max_units} at once" if limit.HasField("concurrency") else "-"


def _declared_by(limit: limit_pb2.Limit) -> str:
    if not limit.task_name:
        return "-"
    return limit.task_name + (f" (key: argument {limit.key_argument})" if limit.key_argument else "")


def _usage(usage: limit_pb2.LimitUsage) -> str:
    return (
        f"{usage.units_in_use} in use, {usage.waiting} waiting, {usage.admitted} admitted, "
        f"{usage.throttled} throttled, {usage.keys} keys"
    )


def limit_detail(limit: limit_pb2.Limit) -> RenderableType:
    rows: list[Row] = [
        ("name", limit.name),
        ("kind", kind(limit)),
        ("limit", amount(limit)),
        ("per_key", "yes" if limit.per_key else "no"),
        ("declared_by", _declared_by(limit)),
    ]
    if limit.description:
        rows.append(("description", limit.description))
    rows.append(
        ("usage", _usage(limit.usage) if limit.HasField("usage") else "unknown (no scheduler answered)")
    )
    if limit.usage.busiest_keys:
        rows.append(
            (
                "busiest_keys",
                ", ".join(
                    f"{k.key or '(empty)'}: {k.units_in_use} in use, {k.waiting} waiting"
                    for k in limit.usage.busiest_keys
                ),
            )
        )
    for key in ("created_at", "updated_at"):
        if limit.HasField(key):
            rows.append((key.removesuffix("_at"), when(limit, key, timespec="seconds")))
    return fields(rows)


def limit_table(limits: Iterable[limit_pb2.Limit]) -> RenderableType:
    def used(limit: limit_pb2.Limit, field: str) -> str:
        return str(getattr(limit.usage, field)) if limit.HasField("usage") else "-"

    return table(
        ("name", "kind", "limit", "per key", "declared by", "in use", "waiting", "throttled"),
        (
            (
                m.name,
                kind(m),
                amount(m),
                "yes" if m.per_key else "no",
                m.task_name or "-",
                used(m, "units_in_use"),
                used(m, "waiting"),
                used(m, "throttled"),
            )
            for m in limits
        ),
    )


def weight_table(weights: Iterable[limit_pb2.KeyWeight]) -> RenderableType:
    return table(("key", "weight"), ((w.key, str(w.weight)) for w in weights))


def uses_text(uses: Iterable[limit_pb2.LimitUse]) -> str:
    """A task's limit uses as ``--limit`` takes them: ``api=customer:42, tokens*500``."""
    return ", ".join(
        u.limit + (f"*{u.units}" if u.units > 1 else "") + (f"={u.key}" if u.key else "") for u in uses
    )


def gate_rows(gate: limit_pb2.FlowGate) -> list[Row]:
    """What holds a queued task at admission (``task explain``)."""
    rows: list[Row] = []
    if gate.limit:
        rows.append(("limit", gate.limit))
    rows.append(("key", gate.key or "(empty)"))
    if gate.HasField("next_admission_at"):
        rows.append(("next_admission", when(gate, "next_admission_at")))
    if gate.holder_ids:
        rows.append(("held_by", ", ".join(gate.holder_ids)))
    if not gate.limit:  # fair share: its place among its key's tasks and the other keys
        rows.append(("position", str(gate.position)))
        rows.append(("keys_ahead", str(gate.keys_ahead)))
    if gate.HasField("waited"):
        rows.append(("waited", durations.format_proto(gate.waited)))
    return rows
