"""``taskyard redrive ...``: re-queue dead letters at a rate, and steer and audit the redrives.

``taskyard redrive --group ID --rate 50`` starts one (``--dry-run``: count and
sample only); the leading scheduler runs it, at most ``--rate`` tasks a second,
and it goes on across restarts. Without ``--yes`` it first shows how many match
(a dry run) and asks. ``get ID --watch`` follows it to the end; ``pause``,
``resume`` and ``cancel`` steer it; ``list`` and ``items ID`` are the audit
(who, when, which filter, what became of each task). docs/failures.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import click

from taskyard.cli.confirmation import confirm, yes_option
from taskyard.cli.connection import target_options
from taskyard.cli.errors import EXIT_USAGE, CommandGroup, fail
from taskyard.cli.failure_options import failure_filter, filter_options
from taskyard.cli.failures_view import dry_run, item_table, progress, redrive_detail, redrive_table
from taskyard.cli.gateway import Gateway, gateway
from taskyard.cli.output import Output, output_option
from taskyard.v1 import failure_service_pb2 as fs

FINISHED = frozenset({fs.REDRIVE_STATE_DONE, fs.REDRIVE_STATE_CANCELLED})


@click.group("redrive", cls=CommandGroup, invoke_without_command=True, subcommand_metavar="[COMMAND]")
@filter_options()
@click.option(
    "--rate", type=float, default=None, help="Tasks a second, at most (at least 0.01, at most 10,000)."
)
@click.option(
    "--dry-run",
    "dry",
    is_flag=True,
    help="Count the dead letters that match and show a sample; change nothing.",
)
@click.option("--note", default="", help="Why, kept with the redrive (at most 1024 bytes).")
@yes_option
@output_option
@target_options
@click.pass_context
def redrive_group(
    ctx: click.Context, /, rate: float | None, dry: bool, note: str, yes: bool, output: Output, **values: Any
) -> None:
    """Re-queue the dead letters the options match, at most --rate a second (or a COMMAND)."""
    if ctx.invoked_subcommand is not None:
        return
    if rate is None:
        fail("--rate is required: tasks a second, e.g. --rate 50", EXIT_USAGE)
    f = failure_filter(values)
    with gateway() as g:
        if dry or not yes:
            found = g.call(
                g.failures.Redrive, fs.RedriveRequest(filter=f, rate=rate, dry_run=True, note=note)
            )
            if dry:
                output.emit(found, dry_run)
                return
            confirm(f"Redrive {found.matched} dead letters at {rate:g}/s?", yes=False)
        reply = g.call(g.failures.Redrive, fs.RedriveRequest(filter=f, rate=rate, note=note))
    output.emit(reply, lambda r: redrive_detail(r.redrive))
    output.note(f"follow it: taskyard redrive get {reply.redrive.id} --watch")


@redrive_group.command("get")
@click.argument("redrive_id", metavar="ID")
@click.option("--watch", is_flag=True, help="Print its progress until it is done or cancelled.")
@click.option(
    "--interval",
    type=click.FloatRange(0.1, 60),
    default=1.0,
    show_default=True,
    help="Seconds between reads.",
)
@output_option
@target_options
def get_command(redrive_id: str, watch: bool, interval: float, output: Output) -> None:
    """Show one redrive: its filter, rate, who started it, its progress."""
    with gateway() as g:
        if not watch:
            reply = g.call(g.failures.GetRedrive, fs.GetRedriveRequest(id=redrive_id))
            output.emit(reply, lambda r: redrive_detail(r.redrive))
            return
        output.emit_each(_watch(g, redrive_id, interval), lambda r: progress(r.redrive))


def _watch(g: Gateway, redrive_id: str, interval: float) -> Iterator[fs.GetRedriveResponse]:
    """The redrive each time it changed, until DONE or CANCELLED."""
    last: fs.Redrive | None = None
    while True:
        reply: fs.GetRedriveResponse = g.call(g.failures.GetRedrive, fs.GetRedriveRequest(id=redrive_id))
        if last is None or reply.redrive.SerializeToString() != last.SerializeToString():
            last = reply.redrive
            yield reply
        if reply.redrive.state in FINISHED:
            return
        time.sleep(interval)


@redrive_group.command("list")
@click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True)
@click.option("--all-pages", is_flag=True, help="Every page, not only the first.")
@output_option
@target_options
def list_command(page_size: int, all_pages: bool, output: Output) -> None:
    """Redrives, newest first: who started each, when, and how far it went."""
    reply = fs.ListRedrivesResponse()
    request = fs.ListRedrivesRequest(page_size=page_size)
    with gateway() as g:
        while True:
            page = g.call(g.failures.ListRedrives, request)
            reply.redrives.extend(page.redrives)
            reply.next_page_token = request.page_token = page.next_page_token
            if not all_pages or not page.next_page_token:
                break
    output.emit(reply, lambda r: redrive_table(r.redrives))
    if reply.next_page_token:
        output.note(f"(more: --all-pages, or page token {reply.next_page_token})")


@redrive_group.command("items")
@click.argument("redrive_id", metavar="ID")
@click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True)
@click.option("--all-pages", is_flag=True, help="Every page, not only the first.")
@output_option
@target_options
def items_command(redrive_id: str, page_size: int, all_pages: bool, output: Output) -> None:
    """What became of each task a redrive matched (the audit): re-queued, skipped, pending."""
    reply = fs.ListRedriveItemsResponse()
    request = fs.ListRedriveItemsRequest(id=redrive_id, page_size=page_size)
    with gateway() as g:
        while True:
            page = g.call(g.failures.ListRedriveItems, request)
            reply.items.extend(page.items)
            reply.next_page_token = request.page_token = page.next_page_token
            if not all_pages or not page.next_page_token:
                break
    output.emit(reply, lambda r: item_table(r.items))
    if reply.next_page_token:
        output.note(f"(more: --all-pages, or page token {reply.next_page_token})")


def _control_command(verb: str, help_text: str, method: str, request: type[Any]) -> click.Command:
    @redrive_group.command(verb, help=help_text)
    @click.argument("redrive_id", metavar="ID")
    @output_option
    @target_options
    def command(redrive_id: str, output: Output) -> None:
        with gateway() as g:
            reply = g.call(getattr(g.failures, method), request(id=redrive_id))
        output.emit(reply, lambda r: redrive_detail(r.redrive))

    return command


pause_command = _control_command(
    "pause", "Stop re-queueing (resume goes on where it stopped).", "PauseRedrive", fs.PauseRedriveRequest
)
resume_command = _control_command(
    "resume", "Re-queue again, at its rate.", "ResumeRedrive", fs.ResumeRedriveRequest
)
cancel_command = _control_command(
    "cancel",
    "Stop for good: the tasks not re-queued yet stay dead letters.",
    "CancelRedrive",
    fs.CancelRedriveRequest,
)
