"""A no-transaction migration's statements: split at each ``;`` outside a ``$$`` body,
its comment lines dropped, a function's body kept whole."""

from __future__ import annotations

from taskyard.result_store.migrate import statements


def test_a_function_body_is_one_statement_and_comments_are_dropped() -> None:
    sql = """-- taskyard: no-transaction
-- a comment; with a semicolon
CREATE INDEX CONCURRENTLY IF NOT EXISTS a_idx ON t (a);
CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1;
  RETURN 2;
END
$$;
DROP INDEX CONCURRENTLY IF EXISTS b_idx;
"""
    found = statements(sql)
    assert len(found) == 3
    assert found[0] == "CREATE INDEX CONCURRENTLY IF NOT EXISTS a_idx ON t (a)"
    assert found[1].startswith("CREATE OR REPLACE FUNCTION f()") and found[1].endswith("END\n$$")
    assert found[2] == "DROP INDEX CONCURRENTLY IF EXISTS b_idx"
