"""The crontab line and the systemd service + timer that start `lakehouse nightly` every night,
filled in with this installation's command and the run's own folders."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from lakehouse.base.errors import SettingsError


def command_line(inbox: Path, lake: Path, config: Path | None, options: Sequence[str] = ()) -> str:
    """The command as the scheduler runs it: absolute paths, the `lakehouse` of this installation, and
    the `options` given to this one that the scheduled runs keep (the memory budget)."""
    program = shutil.which("lakehouse") or f"{sys.executable} -m lakehouse.cli"
    parts = [*shlex.split(program), "nightly", "--inbox", str(inbox.absolute()), "--lake", str(lake.absolute())]
    if config is not None:
        parts += ["--config", str(config.absolute())]
    return shlex.join([*parts, *options])


def _checked(*texts: object) -> None:
    """A newline (or another control character) in a path or an option would end the unit's line or
    the crontab's and start another (an `ExecStartPre=` of the attacker's): refused."""
    for text in texts:
        if text is not None and any(ord(c) < 32 or c == "\x7f" for c in str(text)):
            raise SettingsError(
                f"{str(text)!r}: a newline or another control character cannot go into a systemd unit or a "
                "crontab line; rename it"
            )


def for_systemd(text: str) -> str:
    """Text as a unit file keeps it: a backslash, a `%` (a specifier) and a `$` (a variable) escaped."""
    return text.replace("\\", "\\\\").replace("%", "%%").replace("$", "$$")


def for_cron(text: str) -> str:
    """A command as a crontab keeps it: cron turns an unescaped `%` into a newline."""
    return text.replace("%", "\\%")


def crontab(inbox: Path, lake: Path, config: Path | None, at: str = "02:30", options: Sequence[str] = ()) -> str:
    _checked(inbox, lake, config, *options)
    hour, minute = at.split(":")
    log = shlex.quote(str((lake / "nightly.log").absolute()))
    command = for_cron(command_line(inbox, lake, config, options))
    return f"{int(minute)} {int(hour)} * * * {command} >> {for_cron(log)} 2>&1"


def systemd_units(
    inbox: Path, lake: Path, config: Path | None, at: str = "02:30", options: Sequence[str] = ()
) -> dict[str, str]:
    """lakehouse-nightly.service and lakehouse-nightly.timer, by file name."""
    _checked(inbox, lake, config, *options)
    service = f"""[Unit]
Description=lakehouse nightly re-analysis of {for_systemd(str(inbox.absolute()))}
After=network-online.target

[Service]
Type=oneshot
ExecStart={for_systemd(command_line(inbox, lake, config, options))}
# 0 all ok, 1 partial (some files or reports failed), 2 nothing could be done, 75 another run holds the lake.
SuccessExitStatus=75
Nice=10
"""
    timer = f"""[Unit]
Description=Start the lakehouse nightly re-analysis every night

[Timer]
OnCalendar=*-*-* {at}:00
Persistent=true
RandomizedDelaySec=5min

[Install]
WantedBy=timers.target
"""
    return {"lakehouse-nightly.service": service, "lakehouse-nightly.timer": timer}


def instructions(inbox: Path, lake: Path, config: Path | None, at: str = "02:30", options: Sequence[str] = ()) -> str:
    """What `lakehouse nightly --print-systemd` prints: both units, then how to install them, then the
    crontab alternative."""
    units = systemd_units(inbox, lake, config, at, options)
    text = []
    for name, body in units.items():
        text += [f"# ~/.config/systemd/user/{name}", body]
    text += [
        "# then: systemctl --user daemon-reload && systemctl --user enable --now lakehouse-nightly.timer",
        "# and, so that the timer fires while you are logged out: loginctl enable-linger $USER",
        "# (system-wide: the same files in /etc/systemd/system/, without --user)",
        "",
        "# or, with cron (crontab -e):",
        crontab(inbox, lake, config, at, options),
    ]
    return "\n".join(text) + "\n"
