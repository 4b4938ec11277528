"""Which statements of `lakehouse sql` could write a file: what runs without --allow-writes."""

from __future__ import annotations

import re

import duckdb

#: Statement kinds that read only (SET and PRAGMA change settings of the session alone).
#: (Not PREPARE: a prepared statement may be a COPY.)
#: What `lakehouse sql` runs without --allow-writes (CALL is left out: `CALL enable_logging(...)` writes
#: files; `SELECT * FROM f()` reads the same table functions).
READ_ONLY_STATEMENTS = {"SELECT", "EXPLAIN", "SET", "VARIABLE_SET", "PRAGMA", "TRANSACTION", "PREPARE", "EXECUTE"}
#: The statements that hold another one, and how their text begins before it (checked in its turn).
_WRAPPERS = {
    "EXPLAIN": re.compile(r"EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?:\([^()]*\)\s*)?", re.IGNORECASE),
    "PREPARE": re.compile(r"PREPARE\s+\w+\s+AS\s+", re.IGNORECASE),
}
#: Table functions that write files although a SELECT calls them (DuckDB's log writer), refused by name.
_WRITING_FUNCTIONS = re.compile(r"\benable_logging\b", re.IGNORECASE)
_LEADING_COMMENTS = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)


def statement_writes(con: duckdb.DuckDBPyConnection, statement: duckdb.Statement) -> str | None:
    """The kind of a statement that could write, if it is one (what EXPLAIN or PREPARE holds included);
    None for a statement that only reads."""
    kind = statement.type.name
    if kind not in READ_ONLY_STATEMENTS:
        return kind
    if found := _WRITING_FUNCTIONS.search(statement.query):
        return found.group(0)
    if kind not in _WRAPPERS:
        return None
    text = statement.query
    text = text[_LEADING_COMMENTS.match(text).end() :]  # type: ignore[union-attr]  # matches always
    head = _WRAPPERS[kind].match(text)
    if head is None:
        return kind  # a form not understood: refused rather than guessed
    try:
        inner = con.extract_statements(text[head.end() :])
    except duckdb.Error:
        return kind
    if len(inner) != 1:
        return kind
    problem = statement_writes(con, inner[0])
    return None if problem is None else f"{kind} {problem}"
