"""Heavy libraries imported on first use, so that ``xco --help``, ``xco list``
and ``xco sim check`` start in a fraction of a second.

``from ._lazy import pd`` gives a stand-in for ``pandas`` that imports it the
first time an attribute is read (``pd.DataFrame``); after that it costs one
dictionary lookup. ``plt`` is ``matplotlib.pyplot`` on the file-only ``Agg``
backend (the plots are written, never shown). Annotations do not count as
use: every module that takes these has ``from __future__ import annotations``.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any


class LazyModule(types.ModuleType):
    """A module imported by ``load`` when one of its attributes is first read."""

    def __init__(self, name: str, load: Callable[[], types.ModuleType] | None = None) -> None:
        super().__init__(name)
        self.__dict__["_load"] = load or (lambda: importlib.import_module(name))
        self.__dict__["_module"] = None

    def __getattr__(self, attr: str) -> Any:
        module = self.__dict__["_module"]
        if module is None:
            module = self.__dict__["_load"]()
            self.__dict__["_module"] = module
        return getattr(module, attr)


def _pyplot() -> types.ModuleType:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed, none opened
    # SVG output that does not depend on the time or a random id: same data, same bytes
    matplotlib.rcParams["svg.hashsalt"] = "xco"
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot

    return matplotlib.pyplot


pd: Any = LazyModule("pandas")
np: Any = LazyModule("numpy")
plt: Any = LazyModule("matplotlib.pyplot", _pyplot)
ticker: Any = LazyModule("matplotlib.ticker")
