"""The options of the replay settings a user tunes, made from their declarations (`TUNABLES`).

`simulate` takes each as one value, `campaign run` as a comma-separated list (the grid's values); both
get the help, group and default its `ReplaySettings` field declares, so a setting added there is an
option of both with nothing to edit here.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

from lakehouse.base.errors import SettingsError
from lakehouse.sim.settings import NO_THRESHOLD, TUNABLE_DEFAULTS, TUNABLES, Tunable

F = TypeVar("F", bound=Callable[..., Any])


def written_default(name: str) -> str:
    """A tunable setting's default as a user writes it: `7d`, `fcfs`, `none`."""
    declared, default = TUNABLES[name], TUNABLE_DEFAULTS[name]
    if declared.written_default is not None:
        return declared.written_default
    if default is None:
        return NO_THRESHOLD
    return str(default.value if isinstance(default, enum.Enum) else default)


def _checked_as_read(declared: Tunable) -> Callable[[Any], Any] | None:
    """`simulate`'s check of one value as the command line is read: its declared check, then its reading
    (a duration to seconds), either's problem a usage error in its words."""
    if declared.check is None and declared.read is None:
        return None

    def callback(value: Any) -> Any:
        if value is None or not isinstance(value, str):
            return value
        try:
            value = declared.check(value) if declared.check is not None else value
            return declared.read(value) if declared.read is not None else value
        except SettingsError as exc:
            raise typer.BadParameter(str(exc)) from None

    return callback


def _one_value(name: str, declared: Tunable) -> inspect.Parameter:
    spec = typer.Option(rich_help_panel=declared.panel, help=declared.help, callback=_checked_as_read(declared))
    default = declared.written_default if declared.written_default is not None else TUNABLE_DEFAULTS[name]
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[declared.kind, spec]
    )


def _list_of_values(name: str, declared: Tunable) -> inspect.Parameter:
    text = f"{declared.help} Comma-separated list [default: {written_default(name)}]."
    spec = typer.Option(rich_help_panel=declared.panel, help=text, show_default=False)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[str | None, spec])


def taking_tunables(*, after: str, lists: bool = False) -> Callable[[F], F]:
    """Give a command that takes `**tuned` one option per tunable setting, placed after its parameter
    `after`: one value each (`simulate`; given to the command read and checked) or, with `lists`, a
    comma-separated list of values each, as the command line gave it (a campaign's grid)."""
    make = _list_of_values if lists else _one_value

    def give(command: F) -> F:
        # The command's own parameters with their annotations resolved (`from __future__ import annotations`
        # leaves text, which typer would read without the options' help and groups).
        hints = get_type_hints(command, include_extras=True)
        own = [
            p.replace(annotation=hints.get(p.name, p.annotation))
            for p in inspect.signature(command).parameters.values()
            if p.kind is not p.VAR_KEYWORD
        ]
        at = [p.name for p in own].index(after) + 1
        tunables = [make(name, declared) for name, declared in TUNABLES.items()]
        keyword_only = [p.replace(kind=p.KEYWORD_ONLY) for p in own[at:]]
        command.__signature__ = inspect.Signature([*own[:at], *tunables, *keyword_only])  # type: ignore[attr-defined]
        return command

    return give
