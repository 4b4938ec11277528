"""Small real data shipped inside the package, so `lakehouse demo` runs on a fresh machine."""

from importlib import resources
from pathlib import Path

SAMPLE_SWF_LOGS = ("KTH-SP2-1996-2.1-cln.swf.gz",)


def sample_swf_paths() -> list[Path]:
    folder = resources.files(__name__)
    return [Path(str(folder / name)) for name in SAMPLE_SWF_LOGS]


def sample_google_trace() -> Path:
    """A small real slice of the Google trace, laid out as published (see README.md here)."""
    return Path(str(resources.files(__name__) / "google_sample"))


def sample_alibaba2018() -> Path:
    """A small real slice of Alibaba's cluster-trace-v2018, headerless CSV as published (see README.md here)."""
    return Path(str(resources.files(__name__) / "alibaba2018_sample"))
