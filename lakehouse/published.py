"""The numbers the published studies report, as typed from the papers: one data file in the package
(lakehouse/data/published.csv), one row per number, with the table it comes from, the trace, the
archive log it corresponds to and the setting the paper states for it.

`lakehouse reproduce` prints our value beside each; the studies that print a published figure beside
their own (`report hmm-backfilling`) read it here too.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from importlib import resources

#: The papers, as cited in the output (the data file names the study only).
PAPERS = {
    "locality": "A. Nissimov (D. Feitelson), Locality and its usage in parallel job runtime distribution "
    "modeling using HMM, MSc thesis, Hebrew University, 2006, chapter 2",
    "hmm": "A. Nissimov (D. Feitelson), Locality and its usage in parallel job runtime distribution "
    "modeling using HMM, MSc thesis, Hebrew University, 2006, chapter 3",
    "hmm-backfilling": "A. Nissimov (D. Feitelson), Locality and its usage in parallel job runtime distribution "
    "modeling using HMM, MSc thesis, Hebrew University, 2006, chapter 5",
    "packing": "O. Beaumont, I. Belaid, L. Eyraud-Dubois, J.-A. Lorenzo-Del-Castillo, Allocating jobs with "
    "periodic demand variations, Euro-Par 2015",
    "selection": "E. Gaussier, J. Lelong, V. Reis, D. Trystram, Online (bandit) policy selection for "
    "EASY-backfilling, 2017",
    "volatility": "V. Reis, Modeling and Estimation for Resource Allocation Problems in Large-Scale Computing "
    "Systems, MSc thesis, 2015, section 3.4 (the CPU usage of the Google trace)",
    "eloss-triples": "V. Reis, Modeling and Estimation for Resource Allocation Problems in Large-Scale Computing "
    "Systems, MSc thesis, 2015, chapter 2 (the SC'15 runtime-prediction study)",
}


@dataclass(frozen=True)
class Published:
    study: str
    source: str  # the paper's table
    trace: str  # as the paper names it
    log: str  # the Parallel Workloads Archive log it corresponds to, as a prefix of its file name ('' : none)
    quantity: str
    setting: str  # what the paper states for it: `key=value` words, or prose
    value: float | None  # None: the paper states the quantity but leaves its number blank (a placeholder)
    unit: str

    def settings(self) -> dict[str, str]:
        """The `key=value` words of the setting."""
        return dict(word.split("=", 1) for word in self.setting.split() if "=" in word)


def published(study: str | None = None) -> list[Published]:
    """Every published number, or one study's, in the data file's order."""
    text = resources.files("lakehouse.data").joinpath("published.csv").read_text(encoding="utf-8")
    rows = [
        Published(**{**row, "value": float(row["value"]) if row["value"] else None})  # type: ignore[arg-type]
        for row in csv.DictReader(io.StringIO(text))
    ]
    return [r for r in rows if study is None or r.study == study]
