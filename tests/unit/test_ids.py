"""Task ids are UUIDv7: version 7, RFC 4122 variant, time-ordered."""

from __future__ import annotations

import time
import uuid

from taskyard.core import ids


def test_task_id_is_a_version_7_rfc4122_uuid() -> None:
    for _ in range(200):
        u = uuid.UUID(ids.new_task_id())
        assert u.version == 7
        assert u.variant == uuid.RFC_4122
        assert str(u) == str(u).lower()


def test_task_id_carries_the_millisecond_clock() -> None:
    before = time.time_ns() // 1_000_000
    u = uuid.UUID(ids.new_task_id())
    after = time.time_ns() // 1_000_000
    assert before <= u.int >> 80 <= after


def test_task_ids_are_ordered_by_time() -> None:
    # Ids made in different milliseconds sort (as strings and as UUIDs) by creation time.
    made: list[str] = []
    last_ms = -1
    while len(made) < 5:
        tid = ids.new_task_id()
        ms = uuid.UUID(tid).int >> 80
        if ms > last_ms:
            made.append(tid)
            last_ms = ms
    assert made == sorted(made)
    assert [uuid.UUID(t) for t in made] == sorted(uuid.UUID(t) for t in made)


def test_ids_made_later_never_sort_earlier() -> None:
    batch = [ids.new_task_id() for _ in range(2000)]
    stamps = [uuid.UUID(t).int >> 80 for t in batch]
    assert stamps == sorted(stamps)


def test_task_ids_are_unique() -> None:
    batch = [ids.new_task_id() for _ in range(20_000)]
    assert len(set(batch)) == len(batch)


def test_a_batch_of_ids_shares_the_clock_and_nothing_else() -> None:
    before = time.time_ns() // 1_000_000
    batch = ids.new_task_ids(500)
    after = time.time_ns() // 1_000_000
    parsed = [uuid.UUID(t) for t in batch]
    assert [str(u) for u in parsed] == batch
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in parsed)
    assert len({u.int >> 80 for u in parsed}) == 1
    assert before <= parsed[0].int >> 80 <= after
    assert len({u.int & ((1 << 80) - 1) for u in parsed}) == len(batch)
    assert ids.new_task_ids(0) == []


def test_the_random_bits_all_vary() -> None:
    # The 74 bits after the clock, bar the version and variant, are random: each takes
    # both values somewhere in a batch.
    fixed = (0xF << 76) | (0b11 << 62)
    seen_one, seen_zero = 0, 0
    for t in ids.new_task_ids(2000):
        low = uuid.UUID(t).int & ((1 << 80) - 1) & ~fixed
        seen_one |= low
        seen_zero |= ~low
    mask = ((1 << 80) - 1) & ~fixed
    assert seen_one & mask == mask and seen_zero & mask == mask


def test_lease_tokens_are_random_hex() -> None:
    tokens = {ids.new_lease_token() for _ in range(1000)}
    assert len(tokens) == 1000
    assert all(len(t) == 16 and int(t, 16) >= 0 for t in tokens)


def test_instance_id_names_the_service() -> None:
    a, b = ids.new_instance_id("scheduler"), ids.new_instance_id("scheduler")
    assert a.startswith("scheduler-") and a != b


def test_is_uuid() -> None:
    assert ids.is_uuid(ids.new_task_id())
    assert ids.is_uuid(str(uuid.uuid4()))
    assert not ids.is_uuid("not-a-uuid")
    assert not ids.is_uuid("")
