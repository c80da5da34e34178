"""Keeping one bad report entry from blocking every report a pool sends.

Text a task controls (an exception's type, message, traceback) reaches
PostgreSQL ``text`` columns, which refuse NUL, and protobuf strings, which
refuse lone surrogates: ``storable`` neutralises both, the way
``tasklogs.cut_line`` does for log lines. The store may still refuse an entry
for a reason nobody foresaw; ``is_poison`` tells such a refusal (the same
request would fail again) from a transient one, and ``split`` breaks a refused
request into single-entry requests so the forwarder can drop only the bad one.
"""

from __future__ import annotations

from taskyard.bus.v1 import leases_pb2
from taskyard.core import errors

# Refusals that retrying the same request cannot cure (the database refused a
# value: INVALID_ARGUMENT; an applier error: INTERNAL). UNAVAILABLE and
# DEADLINE_EXCEEDED are transient and retried as before.
POISON_CODES = frozenset({errors.Code.INVALID_ARGUMENT, errors.Code.INTERNAL})


def storable(text: str) -> str:
    """``text`` without what PostgreSQL text or a protobuf string refuses."""
    if "\x00" in text:
        text = text.replace("\x00", "\\u0000")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (e.g. from os.fsdecode)
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def is_poison(exc: errors.TaskyardError) -> bool:
    return exc.code in POISON_CODES


def size(req: leases_pb2.ReportRequest) -> int:
    return len(req.started) + len(req.completed) + len(req.released) + len(req.died)


def split(req: leases_pb2.ReportRequest) -> list[leases_pb2.ReportRequest]:
    """One request per entry, starts first (the order the store applies them in)."""
    out = [leases_pb2.ReportRequest(started=[r]) for r in req.started]
    out += [leases_pb2.ReportRequest(completed=[c]) for c in req.completed]
    out += [leases_pb2.ReportRequest(released=[r]) for r in req.released]
    out += [leases_pb2.ReportRequest(died=[d]) for d in req.died]
    return out


def describe(req: leases_pb2.ReportRequest) -> str:
    """Which attempt a single-entry request is about, for the log."""
    refs = [*req.started, *(r.ref for r in req.released)]
    refs += [c.ref for c in req.completed] + [d.ref for d in req.died]
    return ", ".join(f"{r.task_id}#{r.attempt}" for r in refs) or "?"
