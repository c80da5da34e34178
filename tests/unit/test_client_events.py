"""The Python client's event watch without a gateway: which interruptions it
resumes from, where it resumes, and the backoff between tries. (Against a real
gateway: tests/acceptance/test_watch_events.py.)"""

from __future__ import annotations

import grpc
import pytest
from support.rpc_errors import Ended

from taskyard.client import TaskyardError, _events, _resume
from taskyard.v1 import event_service_pb2 as pub


def test_interruptions_not_the_callers_resume_and_the_rest_raise() -> None:
    progress = _events._Progress(pub.WatchEventsRequest(), resume=True)
    for err in (
        Ended(grpc.StatusCode.UNAVAILABLE, "GATEWAY_STOPPING"),
        Ended(grpc.StatusCode.UNAVAILABLE, "EVENT_LOG_UNAVAILABLE"),
        Ended(grpc.StatusCode.UNAVAILABLE),  # the connection dropped
        Ended(grpc.StatusCode.RESOURCE_EXHAUSTED, "CONSUMER_TOO_SLOW"),
    ):
        assert 0 < progress.after_error(err) <= _resume.RESUME_MAX
    assert progress.resumed == 4
    for err in (
        Ended(grpc.StatusCode.OUT_OF_RANGE, "CURSOR_EXPIRED"),
        Ended(grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS"),
        Ended(grpc.StatusCode.PERMISSION_DENIED, "SCOPE_MISSING"),
    ):
        with pytest.raises(TaskyardError) as raised:
            progress.after_error(err)
        assert raised.value.code == err.code()
    never = _events._Progress(pub.WatchEventsRequest(), resume=False)
    with pytest.raises(TaskyardError):
        never.after_error(Ended(grpc.StatusCode.UNAVAILABLE))


def test_waits_double_up_to_the_maximum_and_start_over_after_a_response() -> None:
    progress = _events._Progress(pub.WatchEventsRequest(), resume=True)
    waits = [progress.after_error(Ended(grpc.StatusCode.UNAVAILABLE)) for _ in range(12)]
    ceilings = [min(_resume.RESUME_FIRST * 2**i, _resume.RESUME_MAX) for i in range(12)]
    assert all(c / 2 <= w <= c for w, c in zip(waits, ceilings, strict=True))
    progress.read(pub.WatchEventsResponse(cursor="c1"))
    assert progress.after_error(Ended(grpc.StatusCode.UNAVAILABLE)) <= _resume.RESUME_FIRST


def test_a_resumed_stream_asks_for_what_follows_its_cursor_with_the_same_filters() -> None:
    request = _events.watch_request(start="oldest", kinds=["task"], queues=["q"], states=["failure"])
    assert request.start == pub.WATCH_START_OLDEST and list(request.kinds) == [pub.EVENT_KIND_TASK]
    progress = _events._Progress(request, resume=True)
    assert progress.next_request() == request  # nothing read yet: as asked
    progress.read(pub.WatchEventsResponse(events=[pub.Event(cursor="c1"), pub.Event(cursor="c2")]))
    assert progress.cursor == "c2"
    progress.read(pub.WatchEventsResponse(cursor="c5"))  # filtered-out events count too
    again = progress.next_request()
    assert again.after == "c5" and list(again.queues) == ["q"] and list(again.states) == list(request.states)
    with pytest.raises(ValueError):
        _events.watch_request(start="tomorrow")
    with pytest.raises(TypeError, match="queue"):
        _events.watch_request(queue=["q"])  # type: ignore[call-arg]
