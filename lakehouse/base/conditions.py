"""A user's filter (`lakehouse simulate --where`) as one boolean expression, and nothing more.

The text is parsed (sqlglot, DuckDB's dialect) and written back from its parse tree, so what reaches
DuckDB is exactly one expression: a filter that closes its parenthesis and adds statements, or pulls
rows from another table or a file through a subquery, is refused with the reason.  A filter reads
the columns of the view it filters (plus `submit_offset`), and functions of them.
"""

from __future__ import annotations

from lakehouse.base.errors import SettingsError


def one_condition(text: str) -> str:
    """The filter as DuckDB SQL written from its parse; SettingsError unless it is one expression
    without subqueries."""
    # Imported here: sqlglot takes ~0.2 s to import, which every `lakehouse simulate` would pay
    # whether or not it has a --where.
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError

    try:
        tree = sqlglot.parse_one(text, read="duckdb", into=exp.Condition)
    except ParseError as exc:
        first = exc.errors[0]["description"] if exc.errors else str(exc)
        raise SettingsError(f"--where {text!r} is not one condition: {' '.join(first.split())}") from None
    if tree is None or isinstance(tree, exp.Query):
        raise SettingsError(f"--where {text!r} is not one condition (a SQL expression such as procs > 4)")
    if any(True for _ in tree.find_all(exp.Query, exp.Subquery, exp.Table)):
        raise SettingsError(f"--where {text!r} reads another table (a subquery): a filter reads the view's columns")
    return tree.sql(dialect="duckdb")
