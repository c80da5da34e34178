"""Flow control's rules, in one implementation: what a limit must be, and what a
task's use of limits must be.

The gateway checks every LimitService call and every submission with them, the
result-store checks every limit it stores again (whoever sent it: a gateway, a
pool declaring its tasks' limits), and the scheduler reads a limit's numbers
through ``rate_of`` / ``burst_of``, so the three agree on defaults (a burst of
0 means the rate's units, a use of 0 units means 1).
"""

from __future__ import annotations

import json
import re
from collections.abc import Container, Sequence

from google.protobuf import duration_pb2

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import names
from taskyard.core.validation import Violation, quote
from taskyard.v1 import limit_pb2

# Limits of flow control itself (README, "Limits").
MAX_USES = 8
# A task name declares at most a rate, a concurrency limit and a circuit breaker, which
# the scheduler adds to the uses a task was submitted with: what the store takes is both together.
MAX_DECLARED = 3
MAX_STORED_USES = MAX_USES + MAX_DECLARED
MAX_TASK_NAME_CHARS = 255
MAX_KEY_BYTES = 256
MAX_DESCRIPTION_BYTES = 1024
MIN_PERIOD_MS = 1
MAX_PERIOD_MS = 24 * 3600 * 1000
# Units of one limit: a rate's units or burst, a concurrency's max_units.
MAX_UNITS = 1_000_000_000
MAX_WEIGHT = 1000
# Fairness weights the store keeps (ListKeyWeights returns them all).
MAX_WEIGHTS = 10_000
# Limits in all (the scheduler holds every one; ListLimits pages them).
MAX_LIMITS = 10_000
# A circuit breaker's numbers (limit.proto CircuitBreaker): unset durations take
# the defaults. Its thresholds count up to MAX_BREAKER_ATTEMPTS; what the leader
# keeps of them is bounded apart (scheduler/breakers.py: outcomes are counted in
# BREAKER_BUCKETS buckets of its window, only failures are remembered one by one).
MAX_BREAKER_ATTEMPTS = 1_000_000
MAX_PROBES = 1000
DEFAULT_WINDOW_MS = 60_000
DEFAULT_COOL_DOWN_MS = 30_000
# An outage's failures a breaker refunds per task (0 means the default), and for
# how long from when it opened: past either, a failure is charged as always, so a
# task whose own code fails still ends a dead letter.
DEFAULT_MAX_REFUNDS_PER_TASK = 20
MAX_REFUNDS_PER_TASK = 10_000
DEFAULT_MAX_OUTAGE_MS = 3_600_000

# The tenants' quotas are gates named "tenant.concurrency" and "tenant.rate" keyed by
# the tenant (scheduler/admission.py): a limit of that name, created or declared by a
# task named "tenant", would be read as the quotas, so the prefix is theirs alone.
RESERVED_PREFIX = "tenant."

# FieldViolation reasons.
UNKNOWN_LIMIT = "UNKNOWN_LIMIT"
INVALID_ARGUMENT = "INVALID_ARGUMENT"

