"""Every command of the `lakehouse` command line, assembled on one app.

One module per command group; each command only parses its options, calls the library and renders
the result.  Importing a module registers its commands on `app`.  A module holding several commands
imports the models and studies inside each command, so that a command loads only its own (the
SWF-log reports need neither cvxpy nor matplotlib, `simulate` no model at all): the one reason for the
imports inside this package's functions.

The command line itself (`lakehouse.cli.main`) loads only the module of the command it runs
(`app_for`): building all 27 commands and importing every module cost each command ~30 ms, 5-9 %
of `lakehouse sql`, `logs` or `simulate`.  `from lakehouse.cli.commands import app` gives them all.
"""

from __future__ import annotations

import importlib

import typer

from lakehouse.cli.root import app as root

#: The module (in this package) of each top-level command...
COMMANDS = {
    "init": "lake",
    "demo": "lake",
    "audit": "lake",
    "migrate": "lake",
    "snapshots": "lake",
    "nightly": "nightly",
    "pack": "pack",
    "sql": "query",
    "views": "query",
    "logs": "query",
    "shell": "query",
    "simulate": "simulate",
    "reproduce": "reproduce",
}
#: ...and of each group of commands, with the name of its app there.
GROUPS = {
    "ingest": ("ingest", "ingest_app"),
    "report": ("report", "report_app"),
    "campaign": ("campaign", "campaign_app"),
    "generate": ("generate", "generate_app"),
    "catalog": ("lake", "catalog_app"),
    "plot": ("plot", "plot_app"),
    "export": ("export", "export_app"),
    "import": ("imports", "import_app"),
    "predictions": ("imports", "predictions_app"),
    "download": ("download", "download_app"),
}

_loaded: set[str] = set()


def load(name: str) -> None:
    """Register the command or group `name` on the root app (once)."""
    if name in _loaded:
        return
    if name in GROUPS:
        module, attribute = GROUPS[name]
        root.add_typer(getattr(importlib.import_module(f"lakehouse.cli.{module}"), attribute), name=name)
    else:
        importlib.import_module(f"lakehouse.cli.{COMMANDS[name]}")
    _loaded.add(name)


def app_for(args: list[str]) -> typer.Typer:
    """The app to run `lakehouse ARGS`: when the first argument names a command, with that command
    only; otherwise (no argument, an option such as --help, a mistyped name) with every command, so
    that the root help and typer's suggestions list them all."""
    if args and (args[0] in COMMANDS or args[0] in GROUPS):
        load(args[0])
    else:
        for name in [*COMMANDS, *GROUPS]:
            load(name)
    return root


def __getattr__(name: str) -> object:
    if name == "app":  # every command: the tests, the docs and users' scripts
        return app_for([])
    raise AttributeError(name)


__all__ = ["COMMANDS", "GROUPS", "app_for", "load"]  # and `app`, made on first use
