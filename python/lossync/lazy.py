"""numpy and pandas, imported on first use: a command that needs neither (`lossync validate`,
`--help`, a refusal) starts in a tenth of a second instead of half a second, and every test
that runs the command line as a user does pays that once per process (pandas alone imports in
about 0.3-0.4 s). `from .lazy import numpy as np, pandas as pd` reads as the usual imports."""

from __future__ import annotations

import importlib
import types
from typing import Any


class LazyModule(types.ModuleType):
    """A module imported when one of its attributes is first read; then its names are copied in,
    so later reads cost what a plain module's do."""

    def __init__(self, name: str) -> None:
        super().__init__(name)

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name__)
        self.__dict__.update({k: v for k, v in module.__dict__.items() if k not in ("__name__", "__spec__", "__loader__")})
        return getattr(module, attr)


numpy: Any = LazyModule("numpy")
pandas: Any = LazyModule("pandas")
