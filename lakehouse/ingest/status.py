"""What became of one input file (an SWF log or a Google trace part), shared by both ingests."""

from __future__ import annotations

import enum


class Status(enum.StrEnum):
    ok = "ok"  # parsed and committed (its bad lines, if any, in the quarantine)
    unchanged = "unchanged"  # same content as the committed copy: skipped
    failed = "failed"  # not ingested (broken, unreadable): the lake keeps its previous copy, if any
