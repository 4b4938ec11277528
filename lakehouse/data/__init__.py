"""Small real data shipped inside the package, so `lakehouse demo` runs on a fresh machine."""

from importlib import resources
from pathlib import Path

SAMPLE_SWF_LOGS = ("KTH-SP2-1996-2.1-cln.swf.gz",)


def sample_swf_paths() -> list[Path]:
    folder = resources.files(__name__)
    return [Path(str(folder / name)) for name in SAMPLE_SWF_LOGS]
