"""The engine's two entry points (the crate's `warpscope::cli::call` and `flags`); use the package's functions."""

from typing import Dict, List, Tuple

__version__: str

def call(
    args: List[str], inputs: Dict[str, str], blobs: Dict[str, bytes] = ...
) -> Tuple[str, List[Tuple[str, bytes]], bool]:
    """Runs one command line (without the program's name); a path in `inputs` (text) or `blobs` (bytes: arrays
    given as data, as .npy) is read from there. Returns the printed text, the files written, and whether every
    lab goal passed. Raises ValueError on bad input."""

def flags(command: str) -> List[Tuple[str, bool, bool, str]]:
    """A command's flags: (long name, takes a value, may repeat, help)."""
