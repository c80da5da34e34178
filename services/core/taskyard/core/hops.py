"""Hop stamps: where a sampled task's time goes between the processes it crosses.

A client asks for them by sending the ``taskyard-hops`` gRPC metadata with
``SubmitTask``. The task's record then carries ``hops`` (``bus.v1.HopStamp``)
and every process that handles it appends the wall-clock time it received and
sent it; the worker's completion carries them back to the store, whose final
event hands the whole trip to the gateway, which returns it in the trailing
metadata of ``WaitTask``. An unsampled task carries none, and every step
checks that with one length test, so the hot path pays nothing for it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Protocol

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

from taskyard.bus.v1 import task_record_pb2

# gRPC metadata key: on SubmitTask it asks for stamps; on WaitTask's trailing
# metadata it carries them as "hop=unix_ns" pairs joined by ",".
METADATA_KEY = "taskyard-hops"

HopStamps = Sequence[task_record_pb2.HopStamp]


class Stamped(Protocol):
    """A message with hop stamps: a TaskRecord or a Completion."""

    @property
    def hops(self) -> RepeatedCompositeFieldContainer[task_record_pb2.HopStamp]: ...


def start(record: task_record_pb2.TaskRecord, hop: str, at_ns: int) -> None:
    """Sample ``record``: its first stamp."""
    record.hops.add(hop=hop, at_ns=at_ns)


def stamp(messages: Iterable[Stamped], hop: str) -> None:
    """Stamp the sampled ones among ``messages`` with the time now."""
    at = 0
    for message in messages:
        if message.hops:
            at = at or time.time_ns()
            message.hops.add(hop=hop, at_ns=at)


def to_text(hops: HopStamps) -> str:
    return ",".join(f"{h.hop}={h.at_ns}" for h in hops)


def from_text(text: str) -> list[tuple[str, int]]:
    """The (hop, unix ns) pairs of ``to_text``; malformed pairs are skipped."""
    out: list[tuple[str, int]] = []
    for part in text.split(","):
        hop, sep, at = part.rpartition("=")
        if sep and hop and at.isdigit():
            out.append((hop, int(at)))
    return out
