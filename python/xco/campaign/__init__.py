"""Campaigns: a grid of scenario points x seeds, run once each on Dask, gathered as Parquet.

``xco sweep GRID.toml --out DIR`` (docs/sweeps.md). The layers, each a module:

- :mod:`~xco.campaign.grid` reads the grid file (base scenario, keys to vary as
  lists or ranges, seeds) into points, each with its exact scenario text;
- :mod:`~xco.campaign.store` keeps one entry per run under ``DIR/store``,
  named by the hash of the scenario text and the seed, so only missing runs run;
- :mod:`~xco.campaign.engine` runs them on Dask distributed (a local cluster
  in this process, or ``--scheduler tcp://host:port``), executing
  :mod:`~xco.campaign.worker` on the workers;
- :mod:`~xco.campaign.gather` turns the store into ``NAME.parquet`` per table,
  ``runs.parquet`` and ``summary.parquet`` (mean and 95 % interval per point);
- :mod:`~xco.campaign.command` is the command: checks, resume, progress.

Only the grid parser is imported before a sweep needs Dask, pandas or pyarrow.
"""

from .gather import Results, load

__all__ = ["Results", "load"]
