"""The task registry: ``@task`` registers a function (sync or async) under a name.

Modules named in ``Settings.task_modules`` are imported in every worker process
(to run the functions) and in the manager (which only needs their names).
"""
# Length: task() is the decorator's one place for every option a task declares.

from __future__ import annotations

import dataclasses
import datetime
import importlib
import inspect
from collections.abc import Callable, Iterable
from typing import Any, TypedDict, TypeVar, Unpack, overload

from taskyard.core.retry import RetryOptions
from taskyard.worker_pool.declarations import Declared, declared
from taskyard.worker_pool.limit_declarations import DeclaredLimits, declared_limits

F = TypeVar("F", bound=Callable[..., Any])

_REGISTRY: dict[str, TaskDef] = {}
_IN_WORKER = False


@dataclasses.dataclass(frozen=True)
class TaskDef:
    name: str
    fn: Callable[..., Any]
    is_async: bool
    # Seconds per attempt; None = the record's timeout or Settings.task_timeout.
    timeout: float | None = None
    max_retries: int | None = None
    # Backoff overrides and non-retryable types (core.retry).
    retry: RetryOptions | None = None
    # @task(cron=...)/@task(every=...): the pool declares it at start-up (declarations.py).
    schedule: Declared | None = None
    # @task(rate_limit=..., concurrency=...): the pool declares them at start-up (limit_declarations.py).
    limits: DeclaredLimits | None = None

    @property
    def qualified(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"


class TaskOptions(TypedDict, total=False):
    """What ``@task(...)`` takes (see ``task``). One signature for both the overload
    and the implementation; a key left out is None unless its comment says otherwise."""

    name: str | None  # left out: the function's name
    timeout: float | None
    max_retries: int | None
    retry_backoff: float | None
    retry_backoff_max: float | None
    retry_jitter: float | None
    dont_retry: Iterable[type[BaseException] | str] | type[BaseException] | str  # left out: ()
    cron: str | None
    tz: str  # left out: "" (UTC)
    every: float | datetime.timedelta | None
    overlap: str  # left out: "skip"
    rate_limit: str | None  # "100/s", "10/min", "5/2s"
    rate_burst: int | None  # left out: the rate's units
    concurrency: int | None
    limit_key: str | None  # a keyword argument of the task
    breaker: str | None  # a circuit breaker: "5/30s", open at 5 failed attempts within 30 s
    breaker_cool_down: float | None  # seconds it stays open before a probe (default 30)


@overload
def task(fn: F, /) -> F: ...


@overload
def task(**options: Unpack[TaskOptions]) -> Callable[[F], F]: ...


def task(fn: F | None = None, /, **options: Unpack[TaskOptions]) -> F | Callable[[F], F]:
    """Register a task function: ``@task`` or ``@task(name=..., timeout=..., max_retries=...)``.

    Retries (see ``taskyard.core.retry`` for the formula): ``retry_backoff`` is the
    first delay in seconds (doubled per failed attempt), ``retry_backoff_max`` its
    cap, ``retry_jitter`` the fraction (0..1) a delay may be cut by at random;
    unset, the deployment's values apply. ``dont_retry`` names exception types
    (classes or names) that end the task FAILURE at once.

    Periodic (docs/schedules.md): ``cron="*/5 * * * *"`` with ``tz="Europe/Paris"``,
    or ``every=timedelta(minutes=5)``, declares a schedule named after the task
    (``overlap="skip"`` or ``"allow"``); pools upsert it when they start.

    Flow control (docs/flow-control.md): ``rate_limit="100/s"`` (bursts of up to
    ``rate_burst``, default its units) and ``concurrency=3`` declare limits named
    ``<name>.rate`` and ``<name>.concurrency`` that every task of this name takes a
    unit of; with ``limit_key="customer_id"`` they hold per value of that keyword-only
    argument, ``def f(..., *, customer_id)`` ("at most 3 at once per customer"). Pools
    upsert them when they start. ``breaker="5/30s"`` (``breaker_cool_down`` seconds,
    default 30) declares a circuit breaker ``<name>.breaker``, per ``limit_key`` value
    (one per downstream) when given.

    The function is returned unchanged, so it can still be called directly.
    """
    unknown = options.keys() - TaskOptions.__optional_keys__
    if unknown:
        # What a signature with these keywords spelled out would raise.
        raise TypeError(f"task() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    timeout = options.get("timeout")
    max_retries = options.get("max_retries")
    if timeout is not None and timeout <= 0:
        raise ValueError("timeout must be positive")
    if max_retries is not None and max_retries < 0:
        raise ValueError("max_retries must be >= 0")
    retry = _retry_options(options)

    def register(f: F) -> F:
        if not callable(f):
            raise TypeError(f"@task needs a function, got {f!r}")
        tname = options.get("name") or f.__name__
        if not tname:
            raise ValueError("a task needs a name")
        schedule = declared(
            tname,
            cron=options.get("cron"),
            tz=options.get("tz", ""),
            every=options.get("every"),
            overlap=options.get("overlap", "skip"),
        )
        flow = declared_limits(
            tname,
            f,
            rate_limit=options.get("rate_limit"),
            rate_burst=options.get("rate_burst"),
            concurrency=options.get("concurrency"),
            limit_key=options.get("limit_key"),
            breaker=options.get("breaker"),
            breaker_cool_down=options.get("breaker_cool_down"),
        )
        tdef = TaskDef(
            name=tname,
            fn=f,
            is_async=inspect.iscoroutinefunction(f),
            timeout=timeout,
            max_retries=max_retries,
            retry=retry,
            schedule=schedule,
            limits=flow,
        )
        existing = _REGISTRY.get(tname)
        # Re-importing a module re-registers the same function: harmless.
        if existing is not None and existing.qualified != tdef.qualified:
            raise ValueError(f"task name {tname!r} is already registered by {existing.qualified}")
        _REGISTRY[tname] = tdef
        return f

    if fn is not None:
        return register(fn)
    return register


def _retry_options(options: TaskOptions) -> RetryOptions | None:
    """The task's own retry options, None when it sets none (the deployment's apply)."""
    dont_retry = options.get("dont_retry", ())
    retry = RetryOptions(
        backoff=options.get("retry_backoff"),
        backoff_max=options.get("retry_backoff_max"),
        jitter=options.get("retry_jitter"),
        dont_retry=(dont_retry,) if isinstance(dont_retry, str | type) else tuple(dont_retry),
    )
    return None if retry.is_default else retry


def get(name: str) -> TaskDef | None:
    return _REGISTRY.get(name)


def names() -> list[str]:
    return sorted(_REGISTRY)


def load_modules(modules: Iterable[str]) -> list[str]:
    """Import the modules that define tasks; returns the registered names."""
    for module in modules:
        importlib.import_module(module)
    return names()


def unregister(name: str) -> None:
    """Forget a task (tests)."""
    _REGISTRY.pop(name, None)


def is_worker_process() -> bool:
    """True inside a pool's worker process (application code may skip manager-only work)."""
    return _IN_WORKER


def _mark_worker_process() -> None:
    global _IN_WORKER
    _IN_WORKER = True
