"""An estimator for people coming from PySINDy and scikit-learn: :class:`PDEDiscoverer`.

It wraps :func:`discover` and changes nothing in it. Parameters are stored as given (no
copies, no defaults filled in), so ``sklearn.base.clone`` and parameter grids work; option
names are checked when the estimator is made, their values when it is fitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._errors import SymweakError
from ._api import PAPER_OPS, discover
from ._config import ENTRIES

__all__ = ["PDEDiscoverer"]

#: parameters of ``discover`` itself (every other parameter is a Config entry)
_OWN = ("ops", "lhs", "seed", "constraints", "method", "progress")


class PDEDiscoverer:
    """``PDEDiscoverer(ops="+,-,*,sin", lhs="u_t", kernels=250).fit(obs)``.

    After ``fit``: ``result_`` (the :class:`Discovery`), ``equations()``, ``print()``,
    ``coefficients_``, ``predict`` (the surrogate, network method), ``score`` (how well the
    discovered PDE, integrated from the first snapshot, reproduces gridded data)."""

    def __init__(
        self,
        ops: str | None = PAPER_OPS,
        lhs: str | None = None,
        seed: int = 0,
        constraints: str | None = None,
        method: str = "auto",
        progress: bool = False,
        **config: Any,
    ) -> None:
        unknown = sorted(set(config) - set(ENTRIES))
        if unknown:
            raise SymweakError(
                f"PDEDiscoverer: unknown option(s) {unknown}. Known options: "
                f"{', '.join(sorted(ENTRIES))}."
            )
        self.ops, self.lhs, self.seed = ops, lhs, seed
        self.constraints, self.method, self.progress = constraints, method, progress
        self._config_names = list(config)
        for name, value in config.items():
            setattr(self, name, value)

    # ------------------------------------------------------------------ scikit-learn protocol
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters as given: ``discover``'s own and the config options set."""
        return {**{n: getattr(self, n) for n in _OWN}, **self._config()}

    def set_params(self, **params) -> PDEDiscoverer:
        for name, value in params.items():
            if name not in _OWN and name not in ENTRIES:
                raise SymweakError(
                    f"PDEDiscoverer: unknown parameter `{name}`; parameters: "
                    f"{', '.join(_OWN)} and the options {', '.join(sorted(ENTRIES))}."
                )
            if name not in _OWN and name not in self._config_names:
                self._config_names.append(name)
            setattr(self, name, value)
        return self

    def _config(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self._config_names}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"PDEDiscoverer({params})"

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, fields: Mapping[str, Any] | None = None) -> PDEDiscoverer:
        """Discover the PDE of ``X``: observations, a file, an xarray object, or coordinates
        ``fit({"t": t, "x": x}, fields={"u": u})``. ``y`` is ignored (scikit-learn's API)."""
        if fields is not None:
            from ..data import Observations

            if not isinstance(X, Mapping):
                raise SymweakError(
                    "fit(coords, fields=...) takes the coordinates as a mapping, e.g. "
                    "fit({'t': t, 'x': x}, fields={'u': u})."
                )
            X = Observations(coords=X, fields=fields)
        self.result_ = discover(
            X,
            ops=self.ops,
            lhs=self.lhs,
            seed=self.seed,
            constraints=self.constraints,
            method=self.method,
            progress=self.progress,
            **self._config(),
        )
        return self

    def _fitted(self):
        if not hasattr(self, "result_"):
            raise SymweakError("This PDEDiscoverer is not fitted yet; call fit(obs) first.")
        return self.result_

    @property
    def coefficients_(self) -> dict:
        return self._fitted().coefficients

    def equations(self, precision: int = 4) -> list[str]:
        """One line per equation, coefficients to ``precision`` significant digits."""
        return [eq.short(precision) for eq in self._fitted().system]

    def print(self, precision: int = 4) -> None:
        for line in self.equations(precision):
            print(line)

    def predict(self, X=None, **coords) -> dict[str, np.ndarray]:
        """Field values from the surrogate at observations ``X`` or at ``t=..., x=...``."""
        res = self._fitted()
        if X is not None:
            return res.predict(**{n: X.coords[n] for n in X.coord_names})
        return res.predict(**coords)

    def score(self, X, y=None) -> float:
        """1 − the mean relative L2 error of the discovered PDE integrated from the first
        snapshot of ``X`` (gridded observations); 1 is a perfect reproduction."""
        errors = self._fitted().simulate(X).errors
        return 1.0 - float(np.mean(list(errors.values())))
