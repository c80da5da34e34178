"""How a periodic schedule looks in a table (``taskyard schedule ...``)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import RenderableType

from taskyard.cli import durations
from taskyard.cli.output import fields, payload, table, when
from taskyard.v1 import schedule_pb2, task_pb2


def timing(s: schedule_pb2.Schedule) -> str:
    """``cron */5 * * * *`` or ``every 1m30s``."""
    if s.WhichOneof("spec") == "cron":
        return f"cron {s.cron}"
    return f"every {durations.format_proto(s.interval)}"


def overlap_name(s: schedule_pb2.Schedule) -> str:
    return "allow" if s.overlap == schedule_pb2.OVERLAP_POLICY_ALLOW else "skip"


def _run(spec: task_pb2.TaskSpec) -> str:
    text = spec.name
    if spec.args.values:
        text += f" args={payload(spec.args)}"
    if spec.kwargs.fields:
        text += f" kwargs={payload(spec.kwargs)}"
    return text


def schedule_detail(s: schedule_pb2.Schedule) -> RenderableType:
    rows: list[tuple[str, RenderableType]] = [
        ("id", s.id),
        ("name", s.name),
        ("task", _run(s.task)),
        ("when", f"{timing(s)} ({s.time_zone or 'UTC'})"),
        ("overlap", overlap_name(s)),
        ("paused", "yes" if s.paused else "no"),
        ("declared", "yes" if s.declared else "no"),
        ("times_run", str(s.times_run)),
        ("times_skipped", str(s.times_skipped)),
        ("next_run_at", when(s, "next_run_at", timespec="seconds") or "-"),
        ("last_run_at", when(s, "last_run_at", timespec="seconds") or "-"),
        ("last_task_id", s.last_task_id or "-"),
    ]
    if s.task.queue:
        rows.insert(3, ("queue", s.task.queue))
    return fields(rows)


def schedule_table(schedules: Iterable[schedule_pb2.Schedule]) -> RenderableType:
    return table(
        ("name", "id", "task", "when", "time zone", "next run", "runs"),
        (
            (
                s.name,
                s.id,
                s.task.name,
                timing(s),
                s.time_zone or "UTC",
                "paused" if s.paused else when(s, "next_run_at", timespec="seconds"),
                str(s.times_run),
            )
            for s in schedules
        ),
    )
