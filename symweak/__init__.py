"""symweak: discover the PDE that governs a system from sparse, scattered, noisy data.

The public API is what this module exports; implementation modules are private.

Names load on first use (PEP 562), so ``symweak --help`` and ``import symweak`` do not pay for
SymPy and torch until a name that needs them is touched.
"""

from __future__ import annotations

import importlib
import sys
import types

from ._errors import DataError as DataError
from ._errors import GrammarError as GrammarError
from ._errors import IRError as IRError
from ._errors import SymweakError as SymweakError
from ._version import __version__ as __version__

#: public name -> the module that defines it (None: the name is that submodule itself)
_LAZY = {
    "sweep": None,
    "Domain": "data",
    "Observations": "data",
    "load": "data",
    "Config": "discover",
    "Discovery": "discover",
    "PDEDiscoverer": "discover",
    "Constraints": "grammar",
    "OperatorSet": "grammar",
    "parse_constraints": "grammar",
    "parse_equation": "grammar",
    "parse_operators": "grammar",
    "parse_term": "grammar",
    "register_operator": "grammar",
    "Equation": "ir",
    "System": "ir",
    "Term": "ir",
}

__all__ = [
    "DataError",
    "GrammarError",
    "IRError",
    "SymweakError",
    "__version__",
    "discover",
    *_LAZY,
]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'symweak' has no attribute {name!r}")
    where = _LAZY[name]
    module = importlib.import_module(f".{where or name}", __name__)
    value = module if where is None else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """``symweak.discover`` is the function, although a subpackage has the same name: the
    import system binds a subpackage to its parent's attribute when it first loads it, and
    this property ignores that binding (the subpackage stays in ``sys.modules``)."""

    @property
    def discover(self):
        return importlib.import_module(".discover", __name__).discover

    @discover.setter
    def discover(self, value) -> None:
        if not isinstance(value, types.ModuleType):
            raise AttributeError("symweak.discover is the discovery function; it cannot be set")


sys.modules[__name__].__class__ = _Package
