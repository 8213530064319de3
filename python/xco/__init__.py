"""xco: keep data-center fabrics out of congestion.

The package is the front of a Rust core:

- ``xco.sim`` runs scenarios (TOML files, text or dicts) in the packet-level
  simulator and returns tables as pandas DataFrames;
- ``xco.reproduce`` holds the paper experiments (``xco reproduce <id>``);
- ``xco.sweep`` runs many scenario points on all cores with a progress bar;
- ``xco.cli`` is the ``xco`` command (``xco --help``).
"""

from ._native import __version__
from .scenario import ScenarioError

__all__ = ["__version__", "ScenarioError"]
