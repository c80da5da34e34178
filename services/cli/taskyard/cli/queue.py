"""``taskyard queue ...``: the seed's queue commands (status, start, clear, retry, stats, servers)."""

from __future__ import annotations

import click


@click.group("queue")
def queue_group() -> None:
    """Operate queues and the worker pools that serve them."""
