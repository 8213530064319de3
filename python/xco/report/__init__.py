"""Every reproduction in one report: ``xco reproduce all``.

The layer above the reproductions (``xco.reproduce``): it runs each one of
the catalogue into a directory of its own (:mod:`.runner`), reads the claims
each summary states beside our figures and verdicts (:mod:`.claims`), and
writes ``report.md``, ``report.html`` and ``claims.csv`` (:mod:`.render`):
one section per paper, every figure, a table of every claim, the run's
metadata and a first table counting holds / partly / does not hold. A
reproduction that fails is a row with its error, never a missing one; the
real-host ones run only as root and are listed as skipped otherwise.
"""

from .claims import Claim, parse
from .runner import Report, Row, run_all

__all__ = ["Claim", "Report", "Row", "parse", "run_all"]
