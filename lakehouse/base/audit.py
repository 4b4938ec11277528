"""Audits: queries over the lake that must return no rows (`sql/audits/`, `lakehouse audit`).

Each file names what it checks in its header (`-- audit: name`, `-- description: ...`); a row it
returns is an offender, shown to the user as it is."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import polars as pl

from lakehouse.base.catalog import parse_header
from lakehouse.base.errors import SqlFileError
from lakehouse.base.lake import Lake


@dataclass(frozen=True)
class Audit:
    file_name: str
    name: str
    description: str
    query: str


@dataclass(frozen=True)
class AuditResult:
    audit: Audit
    offenders: pl.DataFrame

    @property
    def passed(self) -> bool:
        return self.offenders.is_empty()


def audit_files() -> list[Audit]:
    """Every audit shipped with the package, in file-name order."""
    folder = resources.files("lakehouse.sql").joinpath("audits")
    audits = []
    for path in sorted((p for p in folder.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name):
        meta, body = parse_header(path.name, path.read_text(encoding="utf-8"))
        if not {"audit", "description"} <= meta.keys() or not body:
            raise SqlFileError(f"sql/audits/{path.name}: needs `-- audit:` and `-- description:` lines, then a query")
        audits.append(Audit(path.name, meta["audit"], meta["description"], body.rstrip().rstrip(";")))
    return audits


def run_audits(lake: Lake, audits: list[Audit] | None = None) -> list[AuditResult]:
    """Run the audits (all by default) on one snapshot of the lake."""
    with lake.reading():
        return [AuditResult(audit, lake.query(audit.query)) for audit in audits or audit_files()]


def summary(results: list[AuditResult]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "audit": [r.audit.name for r in results],
            "status": ["ok" if r.passed else "FAILED" for r in results],
            "offending_rows": [r.offenders.height for r in results],
            "checks": [r.audit.description for r in results],
        },
        schema={"audit": pl.String, "status": pl.String, "offending_rows": pl.Int64, "checks": pl.String},
    )
