"""The store's SQL takes named parameters (``:ids``), rewritten once at load to
asyncpg's ``$n`` in the order they first appear; callers pass values by name."""

from __future__ import annotations

import re

import pytest

from taskyard.result_store import queries
from taskyard.result_store.queries import STATEMENTS, Statement, bind, to_positional


def test_names_become_positions_in_order_of_first_appearance() -> None:
    sql, params = to_positional("SELECT :b, :a, :b + 1, :a_2 FROM t WHERE x = :a")
    assert sql == "SELECT $1, $2, $1 + 1, $3 FROM t WHERE x = $2"
    assert params == ("b", "a", "a_2")


def test_casts_are_not_parameters() -> None:
    sql, params = to_positional("SELECT :ids::uuid[], x::text, :tokens::text::text[], y::int")
    assert sql == "SELECT $1::uuid[], x::text, $2::text::text[], y::int"
    assert params == ("ids", "tokens")


@pytest.mark.parametrize(
    "text",
    [
        "'a :quoted word'",
        "'it''s :still quoted'",
        "E'an escaped \\' :quote'",
        "e'\\\\'",
        '":quoted_name"',
        "$$ :body $$",
        "$fn$ :body $ :more $fn$",
        "$fn1$ :body with a digit in its tag $fn1$",
        "/* a :comment\n   over lines */",
        "-- a :comment to the end of the line",
    ],
)
def test_literals_quoted_names_and_comments_are_left_alone(text: str) -> None:
    sql, params = to_positional(f"SELECT :before, {text}\n, :after")
    assert sql == f"SELECT $1, {text}\n, $2"
    assert params == ("before", "after")


def test_a_word_ending_in_e_before_a_string_is_no_escape_string() -> None:
    sql, params = to_positional("SELECT 1 WHERE name='\\' AND x = :x")
    assert (sql, params) == ("SELECT 1 WHERE name='\\' AND x = $1", ("x",))


def test_positional_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\$2"):
        to_positional("SELECT :a, $2")
    assert to_positional("SELECT '$2', 1 -- $3") == ("SELECT '$2', 1 -- $3", ())


@pytest.mark.parametrize("count", [0, 1, 2, 5])
def test_arguments_come_from_names_in_parameter_order(count: int) -> None:
    names = [f"p{i}" for i in range(count)]
    statement = Statement.of("q", "SELECT " + ", ".join(f":{n}" for n in reversed(names)))
    values = {n: i for i, n in enumerate(names)}
    assert statement.args(values) == tuple(reversed(range(count)))


def test_missing_or_unknown_names_are_refused() -> None:
    statement = Statement.of("q", "SELECT :a, :b")
    with pytest.raises(TypeError, match=r"missing \['b'\], unknown \[\]"):
        statement.args({"a": 1})
    with pytest.raises(TypeError, match=r"missing \['b'\], unknown \['c'\]"):
        statement.args({"a": 1, "c": 2})
    with pytest.raises(TypeError, match=r"missing \[\], unknown \['c'\]"):
        statement.args({"a": 1, "b": 2, "c": 3})


def test_bind_gives_the_text_then_the_arguments() -> None:
    assert bind("bump_counter", delta=2, name="n") == (queries.Q["bump_counter"], "n", 2)
    assert bind("all_task_names") == (queries.Q["all_task_names"],)
    with pytest.raises(TypeError):
        bind("bump_counter", name="n")


def test_every_statement_of_the_store_is_named() -> None:
    assert len(STATEMENTS) > 50
    for name, statement in STATEMENTS.items():
        used = {int(n) for n in re.findall(r"\$(\d+)", statement.sql)}
        assert used == set(range(1, len(statement.params) + 1)), name
        assert queries.Q[name] == statement.sql
    assert {
        "record",
        "schedule",
        "expired_keys",
        "leader_term",
        "heartbeat_rows",
        "dead_letter_filter",
        "redrive_columns",
        "tenant_row",
        "scoped_task_ids",
        "list_filters",
    } == queries.FRAGMENTS


def test_the_insert_statements_take_the_insert_row_fields() -> None:
    from taskyard.result_store.writes.insert_row import InsertRow

    assert set(STATEMENTS["insert_tasks"].params) == set(InsertRow._fields)
    extra = set(STATEMENTS["insert_tasks_leasing"].params) - set(InsertRow._fields)
    assert extra == {"lease_token", "pool_id", "lease_ms", "lease_term"}
