"""Figures as PNG files: matplotlib without a display (Agg), one call to open and one to save."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from lakehouse.base.outputs import written_aside


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (imported late: the CLI starts fast without it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    try:
        with written_aside(path) as tmp:
            fig.savefig(tmp, dpi=110, format=path.suffix.lstrip(".") or "png")
    finally:
        pyplot().close(fig)
    return path


def ecdf(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted finite values and their empirical cumulative probabilities."""
    x = np.sort(values[np.isfinite(values)])
    return x, np.arange(1, x.size + 1) / max(x.size, 1)