# "100/s", "5/2s", "1000/min", "20/1.5h": units per period (no burst).
_RATE = re.compile(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)?\s*(ms|s|sec|m|min|h|d)\s*")
_UNIT_MS = {"ms": 1, "s": 1000, "sec": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def period_ms(rate: limit_pb2.RateLimit) -> int:
    return rate.period.seconds * 1000 + rate.period.nanos // 1_000_000


def burst_of(limit: limit_pb2.Limit) -> int:
    """A rate limit's burst (0 means its units), a concurrency limit's max_units; a
    breaker takes no units (any use fits it)."""
    if limit.HasField("rate"):
        return limit.rate.burst or limit.rate.units
    if limit.HasField("breaker"):
        return MAX_UNITS
    return limit.concurrency.max_units


def _ms(d: duration_pb2.Duration) -> int:
    return d.seconds * 1000 + d.nanos // 1_000_000


def window_ms(breaker: limit_pb2.CircuitBreaker) -> int:
    return _ms(breaker.window) if breaker.HasField("window") else DEFAULT_WINDOW_MS


def cool_down_ms(breaker: limit_pb2.CircuitBreaker) -> int:
    return _ms(breaker.cool_down) if breaker.HasField("cool_down") else DEFAULT_COOL_DOWN_MS


def probes_of(breaker: limit_pb2.CircuitBreaker) -> int:
    return breaker.half_open_probes or 1


def min_attempts_of(breaker: limit_pb2.CircuitBreaker) -> int:
    return breaker.min_attempts or breaker.failure_threshold


def max_refunds_of(breaker: limit_pb2.CircuitBreaker) -> int:
    return breaker.max_refunds_per_task or DEFAULT_MAX_REFUNDS_PER_TASK


def max_outage_ms(breaker: limit_pb2.CircuitBreaker) -> int:
    return _ms(breaker.max_outage) if breaker.HasField("max_outage") else DEFAULT_MAX_OUTAGE_MS


def parse_breaker(text: str) -> limit_pb2.CircuitBreaker:
    """``"5/30s"``: open after 5 failed attempts within 30 s (the window); ValueError otherwise."""
    m = _RATE.fullmatch(text)
    if m is None:
        raise ValueError(f"a breaker is failures/window, e.g. '5/30s' or '20/min', got {text!r}")
    breaker = limit_pb2.CircuitBreaker(failure_threshold=int(m.group(1)))
    breaker.window.FromMilliseconds(round(float(m.group(2) or 1) * _UNIT_MS[m.group(3)]))
    return breaker


def _duration_violations(d: duration_pb2.Duration, field: str) -> list[Violation]:
    ms = _ms(d)
    if MIN_PERIOD_MS <= ms <= MAX_PERIOD_MS and d.nanos % 1_000_000 == 0 and d.seconds >= 0:
        return []
    return [Violation(field=field, description="must be 1 ms to 1 day, in whole milliseconds")]


def breaker_violations(breaker: limit_pb2.CircuitBreaker, path: str) -> list[Violation]:
    out: list[Violation] = []
    if not 1 <= breaker.failure_threshold <= MAX_BREAKER_ATTEMPTS:
        out.append(
            Violation(
                field=f"{path}.failure_threshold",
                description=f"must be 1 to {MAX_BREAKER_ATTEMPTS}, got {breaker.failure_threshold}",
            )
        )
    if not 0 <= breaker.min_attempts <= MAX_BREAKER_ATTEMPTS:
        out.append(
            Violation(
                field=f"{path}.min_attempts",
                description=f"must be 0 to {MAX_BREAKER_ATTEMPTS}, got {breaker.min_attempts}",
            )
        )
    if not 0 <= breaker.half_open_probes <= MAX_PROBES:
        out.append(
            Violation(
                field=f"{path}.half_open_probes",
                description=f"must be 0 to {MAX_PROBES}, got {breaker.half_open_probes}",
            )
        )
    if not 0 <= breaker.max_refunds_per_task <= MAX_REFUNDS_PER_TASK:
        out.append(
            Violation(
                field=f"{path}.max_refunds_per_task",
                description=f"must be 0 to {MAX_REFUNDS_PER_TASK}, got {breaker.max_refunds_per_task}",
            )
        )
    if breaker.HasField("window"):
        out += _duration_violations(breaker.window, f"{path}.window")
    if breaker.HasField("cool_down"):
        out += _duration_violations(breaker.cool_down, f"{path}.cool_down")
    if breaker.HasField("max_outage"):
        out += _duration_violations(breaker.max_outage, f"{path}.max_outage")
    return out


def units_of(use: limit_pb2.LimitUse) -> int:
    return use.units or 1


def parse_rate(text: str, *, burst: int = 0) -> limit_pb2.RateLimit:
    """``"100/s"``, ``"10/min"``, ``"5/2s"``: a RateLimit; ValueError otherwise."""
    m = _RATE.fullmatch(text)
    if m is None:
        raise ValueError(f"a rate is units/period, e.g. '100/s' or '10/min', got {text!r}")
    units, count, unit = int(m.group(1)), float(m.group(2) or 1), m.group(3)
    ms = round(count * _UNIT_MS[unit])
    rate = limit_pb2.RateLimit(units=units, burst=burst)
    rate.period.FromMilliseconds(ms)
    return rate


def declared_name(task_name: str, kind: str) -> str:
    """The name of a limit a task declares: ``send_email.rate``, ``send_email.concurrency``."""
    return f"{task_name}.{kind}"


def limit_violations(limit: limit_pb2.Limit, path: str = "limit") -> list[Violation]:
    """Every violation of a limit's definition (its name included)."""
    out: list[Violation] = []
    found = names.problem(limit.name, required=True)
    if found is not None:
        out.append(Violation(field=f"{path}.name", description=found[0], reason=found[1]))
    elif limit.name.startswith(RESERVED_PREFIX):
        out.append(
            Violation(
                field=f"{path}.name",
                description=f"must not start with {RESERVED_PREFIX!r}: the tenants' quotas are named so, "
                f"got {quote(limit.name)}",
            )
        )
    kind = limit.WhichOneof("kind")
    if kind is None:
        out.append(Violation(field=path, description="must set rate, concurrency or breaker"))
    elif kind == "rate":
        rate = limit.rate
        if not 1 <= rate.units <= MAX_UNITS:
            out.append(
                Violation(
                    field=f"{path}.rate.units", description=f"must be 1 to {MAX_UNITS}, got {rate.units}"
                )
            )
        ms = period_ms(rate)
        exact = rate.period.nanos % 1_000_000 == 0
        if not (MIN_PERIOD_MS <= ms <= MAX_PERIOD_MS and exact and rate.period.seconds >= 0):
            out.append(
                Violation(
                    field=f"{path}.rate.period",
                    description="must be 1 ms to 1 day, in whole milliseconds",
                )
            )
        if not 0 <= rate.burst <= MAX_UNITS:
            out.append(
                Violation(
                    field=f"{path}.rate.burst", description=f"must be 0 to {MAX_UNITS}, got {rate.burst}"
                )
            )
    elif kind == "breaker":
        out += breaker_violations(limit.breaker, f"{path}.breaker")
    elif not 1 <= limit.concurrency.max_units <= MAX_UNITS:
        out.append(
            Violation(
                field=f"{path}.concurrency.max_units",
                description=f"must be 1 to {MAX_UNITS}, got {limit.concurrency.max_units}",
            )
        )
    if len(limit.description.encode()) > MAX_DESCRIPTION_BYTES:
        out.append(
            Violation(
                field=f"{path}.description", description=f"must be at most {MAX_DESCRIPTION_BYTES} bytes"
            )
        )
    if len(limit.task_name) > MAX_TASK_NAME_CHARS or "\x00" in limit.task_name:
        out.append(
            Violation(
                field=f"{path}.task_name",
                description=f"must be a task name: at most {MAX_TASK_NAME_CHARS} characters, no NUL",
            )
        )
    if limit.key_argument and not limit.task_name:
        out.append(Violation(field=f"{path}.key_argument", description="needs task_name"))
    elif limit.key_argument and not (limit.key_argument.isidentifier() and len(limit.key_argument) <= 255):
        out.append(
            Violation(
                field=f"{path}.key_argument",
                description=f"must be a keyword argument's name, got {quote(limit.key_argument)}",
            )
        )
    return out


def key_violations(path: str, key: str) -> list[Violation]:
    if len(key) <= MAX_KEY_BYTES // 4 or len(key.encode()) <= MAX_KEY_BYTES:
        return (
            [] if "\x00" not in key else [Violation(field=path, description="must not contain NUL (\\u0000)")]
        )
    return [
        Violation(field=path, description=f"must be at most {MAX_KEY_BYTES} bytes, got {len(key.encode())}")
    ]


def use_violations(
    uses: Sequence[limit_pb2.LimitUse],
    fairness_key: str,
    *,
    path: str,
    uses_field: str = "limits",
    limits: Container[str] | None = None,
    burst: dict[str, int] | None = None,
    max_uses: int = MAX_USES,
) -> list[Violation]:
    """Every violation of a task's limit uses and fairness key. ``limits``: the names
    that exist (None: not checked); ``burst``: each limit's most units at once;
    ``max_uses``: MAX_USES as submitted, MAX_STORED_USES with the declared ones."""
    out = key_violations(f"{path}.fairness_key", fairness_key) if fairness_key else []
    if len(uses) > max_uses:
        out.append(
            Violation(field=f"{path}.{uses_field}", description=f"at most {max_uses} limits, got {len(uses)}")
        )
        return out
    seen: set[str] = set()
    for i, use in enumerate(uses):
        at = f"{path}.{uses_field}[{i}]"
        if not use.limit:
            out.append(Violation(field=f"{at}.limit", description="must not be empty"))
        elif limits is not None and use.limit not in limits:
            out.append(
                Violation(
                    field=f"{at}.limit",
                    description=f"no limit named {quote(use.limit)}",
                    reason=UNKNOWN_LIMIT,
                )
            )
        elif use.limit in seen:
            out.append(Violation(field=f"{at}.limit", description=f"{quote(use.limit)} is used twice"))
        seen.add(use.limit)
        out.extend(key_violations(f"{at}.key", use.key))
        if use.units < 0:
            out.append(Violation(field=f"{at}.units", description=f"must not be negative, got {use.units}"))
        elif burst is not None and use.limit in burst and units_of(use) > burst[use.limit]:
            out.append(
                Violation(
                    field=f"{at}.units",
                    description=f"{units_of(use)} units can never be admitted: "
                    f"{quote(use.limit)} admits at most {burst[use.limit]} at once",
                )
            )
    return out


def weight_violations(weight: limit_pb2.KeyWeight, path: str = "weight") -> list[Violation]:
    out = key_violations(f"{path}.key", weight.key)
    if not 0 <= weight.weight <= MAX_WEIGHT:
        out.append(
            Violation(field=f"{path}.weight", description=f"must be 0 to {MAX_WEIGHT}, got {weight.weight}")
        )
    return out


def declared_key(kwargs_json: bytes, argument: str) -> str:
    """The key of a declared limit: the task's keyword argument ``argument`` (a
    string as it is, anything else as JSON), "" when absent, cut to MAX_KEY_BYTES."""
    if not argument or not kwargs_json:
        return ""
    try:
        kwargs = json.loads(kwargs_json)
    except ValueError:
        return ""
    value = kwargs.get(argument) if isinstance(kwargs, dict) else None
    if value is None:
        return ""
    key = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return key.encode()[:MAX_KEY_BYTES].decode(errors="ignore")


def add_declared(record: task_record_pb2.TaskRecord, declared: Sequence[limit_pb2.Limit]) -> None:
    """Add to ``record``'s flow the limits its name declares (``declared``: those of
    its name), except the ones it names itself: every path a task is created by
    (a submission, a schedule's run) gives it the same uses. ``flow.declared`` names
    the ones added, for the store to tell them from a tenant's own of that name."""
    given = {u.limit for u in record.flow.uses}
    for limit in declared:
        if limit.name not in given:
            record.flow.uses.add(limit=limit.name, key=declared_key(record.kwargs_json, limit.key_argument))
            # By origin: a tenant's own limit may bear the same name (it is stored
            # qualified, the pool's stays bare; result_store insert_checks).
            record.flow.declared.append(limit.name)
