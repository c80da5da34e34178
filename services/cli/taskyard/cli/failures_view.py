"""How dead letters, their groups and redrives look in a table (``taskyard failures``, ``redrive``)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.text import Text

from taskyard.cli.output import fields, table, when
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import task_pb2

# How much of a masked message a table shows (``-o json`` has all of it).
MESSAGE_CHARS = 80


def _short(text: str, limit: int = MESSAGE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def reason_name(value: int) -> str:
    return task_pb2.DeadLetterReason.Name(value).removeprefix("DEAD_LETTER_REASON_").lower().replace("_", "-")


def redrive_state(value: int) -> str:
    return fs.RedriveState.Name(value).removeprefix("REDRIVE_STATE_").lower()


def outcome_name(value: int) -> str:
    return fs.RedriveOutcome.Name(value).removeprefix("REDRIVE_OUTCOME_").lower()


def group_table(groups: Iterable[fs.FailureGroup]) -> RenderableType:
    return table(
        ("group", "count", "queue", "name", "error", "frame", "last seen"),
        (
            (
                g.group_id,
                str(g.count),
                g.queue,
                g.name,
                _short(f"{g.type}: {g.message}" if g.message else g.type),
                g.frame or "-",
                when(g, "last_seen", timespec="seconds"),
            )
            for g in groups
        ),
    )


def dead_letter_table(items: Iterable[fs.DeadLetter]) -> RenderableType:
    return table(
        ("task", "name", "queue", "reason", "attempt", "error", "failed at", "group"),
        (
            (
                d.task_id,
                d.name,
                d.queue,
                reason_name(d.reason),
                str(d.failure.attempt),
                _short(f"{d.failure.type}: {d.failure.message}"),
                when(d.failure, "failed_at", timespec="seconds") if d.HasField("failure") else "",
                d.group_id,
            )
            for d in items
        ),
    )


def redrive_detail(r: fs.Redrive) -> RenderableType:
    f = r.filter
    chosen = [
        f"{key}={value}"
        for key, value in (
            ("group", f.group_id),
            ("queue", f.queue),
            ("name", f.name),
            ("reason", reason_name(f.reason) if f.reason else ""),
            ("failed_after", when(f, "failed_after", timespec="seconds")),
            ("failed_before", when(f, "failed_before", timespec="seconds")),
        )
        if value
    ]
    chosen += [f"label {k}={v}" for k, v in sorted(f.labels.items())]
    if f.task_ids:
        chosen.append(f"{len(f.task_ids)} task ids")
    if f.all:
        chosen.append("all")
    rows: list[tuple[str, RenderableType]] = [
        ("id", r.id),
        ("state", redrive_state(r.state)),
        ("rate", f"{r.rate:g}/s"),
        ("filter", ", ".join(chosen) or "-"),
        ("progress", f"{r.requeued + r.skipped}/{r.matched} ({r.requeued} re-queued, {r.skipped} skipped)"),
        ("created_by", r.created_by),
        ("created_at", when(r, "created_at", timespec="seconds")),
        ("finished_at", when(r, "finished_at", timespec="seconds") or "-"),
    ]
    if r.note:
        rows.append(("note", r.note))
    return fields(rows)


def redrive_table(redrives: Iterable[fs.Redrive]) -> RenderableType:
    return table(
        ("id", "state", "rate", "matched", "requeued", "skipped", "created by", "created at"),
        (
            (
                r.id,
                redrive_state(r.state),
                f"{r.rate:g}/s",
                str(r.matched),
                str(r.requeued),
                str(r.skipped),
                r.created_by,
                when(r, "created_at", timespec="seconds"),
            )
            for r in redrives
        ),
    )


def item_table(items: Iterable[fs.RedriveItem]) -> RenderableType:
    return table(
        ("task", "outcome", "failed attempt", "new attempt", "at", "detail"),
        (
            (
                i.task_id,
                outcome_name(i.outcome),
                str(i.failed_attempt),
                str(i.new_attempt) if i.new_attempt else "-",
                when(i, "at"),
                i.detail,
            )
            for i in items
        ),
    )


def dry_run(reply: fs.RedriveResponse) -> RenderableType:
    """What a dry run found: the count, then the sample."""
    head = Text(f"{reply.matched} dead letters match (dry run: nothing was re-queued)")
    if not reply.sample:
        return head
    return Group(head, dead_letter_table(reply.sample))


def progress(r: fs.Redrive) -> str:
    """One line of ``redrive get --watch``."""
    return (
        f"{r.id} {redrive_state(r.state)}: {r.requeued + r.skipped}/{r.matched} "
        f"({r.requeued} re-queued, {r.skipped} skipped)"
    )
