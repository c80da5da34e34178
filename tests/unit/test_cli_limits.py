"""``taskyard limit ...`` and ``task submit --limit``: what the command line says, read before
any call (a bad one exits 2 and reaches no gateway), and how a limit prints."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner, Result

from taskyard.cli.limit_view import amount, rate_text, uses_text
from taskyard.cli.main import cli
from taskyard.cli.task_arguments import parse_limits
from taskyard.client import LimitUse
from taskyard.core import limits as rules
from taskyard.v1 import limit_pb2

# Nothing listens there: a command that got past its arguments would exit 5 (UNAVAILABLE).
NOWHERE = "127.0.0.1:1"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "--target", NOWHERE])


def _limits(*values: str) -> tuple[LimitUse, ...]:
    return parse_limits(click.Context(click.Command("x")), click.Option(["--limit"]), values)


def test_a_limit_is_a_name_with_units_and_a_key_split_at_the_first_equals() -> None:
    assert _limits("openai", "per-customer=customer:42", "tokens*500=c:1=x", "api=") == (
        LimitUse(limit="openai"),
        LimitUse(limit="per-customer", key="customer:42"),
        LimitUse(limit="tokens", key="c:1=x", units=500),
        LimitUse(limit="api", key=""),
    )
    # A key may hold '*': only the name's part is read for units.
    assert _limits("api=a*b") == (LimitUse(limit="api", key="a*b"),)


@pytest.mark.parametrize(
    "value",
    [
        "=k",
        "*2=k",
        "tokens*=k",
        "tokens*0",
        "tokens*x=k",
        "tokens*-1",
        # Digits outside ASCII ('²'.isdigit() is true) and units past any limit's.
        "x*²",
        "x*٣=k",
        "x*+3",
        "x* 3",
        f"x*{rules.MAX_UNITS + 1}=k",
        "x*99999999999999999999=k",
    ],
)
def test_a_misshapen_limit_is_a_usage_error(value: str) -> None:
    result = run("task", "submit", "add", "--limit", value)
    assert result.exit_code == 2, result.output
    assert "--limit" in result.stderr and value in result.stderr


def test_what_a_task_uses_prints_as_limit_takes_it_back() -> None:
    uses = [
        limit_pb2.LimitUse(limit="openai"),
        limit_pb2.LimitUse(limit="per-customer", key="customer:42"),
        limit_pb2.LimitUse(limit="tokens", key="c:1", units=500),
    ]
    text = uses_text(uses)
    assert text == "openai, per-customer=customer:42, tokens*500=c:1"
    back = _limits(*text.split(", "))
    assert [(u.limit, u.key, u.units or 1) for u in back] == [(u.limit, u.key, u.units or 1) for u in uses]


@pytest.mark.parametrize("text", ["100/s", "10/min", "5/2s", "1000/h", "3/d", "7/250ms", "1/90s"])
def test_a_rate_prints_as_rate_takes_it(text: str) -> None:
    parsed = rules.parse_rate(text)
    assert rate_text(parsed) == text
    assert rules.parse_rate(rate_text(parsed)) == parsed


def test_a_breaker_prints_its_threshold_cool_down_and_probes() -> None:
    spec = limit_pb2.Limit(name="p", breaker=rules.parse_breaker("5/30s"))
    assert amount(spec) == "opens at 5/30s failed, cool-down 30s, 1 probe(s)"
    spec.breaker.cool_down.FromSeconds(10)
    spec.breaker.half_open_probes = 2
    assert amount(spec) == "opens at 5/30s failed, cool-down 10s, 2 probe(s)"


def test_amounts() -> None:
    rate = limit_pb2.Limit(name="a", rate=rules.parse_rate("100/s", burst=20))
    assert amount(rate) == "100/s, burst 20"
    assert (
        amount(limit_pb2.Limit(name="b", concurrency=limit_pb2.ConcurrencyLimit(max_units=3))) == "3 at once"
    )


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["create", "x"], "give exactly one of --rate, --concurrency and --breaker"),
        (
            ["create", "x", "--rate", "5/s", "--concurrency", "2"],
            "give exactly one of --rate, --concurrency and --breaker",
        ),
        (["create", "x", "--rate", "100 per second"], "a rate is units/period"),
        (["create", "x", "--concurrency", "0"], "0 is not in the range x>=1"),
        (["create", "x", "--concurrency", "3", "--burst", "4"], "--burst applies to a rate limit"),
        (["update", "x"], "nothing to change"),
        # Refused before any call: a concurrency limit has no burst to keep it in.
        (["update", "x", "--concurrency", "3", "--burst", "50"], "--burst applies to a rate limit"),
        (
            ["update", "x", "--rate", "5/s", "--concurrency", "3"],
            "give one of --rate, --concurrency and --breaker",
        ),
        (["weight", "tenant-a", "1001"], "1001 is not in the range 0<=x<=1000"),
        (["create", "x", "--breaker", "five"], "a breaker is failures/window"),
        (["create", "x", "--breaker", "5/30s", "--burst", "2"], "--burst applies to a rate limit only"),
        (["create", "x", "--rate", "5/s", "--cool-down", "10s"], "apply to a --breaker only"),
        (["create", "x", "--breaker", "5/30s", "--cool-down", "soon"], "is not a duration"),
        (["create", "x", "--breaker", "5/30s", "--probes", "0"], "0 is not in the range 1<=x<=1000"),
        (["create", "x", "--breaker", "5/30s", "--rate", "5/s"], "give exactly one of"),
        (["create", "x", "--rate", "5/s", "--max-refunds", "3"], "apply to a --breaker only"),
        (
            ["create", "x", "--breaker", "5/30s", "--max-refunds", "10001"],
            "10001 is not in the range 1<=x<=10000",
        ),
        (["create", "x", "--breaker", "5/30s", "--max-outage", "soon"], "is not a duration"),
    ],
)
def test_bad_limit_commands_are_usage_errors(args: list[str], text: str) -> None:
    result = run("limit", *args)
    assert result.exit_code == 2, result.output
    assert text in result.stderr, result.stderr


def test_delete_asks_first() -> None:
    result = run("limit", "delete", "x")
    assert result.exit_code == 2
    assert "pass --yes" in result.stderr, result.stderr


def test_a_breakers_refund_bounds_go_onto_its_limit_and_keep_its_other_numbers() -> None:
    import datetime as dt

    from taskyard.cli import limit as limit_cli

    limit = limit_pb2.Limit(name="payments", breaker=rules.parse_breaker("5/30s"))
    limit.breaker.half_open_probes = 2
    tuning = limit_cli._Breaker(
        spec=None,
        cool_down=None,
        probes=None,
        min_attempts=None,
        max_refunds=3,
        max_outage=dt.timedelta(minutes=10),
    )
    limit_cli._apply(limit, None, None, None, tuning)
    assert limit.breaker.max_refunds_per_task == 3
    assert rules.max_outage_ms(limit.breaker) == 600_000
    assert (limit.breaker.failure_threshold, limit.breaker.half_open_probes) == (5, 2)
    assert not rules.breaker_violations(limit.breaker, "limit.breaker")
