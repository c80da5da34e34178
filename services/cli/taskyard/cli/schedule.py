"""``taskyard schedule ...``: periodic tasks (ScheduleService)."""

from __future__ import annotations

import click


@click.group("schedule")
def schedule_group() -> None:
    """Create and operate periodic tasks."""
