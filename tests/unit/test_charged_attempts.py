"""The pool's view of charged attempts: a re-run that spent no retry (its record's
``uncharged_attempts``) gets the backoff of its charged number, and its task
context keys children by it, so a re-run finds the children it made before."""

from __future__ import annotations

import random

from support.fake_scheduler import make_record

from taskyard.core.retry import RetryPolicy
from taskyard.worker_pool import attempts, context
from taskyard.worker_pool.worker import Runner


class NoJitter(random.Random):
    def random(self) -> float:
        return 0.0


def test_charged_attempt_discounts_uncharged_runs() -> None:
    rec = make_record("add", 1, 2, attempt=3)
    assert attempts.charged_attempt(rec) == 3
    rec.uncharged_attempts = 2
    assert attempts.charged_attempt(rec) == 1
    rec.uncharged_attempts = 5  # never below the first attempt
    assert attempts.charged_attempt(rec) == 1


def test_backoff_follows_the_charged_attempt() -> None:
    runner = Runner(concurrency=1, default_timeout=30.0, worker="w")
    runner.retry_policy = RetryPolicy(base_seconds=1.0, cap_seconds=300.0, jitter=0.0)
    runner.retry_rng = NoJitter()
    try:
        first = make_record("add", 1, 2, attempt=1)
        rerun = make_record("add", 1, 2, attempt=3)
        rerun.uncharged_attempts = 2  # two runs that spent no retry: still the first charged one
        assert runner.retry_delay_ms_for(rerun) == runner.retry_delay_ms_for(first) == 1000
        rerun.uncharged_attempts = 1
        assert runner.retry_delay_ms_for(rerun) == 2000
    finally:
        runner.close()


def test_context_keeps_the_execution_attempt_and_the_charged_one() -> None:
    rec = make_record("add", 1, 2, attempt=2)
    rec.uncharged_attempts = 1
    ctx = context.for_record(rec)
    assert ctx.attempt == 2 and ctx.charged_attempt == 1
