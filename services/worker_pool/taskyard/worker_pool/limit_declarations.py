"""Limits declared in code: ``@task(rate_limit="100/s", concurrency=3, limit_key="customer_id")``,
and circuit breakers: ``@task(breaker="5/30s", breaker_cool_down=10, limit_key="host")``.

Each becomes a limit named after the task (core/limits.declared_name:
``send_email.rate``, ``send_email.concurrency``, ``send_email.breaker``) that every task of that name
uses, keyed by the value of its keyword argument ``limit_key`` (per key; without
``limit_key`` one bucket for all). The manager declares them to the result-store
once it is registered (STORE_LIMIT_CHANGE, LIMIT_OP_DECLARE), retrying until the
store answers, as it declares schedules (declarations.py); the scheduler adds
them to each task's flow at submit. A limit of that name a person created is not
overwritten (the store refuses the declaration). Removing a declaration from
code does not delete the limit: ``taskyard limit delete NAME`` does.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import Callable
from typing import Any

from taskyard.core import limit_declarations, limits, rpc
from taskyard.v1 import limit_pb2

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DeclaredLimits:
    """What one ``@task`` declares: a rate (its text, as written), a concurrency, a
    circuit breaker (its text, "5/30s", and cool-down in seconds, 0: the default), or several."""

    task_name: str
    rate: str = ""
    burst: int = 0
    concurrency: int = 0
    key_argument: str = ""
    breaker: str = ""
    breaker_cool_down: float = 0.0

    def to_protos(self) -> list[limit_pb2.Limit]:
        return limit_declarations.declared_limits(
            task_name=self.task_name,
            rate=self.rate,
            burst=self.burst,
            concurrency=self.concurrency,
            key_argument=self.key_argument,
            breaker=self.breaker,
            breaker_cool_down=self.breaker_cool_down,
        )


def _whole(option: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"@task({option}=...) takes a whole number, got {value!r}")
    return value


def declared_limits(
    task_name: str,
    fn: Callable[..., Any],
    *,
    rate_limit: str | None,
    rate_burst: int | None,
    concurrency: int | None,
    limit_key: str | None,
    breaker: str | None = None,
    breaker_cool_down: float | None = None,
) -> DeclaredLimits | None:
    """The limits of ``@task(rate_limit=, concurrency=, breaker=, limit_key=)``, checked
    now with core/limits' rules (a bad one fails at import)."""
    if breaker_cool_down is not None and breaker is None:
        raise ValueError(f"@task({task_name!r}): breaker_cool_down= applies with breaker=")
    if rate_limit is None and concurrency is None and breaker is None:
        for option, value in (("rate_burst", rate_burst), ("limit_key", limit_key)):
            if value is not None:
                raise ValueError(
                    f"@task({task_name!r}): {option}= applies with rate_limit=, concurrency= or breaker="
                )
        return None
    if breaker is not None:
        if not isinstance(breaker, str):
            raise TypeError(f"@task(breaker=...) takes failures/window such as '5/30s', got {breaker!r}")
        try:
            limits.parse_breaker(breaker)
        except ValueError as exc:
            raise ValueError(f"@task({task_name!r}): breaker: {exc}") from None
    if breaker_cool_down is not None and (
        isinstance(breaker_cool_down, bool)
        or not isinstance(breaker_cool_down, int | float)
        or breaker_cool_down <= 0
    ):
        raise ValueError(
            f"@task({task_name!r}): breaker_cool_down= takes seconds above 0, got {breaker_cool_down!r}"
        )
    if rate_burst is not None and rate_limit is None:
        raise ValueError(f"@task({task_name!r}): rate_burst= applies with rate_limit=")
    if rate_limit is not None:
        if not isinstance(rate_limit, str):
            raise TypeError(f"@task(rate_limit=...) takes a rate such as '100/s', got {rate_limit!r}")
        try:
            limits.parse_rate(rate_limit)
        except ValueError as exc:
            raise ValueError(f"@task({task_name!r}): rate_limit: {exc}") from None
    if limit_key is not None:
        if not isinstance(limit_key, str) or not limit_key.isidentifier():
            raise ValueError(f"@task({task_name!r}): limit_key= names a keyword argument, got {limit_key!r}")
        problem = _key_problem(fn, limit_key)
        if problem:
            raise ValueError(f"@task({task_name!r}): limit_key={limit_key!r}, {problem}")
    decl = DeclaredLimits(
        task_name=task_name,
        rate=rate_limit or "",
        burst=0 if rate_burst is None else _whole("rate_burst", rate_burst),
        concurrency=0 if concurrency is None else _whole("concurrency", concurrency),
        key_argument=limit_key or "",
        breaker=breaker or "",
        breaker_cool_down=float(breaker_cool_down or 0.0),
    )
    if concurrency is not None and decl.concurrency < 1:
        raise ValueError(f"@task({task_name!r}): concurrency must be at least 1, got {concurrency}")
    problems = [v for limit in decl.to_protos() for v in limits.limit_violations(limit)]
    if problems:
        said = "; ".join(f"{v.field.removeprefix('limit.')} {v.description}" for v in problems)
        raise ValueError(f"@task({task_name!r}) declares a limit the store would refuse: {said}")
    return decl


def _key_problem(fn: Callable[..., Any], name: str) -> str:
    """Why ``name`` cannot carry a task's key ("" when it can). The scheduler reads
    the key from the task's keyword arguments only: an argument that may be passed
    by position would, so passed, put the task in the empty key (one bucket for
    all) without a word, so it must be keyword-only (or come through **kwargs)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature: it cannot be checked
        return ""
    given = params.get(name)
    if given is not None:
        if given.kind is inspect.Parameter.KEYWORD_ONLY:
            return ""
        if given.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            return (
                "but it may be passed by position, and the key is read from keyword arguments "
                "only (a task so called would share the empty key with every other): make it "
                f"keyword-only, def {getattr(fn, '__name__', 'f')}(..., *, {name})"
            )
        if given.kind is not inspect.Parameter.VAR_KEYWORD:
            return (
                "but it is positional-only, and the key is read from keyword arguments only: "
                f"make it keyword-only, def {getattr(fn, '__name__', 'f')}(..., *, {name})"
            )
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return ""
    return (
        "but the function has no keyword argument of that name: "
        f"add one, def {getattr(fn, '__name__', 'f')}(..., *, {name})"
    )


async def declare(store: rpc.Caller, declarations: list[DeclaredLimits]) -> int:
    """Upsert the limits ``declarations`` make; retried until the store answers. Returns how many."""
    return await limit_declarations.declare_limits(
        store, [limit for d in declarations for limit in d.to_protos()]
    )


async def declare_registered(store: rpc.Caller, names: list[str]) -> int:
    """Declare the limits of the registered tasks ``names``."""
    from taskyard.worker_pool import registry

    decls = [d.limits for d in (registry.get(n) for n in names) if d is not None and d.limits is not None]
    return await declare(store, decls)
