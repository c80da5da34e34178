"""The gateway's view of the result stream: batches nobody needs yet stay undecoded,
and whatever a dropped batch could have said is forgotten, never guessed."""

from __future__ import annotations

from taskyard.bus.v1 import event_pb2, task_record_pb2
from taskyard.core import contract
from taskyard.gateway.waiters import Waiters
from taskyard.v1 import task_pb2

SUCCESS = task_pb2.TASK_STATE_SUCCESS


def finals(*task_ids: str) -> bytes:
    events = [
        event_pb2.Event(
            task_id=t,
            state=SUCCESS,
            type="task.succeeded",
            record=task_record_pb2.TaskRecord(id=t, state=SUCCESS),
        )
        for t in task_ids
    ]
    return contract.EVENTS.encode(event_pb2.EventBatch(events=events))


def test_without_waiters_batches_wait_undecoded_until_asked() -> None:
    waiters = Waiters()
    waiters.submitted(["a", "b"], losses=waiters.losses)
    waiters.feed(finals("a"))
    assert waiters.batches_seen == 1 and waiters.batches_decoded == 0
    seen = waiters.recent_final("a")
    assert seen is not None and seen.record.id == "a"
    assert waiters.batches_decoded == 1
    assert not waiters.known_unfinished("a") and waiters.known_unfinished("b")


def test_a_waiter_gets_its_final_at_once_with_what_came_before() -> None:
    waiters = Waiters()
    waiters.feed(finals("a"))
    w = waiters.register("b")
    waiters.feed(finals("b"))
    assert w.event.is_set() and w.state == SUCCESS
    assert w.record is not None and w.record.id == "b"
    assert waiters.batches_decoded == 2
    assert waiters.recent_final("a") is not None


def test_a_tap_that_wants_batches_gets_each_as_it_comes() -> None:
    waiters = Waiters()
    tapped: list[int] = []
    wanted = [False]
    waiters.taps.append(lambda batch: tapped.append(len(batch.events)))
    waiters.tap_wanted.append(lambda: wanted[0])
    waiters.feed(finals("a"))
    assert tapped == []
    wanted[0] = True
    waiters.feed(finals("b", "c"))
    assert tapped == [1, 2]


def test_a_dropped_batch_forgets_what_it_could_have_changed() -> None:
    one = finals("a")
    waiters = Waiters(backlog_bytes=2 * len(one))
    waiters.submitted(["old"], losses=waiters.losses)
    waiters.feed(finals("a"))
    assert waiters.recent_final("a") is not None
    waiters.feed(finals("b"))
    waiters.submitted(["new"], losses=waiters.losses)
    waiters.feed(finals("c"))
    waiters.feed(finals("d"))  # over the bound: "b" goes unread
    # Any task may have ended in the dropped batch, and any remembered outcome may
    # have changed there: nothing remembered before the drop is trusted.
    assert not waiters.known_unfinished("old") and not waiters.known_unfinished("new")
    assert waiters.recent_final("a") is None and waiters.recent_final("b") is None
    assert waiters.recent_final("c") is not None and waiters.recent_final("d") is not None
    assert waiters.batches_seen == 4 and waiters.batches_decoded == 3
    waiters.submitted(["later"], losses=waiters.losses)
    assert waiters.known_unfinished("later")


def test_a_submission_answered_after_a_drop_is_not_remembered_as_unfinished() -> None:
    """Its final may have been in the dropped batch: its wait reads the store first."""
    one = finals("x")
    waiters = Waiters(backlog_bytes=len(one))
    sent = waiters.losses  # the submission goes out
    waiters.feed(one)  # its final arrives first, nobody waiting: kept undecoded
    waiters.feed(finals("y"))  # over the bound: x's final is dropped unread
    waiters.submitted(["x"], losses=sent)  # then the answer comes back
    assert not waiters.known_unfinished("x")
    assert waiters.recent_final("x") is None


def test_a_malformed_batch_is_dropped_when_read() -> None:
    waiters = Waiters()
    waiters.feed(b"\xff not an envelope")
    waiters.feed(finals("a"))
    assert waiters.recent_final("a") is not None


def failure(task_id: str, attempt: int) -> bytes:
    failed = task_pb2.TASK_STATE_FAILURE
    ev = event_pb2.Event(
        task_id=task_id,
        state=failed,
        attempt=attempt,
        type="task.failed",
        record=task_record_pb2.TaskRecord(id=task_id, state=failed, attempt=attempt),
    )
    return contract.EVENTS.encode(event_pb2.EventBatch(events=[ev]))


def test_a_failure_is_not_remembered_as_an_outcome() -> None:
    """A retry (FAILURE -> QUEUED, attempt + 1) may be committed by any store for
    any gateway, and its event is not on the result stream: a wait reads the row."""
    waiters = Waiters()
    waiters.feed(finals("a"))
    waiters.feed(failure("b", 1))
    assert waiters.recent_final("a") is not None
    assert waiters.recent_final("b") is None


def test_a_waiter_that_saw_the_row_retried_takes_no_earlier_attempts_outcome() -> None:
    waiters = Waiters()
    w = waiters.register("t")
    waiters.feed(failure("t", 1))  # the retried failure's event, decoded late
    assert w.event.is_set() and w.unconfirmed_failure()
    w.expect(2)  # the store's row: QUEUED, attempt 2
    assert not w.event.is_set() and w.record is None
    waiters.feed(failure("t", 1))  # and once more (another store's copy)
    assert not w.event.is_set()
    waiters.feed(failure("t", 2))
    assert w.event.is_set() and w.attempt == 2 and not w.unconfirmed_failure()


def test_a_closing_registry_still_wakes_a_waiter_that_saw_the_row_retried() -> None:
    waiters = Waiters()
    w = waiters.register("t")
    waiters.feed(failure("t", 1))
    waiters.close()
    w.expect(2)
    assert w.event.is_set() and not w.unconfirmed_failure()


def test_the_earliest_remembered_outcome_is_forgotten_first() -> None:
    """A look keeps no outcome longer, nor does another copy of its event."""
    waiters = Waiters(recent_finals=2)
    waiters.feed(finals("a", "b"))
    assert waiters.recent_final("a") is not None
    waiters.feed(finals("c"))
    assert waiters.recent_final("a") is None
    waiters.feed(finals("b"))  # another copy: b keeps its place
    waiters.feed(finals("d"))
    assert waiters.recent_final("b") is None
    assert waiters.recent_final("c") is not None and waiters.recent_final("d") is not None


def test_the_earliest_submission_is_forgotten_first_as_unfinished() -> None:
    """Past the bound its wait reads the store first; asking keeps none longer."""
    waiters = Waiters(unfinished=2)
    waiters.submitted(["a", "b"], losses=waiters.losses)
    assert waiters.known_unfinished("a")
    waiters.submitted(["c"], losses=waiters.losses)
    assert not waiters.known_unfinished("a")
    waiters.submitted(["b", "d"], losses=waiters.losses)  # b again keeps its place
    assert not waiters.known_unfinished("b")
    assert waiters.known_unfinished("c") and waiters.known_unfinished("d")
