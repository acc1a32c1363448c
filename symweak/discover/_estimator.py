"""An estimator for people coming from PySINDy and scikit-learn: :class:`PDEDiscoverer`.

It wraps :func:`discover` and changes nothing in it. Parameters are stored as given (no
copies, no defaults filled in), so ``sklearn.base.clone`` and parameter grids work; option
names are checked when the estimator is made, their values when it is fitted.

For scikit-learn's model selection, ``X`` may be a 2-D array of rows, one observed point
each, whose columns ``columns="t,x,u"`` names (coordinates t, x, y, z; the rest are fields):
``GridSearchCV`` then splits points, and ``score`` on held-out rows is the R² of the
surrogate's fields there. scikit-learn is not needed to use the estimator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._errors import DataError, SymweakError
from ._api import PAPER_OPS, discover
from ._config import ENTRIES

__all__ = ["PDEDiscoverer"]

#: parameters of ``discover`` itself (every other parameter is a Config entry)
_OWN = ("ops", "lhs", "seed", "constraints", "method", "progress", "columns")
_COORDS = ("t", "x", "y", "z")


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
        columns: str | None = None,
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
        self.columns = columns
        self._options = dict(config)  # as given; read through get_params()

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
            if name in _OWN:
                setattr(self, name, value)
            else:
                self._options[name] = value
        return self

    def __sklearn_tags__(self):
        """What scikit-learn may assume: unsupervised (``y`` is ignored), 2-D numeric rows."""
        from sklearn.utils import InputTags, Tags, TargetTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=False),
            transformer_tags=None,
            regressor_tags=None,
            classifier_tags=None,
            input_tags=InputTags(two_d_array=True),
        )

    def _config(self) -> dict[str, Any]:
        return dict(self._options)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"PDEDiscoverer({params})"

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, fields: Mapping[str, Any] | None = None) -> PDEDiscoverer:
        """Discover the PDE of ``X``: observations, a file, an xarray object, coordinates
        ``fit({"t": t, "x": x}, fields={"u": u})``, or a 2-D array of rows named by
        ``columns``. ``y`` is ignored (scikit-learn's API)."""
        if fields is None and _is_rows(X):
            X = self._rows(X)
        elif fields is not None:
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

    def _rows(self, X):
        from ..data import Observations

        coords, fields = _named_rows(X, self.columns)
        return Observations(coords=coords, fields=fields)

    def _fitted(self):
        if not hasattr(self, "result_"):
            raise _not_fitted("This PDEDiscoverer is not fitted yet; call fit(obs) first.")
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

    def predict(self, X=None, **coords):
        """Field values from the surrogate at observations ``X`` or at ``t=..., x=...`` (a dict
        by field); at a 2-D array of rows, an array with one column per field."""
        res = self._fitted()
        if _is_rows(X):
            coords, fields = _named_rows(X, self.columns)
            values = res.predict(**coords)
            return np.column_stack([values[f] for f in fields])
        if X is not None:
            return res.predict(**{n: X.coords[n] for n in X.coord_names})
        return res.predict(**coords)

    def score(self, X, y=None) -> float:
        """On gridded observations: 1 − the mean relative L2 error of the discovered PDE
        integrated from the first snapshot of ``X``; 1 is a perfect reproduction. On a 2-D
        array of rows: the R² of the surrogate's fields at those points (mean over fields)."""
        if _is_rows(X):
            fields = _named_rows(X, self.columns)[1]
            predicted = self.predict(X)
            r2 = []
            for j, u in enumerate(fields.values()):
                miss, spread = np.sum((u - predicted[:, j]) ** 2), np.sum((u - u.mean()) ** 2)
                # a constant field: 1 when reproduced, else 0 (as sklearn.metrics.r2_score)
                r2.append(1.0 - miss / spread if spread > 0 else float(miss == 0))
            return float(np.mean(r2))
        errors = self._fitted().simulate(X).errors
        return 1.0 - float(np.mean(list(errors.values())))


def _is_rows(X) -> bool:
    if isinstance(X, np.ndarray) or hasattr(X, "tocsr"):  # an array, or a SciPy sparse one
        return True
    return isinstance(X, (list, tuple)) and len(X) > 0


def _not_fitted(message: str) -> SymweakError:
    """A SymweakError that is also scikit-learn's NotFittedError when scikit-learn is there."""
    try:
        from sklearn.exceptions import NotFittedError
    except ImportError:  # pragma: no cover - scikit-learn is optional
        return SymweakError(message)
    return type("NotFittedError", (SymweakError, NotFittedError), {})(message)


def _checked_rows(X) -> np.ndarray:
    """``X`` as a 2-D float array of rows, or a DataError saying what is wrong with it."""
    if hasattr(X, "tocsr"):
        raise DataError(
            "PDEDiscoverer: sparse input is not supported; pass a dense array of rows "
            "(X.toarray())."
        )
    X = np.asarray(X)
    if np.iscomplexobj(X):
        raise DataError(
            "PDEDiscoverer: Complex data not supported in rows; give the real and imaginary "
            "parts as two field columns, or pass Observations with the complex field."
        )
    try:
        X = X.astype(float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"PDEDiscoverer: rows must be numbers ({exc}).") from None
    if X.ndim != 2:
        raise DataError(
            f"PDEDiscoverer: rows must be a 2-D array (points × columns); got shape {X.shape}."
        )
    if X.shape[1] == 0:
        raise DataError(
            f"PDEDiscoverer: X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
            "required; give one column per coordinate and field."
        )
    if X.shape[0] == 0:
        raise DataError("PDEDiscoverer: X has no rows; give one row per observed point.")
    bad = ~np.isfinite(X).all(axis=1)
    if bad.any():
        raise DataError(
            f"PDEDiscoverer: {int(bad.sum())} row(s) hold NaN or inf (first: row "
            f"{int(np.argmax(bad))}); remove or fill them."
        )
    return X


def _named_rows(X, columns: str | None) -> tuple[dict, dict]:
    """The coordinate and field columns of a 2-D array whose columns ``columns`` names."""
    X = _checked_rows(X)
    if columns is None:
        raise DataError(
            "PDEDiscoverer: a 2-D array of rows needs its columns named, e.g. "
            "PDEDiscoverer(columns='t,x,u') for rows (t, x, u)."
        )
    names = [c.strip() for c in str(columns).split(",") if c.strip()]
    if X.shape[1] != len(names):
        raise DataError(
            f"PDEDiscoverer: columns={columns!r} names {len(names)} columns, but X has shape "
            f"{X.shape}; pass one row per point with those {len(names)} columns."
        )
    if len(set(names)) != len(names) or "t" not in names:
        raise DataError(
            f"PDEDiscoverer: columns={columns!r} must name each column once and include the "
            "time coordinate t."
        )
    coords = {n: X[:, i] for i, n in enumerate(names) if n in _COORDS}
    fields = {n: X[:, i] for i, n in enumerate(names) if n not in _COORDS}
    if not fields:
        raise DataError(
            f"PDEDiscoverer: columns={columns!r} names only coordinates ({', '.join(_COORDS)}); "
            "add the field column(s), e.g. 't,x,u'."
        )
    return coords, fields
