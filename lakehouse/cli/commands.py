"""Every command of the `lakehouse` command line, assembled on one app.

One module per command group; each command only parses its options, calls the library and renders
the result.  Importing a module registers its commands on `app`."""

from __future__ import annotations

from lakehouse.cli import lake, nightly, pack, query, simulate  # noqa: F401  (top-level commands)
from lakehouse.cli.campaign import campaign_app
from lakehouse.cli.export import export_app
from lakehouse.cli.generate import generate_app
from lakehouse.cli.ingest import ingest_app
from lakehouse.cli.lake import catalog_app
from lakehouse.cli.plot import plot_app
from lakehouse.cli.report import report_app
from lakehouse.cli.root import app

app.add_typer(ingest_app, name="ingest")
app.add_typer(report_app, name="report")
app.add_typer(campaign_app, name="campaign")
app.add_typer(generate_app, name="generate")
app.add_typer(catalog_app, name="catalog")
app.add_typer(plot_app, name="plot")
app.add_typer(export_app, name="export")


__all__ = ["app"]
