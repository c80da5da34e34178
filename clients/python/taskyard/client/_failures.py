"""Dead letters and their redrive: ``client.failures`` (FailureService).

with Client() as c:
    group = c.failures.groups().items[0]                   # most dead letters first
    only = FailureFilter(group_id=group.group_id)
    print(c.failures.redrive(only, rate=50, dry_run=True).matched)
    started = c.failures.redrive(only, rate=50, note="payments fixed").redrive
    c.failures.pause_redrive(started.id); c.failures.resume_redrive(started.id)
    for item in c.failures.redrive_items(started.id).items: print(item.task_id, item.outcome.name)

Reading takes the ``read`` scope; a redrive (a dry run too), its controls and a
purge take ``admin``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from taskyard.client._failure_types import (
    DeadLetter,
    FailureFilter,
    FailureGroup,
    Page,
    Redrive,
    RedriveItem,
    RedriveStarted,
)
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import failure_service_pb2_grpc


def _filter(f: FailureFilter | fs.FailureFilter | None) -> fs.FailureFilter:
    if f is None:
        return fs.FailureFilter()
    return f if isinstance(f, fs.FailureFilter) else f.to_proto()


def _groups(r: fs.ListFailureGroupsResponse) -> Page[FailureGroup]:
    return Page(items=tuple(FailureGroup.from_proto(g) for g in r.groups), next_page_token=r.next_page_token)


def _dead_letters(r: fs.ListFailuresResponse) -> Page[DeadLetter]:
    return Page(items=tuple(DeadLetter.from_proto(d) for d in r.failures), next_page_token=r.next_page_token)


def _redrives(r: fs.ListRedrivesResponse) -> Page[Redrive]:
    return Page(items=tuple(Redrive.from_proto(x) for x in r.redrives), next_page_token=r.next_page_token)


def _items(r: fs.ListRedriveItemsResponse) -> Page[RedriveItem]:
    return Page(items=tuple(RedriveItem.from_proto(i) for i in r.items), next_page_token=r.next_page_token)


# The requests, shared by the blocking and the awaitable classes.
def _groups_request(f: FailureFilter | fs.FailureFilter | None, size: int, token: str) -> Any:
    return fs.ListFailureGroupsRequest(filter=_filter(f), page_size=size, page_token=token)


def _list_request(f: FailureFilter | fs.FailureFilter, size: int, token: str) -> Any:
    return fs.ListFailuresRequest(filter=_filter(f), page_size=size, page_token=token)


def _redrive_request(f: FailureFilter | fs.FailureFilter, rate: float, dry_run: bool, note: str) -> Any:
    return fs.RedriveRequest(filter=_filter(f), rate=rate, dry_run=dry_run, note=note)


class Failures:
    def __init__(self, channel: Any, call: Callable[..., Any]) -> None:
        self._stub = failure_service_pb2_grpc.FailureServiceStub(channel)
        self._call = call

    def groups(
        self,
        filter: FailureFilter | fs.FailureFilter | None = None,
        *,
        page_size: int = 0,
        page_token: str = "",
    ) -> Page[FailureGroup]:
        """Groups of dead letters, most first (``filter``'s group_id and task_ids are ignored)."""
        return _groups(
            self._call(self._stub.ListFailureGroups, _groups_request(filter, page_size, page_token))
        )

    def list(
        self, filter: FailureFilter | fs.FailureFilter, *, page_size: int = 0, page_token: str = ""
    ) -> Page[DeadLetter]:
        """Dead letters ``filter`` matches, newest failure first."""
        return _dead_letters(
            self._call(self._stub.ListFailures, _list_request(filter, page_size, page_token))
        )

    def redrive(
        self, filter: FailureFilter | fs.FailureFilter, *, rate: float, dry_run: bool = False, note: str = ""
    ) -> RedriveStarted:
        """Re-queue what ``filter`` matches at most ``rate`` a second (the service runs it);
        ``dry_run``: the count and a sample, nothing changed."""
        return RedriveStarted.from_proto(
            self._call(self._stub.Redrive, _redrive_request(filter, rate, dry_run, note))
        )

    def get_redrive(self, redrive_id: str) -> Redrive:
        return Redrive.from_proto(
            self._call(self._stub.GetRedrive, fs.GetRedriveRequest(id=redrive_id)).redrive
        )

    def list_redrives(self, *, page_size: int = 0, page_token: str = "") -> Page[Redrive]:
        """Redrives, newest first (the audit: who, when, which filter, how far)."""
        req = fs.ListRedrivesRequest(page_size=page_size, page_token=page_token)
        return _redrives(self._call(self._stub.ListRedrives, req))

    def redrive_items(
        self, redrive_id: str, *, page_size: int = 0, page_token: str = ""
    ) -> Page[RedriveItem]:
        """What became of each task the redrive matched."""
        req = fs.ListRedriveItemsRequest(id=redrive_id, page_size=page_size, page_token=page_token)
        return _items(self._call(self._stub.ListRedriveItems, req))

    def pause_redrive(self, redrive_id: str) -> Redrive:
        req = fs.PauseRedriveRequest(id=redrive_id)
        return Redrive.from_proto(self._call(self._stub.PauseRedrive, req).redrive)

    def resume_redrive(self, redrive_id: str) -> Redrive:
        req = fs.ResumeRedriveRequest(id=redrive_id)
        return Redrive.from_proto(self._call(self._stub.ResumeRedrive, req).redrive)

    def cancel_redrive(self, redrive_id: str) -> Redrive:
        """The tasks not re-queued yet stay dead letters."""
        req = fs.CancelRedriveRequest(id=redrive_id)
        return Redrive.from_proto(self._call(self._stub.CancelRedrive, req).redrive)

    def purge(self, filter: FailureFilter | fs.FailureFilter, *, dry_run: bool = False) -> int:
        """Delete the dead letters ``filter`` matches (with their logs); returns how many."""
        req = fs.PurgeDeadLettersRequest(filter=_filter(filter), dry_run=dry_run)
        return int(self._call(self._stub.PurgeDeadLetters, req).purged)


class AsyncFailures:
    """``Failures``' methods, awaitable."""

    def __init__(self, channel: Any, call: Callable[..., Awaitable[Any]]) -> None:
        self._stub = failure_service_pb2_grpc.FailureServiceStub(channel)
        self._call = call

    async def groups(
        self,
        filter: FailureFilter | fs.FailureFilter | None = None,
        *,
        page_size: int = 0,
        page_token: str = "",
    ) -> Page[FailureGroup]:
        req = _groups_request(filter, page_size, page_token)
        return _groups(await self._call(self._stub.ListFailureGroups, req))

    async def list(
        self, filter: FailureFilter | fs.FailureFilter, *, page_size: int = 0, page_token: str = ""
    ) -> Page[DeadLetter]:
        return _dead_letters(
            await self._call(self._stub.ListFailures, _list_request(filter, page_size, page_token))
        )

    async def redrive(
        self, filter: FailureFilter | fs.FailureFilter, *, rate: float, dry_run: bool = False, note: str = ""
    ) -> RedriveStarted:
        req = _redrive_request(filter, rate, dry_run, note)
        return RedriveStarted.from_proto(await self._call(self._stub.Redrive, req))

    async def get_redrive(self, redrive_id: str) -> Redrive:
        r = await self._call(self._stub.GetRedrive, fs.GetRedriveRequest(id=redrive_id))
        return Redrive.from_proto(r.redrive)

    async def list_redrives(self, *, page_size: int = 0, page_token: str = "") -> Page[Redrive]:
        req = fs.ListRedrivesRequest(page_size=page_size, page_token=page_token)
        return _redrives(await self._call(self._stub.ListRedrives, req))

    async def redrive_items(
        self, redrive_id: str, *, page_size: int = 0, page_token: str = ""
    ) -> Page[RedriveItem]:
        req = fs.ListRedriveItemsRequest(id=redrive_id, page_size=page_size, page_token=page_token)
        return _items(await self._call(self._stub.ListRedriveItems, req))

    async def pause_redrive(self, redrive_id: str) -> Redrive:
        r = await self._call(self._stub.PauseRedrive, fs.PauseRedriveRequest(id=redrive_id))
        return Redrive.from_proto(r.redrive)

    async def resume_redrive(self, redrive_id: str) -> Redrive:
        r = await self._call(self._stub.ResumeRedrive, fs.ResumeRedriveRequest(id=redrive_id))
        return Redrive.from_proto(r.redrive)

    async def cancel_redrive(self, redrive_id: str) -> Redrive:
        r = await self._call(self._stub.CancelRedrive, fs.CancelRedriveRequest(id=redrive_id))
        return Redrive.from_proto(r.redrive)

    async def purge(self, filter: FailureFilter | fs.FailureFilter, *, dry_run: bool = False) -> int:
        req = fs.PurgeDeadLettersRequest(filter=_filter(filter), dry_run=dry_run)
        return int((await self._call(self._stub.PurgeDeadLetters, req)).purged)
