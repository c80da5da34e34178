"""``taskyard failures ...``: dead letters grouped by cause (FailureService), and their purge.

``groups`` lists the groups (queue, task name and fingerprint), most dead
letters first; ``list`` the dead letters a filter matches (typically
``--group``); ``purge`` deletes them and asks first (confirmation.py).
Redriving them is ``taskyard redrive`` (redrive.py). docs/failures.md.
"""

from __future__ import annotations

from typing import Any

import click
from rich.text import Text

from taskyard.cli.confirmation import confirm, yes_option
from taskyard.cli.connection import target_options
from taskyard.cli.errors import CommandGroup
from taskyard.cli.failure_options import failure_filter, filter_options
from taskyard.cli.failures_view import dead_letter_table, group_table
from taskyard.cli.gateway import gateway
from taskyard.cli.output import Output, output_option
from taskyard.v1 import failure_service_pb2 as fs


@click.group("failures", cls=CommandGroup)
@target_options
def failures_group() -> None:
    """Dead letters, grouped by cause: list them, purge them (redrive: `taskyard redrive`)."""


def _pages_note(output: Output, token: str) -> None:
    if token:
        output.note(f"(more: --all-pages, or page token {token})")


@failures_group.command("groups")
@filter_options(with_all=False)
@click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True)
@click.option("--all-pages", is_flag=True, help="Every page, not only the first.")
@output_option
@target_options
def groups_command(page_size: int, all_pages: bool, output: Output, **values: Any) -> None:
    """Groups of dead letters (queue, task name, fingerprint), most dead letters first."""
    f = failure_filter(values)
    reply = fs.ListFailureGroupsResponse()
    request = fs.ListFailureGroupsRequest(filter=f, page_size=page_size)
    with gateway() as g:
        while True:
            page = g.call(g.failures.ListFailureGroups, request)
            reply.groups.extend(page.groups)
            reply.next_page_token = request.page_token = page.next_page_token
            if not all_pages or not page.next_page_token:
                break
    output.emit(reply, lambda r: group_table(r.groups))
    _pages_note(output, reply.next_page_token)


@failures_group.command("list")
@filter_options()
@click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True)
@click.option("--all-pages", is_flag=True, help="Every page, not only the first.")
@output_option
@target_options
def list_command(page_size: int, all_pages: bool, output: Output, **values: Any) -> None:
    """Dead letters matching the options (e.g. --group ID), newest failure first."""
    f = failure_filter(values)
    reply = fs.ListFailuresResponse()
    request = fs.ListFailuresRequest(filter=f, page_size=page_size)
    with gateway() as g:
        while True:
            page = g.call(g.failures.ListFailures, request)
            reply.failures.extend(page.failures)
            reply.next_page_token = request.page_token = page.next_page_token
            if not all_pages or not page.next_page_token:
                break
    output.emit(reply, lambda r: dead_letter_table(r.failures))
    _pages_note(output, reply.next_page_token)


@failures_group.command("purge")
@filter_options()
@click.option("--dry-run", is_flag=True, help="Count them; delete nothing.")
@yes_option
@output_option
@target_options
def purge_command(dry_run: bool, yes: bool, output: Output, **values: Any) -> None:
    """Delete the dead letters matching the options (with their logs), now."""
    f = failure_filter(values)
    if not dry_run:
        confirm("Delete the dead letters matching this filter, with their logs?", yes=yes)
    with gateway() as g:
        reply = g.call(g.failures.PurgeDeadLetters, fs.PurgeDeadLettersRequest(filter=f, dry_run=dry_run))
    verb = "would purge" if dry_run else "purged"
    output.emit(reply, lambda r: Text(f"{verb} {r.purged} dead letters"))
