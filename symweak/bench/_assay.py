"""A simulated twin of a scratch assay: Fisher–KPP in a real assay's units and layout.

Jin et al. (2016) measured cell density (cells/µm²) at 38 positions 50 µm apart
(x = 25 … 1875 µm), 5 times 12 h apart, three replicates each; a Fisher–KPP model
u_t = D u_xx + r u (1 − u/K) with D ≈ 250–1000 µm²/h, r ≈ 0.04–0.07 /h and K ≈ 1.7e-3
cells/µm² describes them. The twin solves that model (finite volumes, 10 µm cells, no flux
through the ends, SciPy's BDF) from a scratched monolayer (cells on both sides of an empty
gap from 575 to 1375 µm) and samples it the way the assay was sampled, replicates with noise
of a given fraction of the field's root mean square. It is how symweak is judged on data
shaped like an experiment's (few snapshots, replicates, physical units) where the truth is
known; the real files are in ``examples/data`` (:mod:`symweak.examples`).
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from scipy.sparse import diags

from ..data import Observations

__all__ = ["ASSAY_TRUTH", "assay_twin"]

#: the twin's model: D (µm²/h), r (/h), K (cells/µm²), inside the published ranges
ASSAY_TRUTH = {"D": 600.0, "r": 0.055, "K": 1.7e-3}
#: cells per µm² outside the scratch at t = 0, for the two densities of the shipped files
START = {10_000: 2.8e-4, 20_000: 1.15e-3}


def _solve(u0: np.ndarray, dx: float, times: np.ndarray, D: float, r: float, K: float):
    n = u0.size
    lap = diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1]).tolil()
    lap[0, 0] = lap[n - 1, n - 1] = -1.0  # no flux through either end
    lap = (lap / dx**2).tocsr()

    def rhs(_t, u):
        return D * (lap @ u) + r * u * (1.0 - u / K)

    sol = solve_ivp(
        rhs, (times[0], times[-1]), u0, method="BDF", t_eval=times, rtol=1e-8, atol=1e-12,
        jac_sparsity=diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n)),
    )  # fmt: skip
    return sol.y.T  # (times, cells)


def assay_twin(
    cells: int = 20_000,
    noise: float = 0.2,
    seed: int = 0,
    snapshots: int = 5,
    replicates: int = 3,
    truth: dict | None = None,
) -> Observations:
    """Observations of the twin: 38 positions × ``snapshots`` times over 0–48 h (5: every
    12 h, as the assay), ``replicates`` measurements of each with noise ``noise`` × rms(u)
    (seeded), in µm, h and cells/µm². ``cells``: 10 000 or 20 000 cells per well (the
    density outside the scratch). ``meta["truth"]`` holds the equation."""
    p = {**ASSAY_TRUTH, **(truth or {})}
    dx = 10.0
    centres = dx * (np.arange(190) + 0.5)  # 5, 15, …, 1895 µm
    edge = 12.5
    gap = 1.0 / (1 + np.exp(-(centres - 575) / edge)) - 1.0 / (1 + np.exp(-(centres - 1375) / edge))
    u0 = START[cells] * (1.0 - gap)
    times = np.linspace(0.0, 48.0, snapshots)
    field = _solve(u0, dx, times, p["D"], p["r"], p["K"])
    at = 2 + 5 * np.arange(38)  # the cells centred on 25, 75, …, 1875 µm
    clean = field[:, at]  # (snapshots, 38)
    T, X = np.meshgrid(times, centres[at], indexing="ij")
    rng = np.random.default_rng(seed)
    scale = noise * float(np.sqrt(np.mean(clean**2)))
    values = [clean.ravel() + scale * rng.standard_normal(clean.size) for _ in range(replicates)]
    equation = f"u_t = {p['D']:g}*u_xx + {p['r']:g}*u - {p['r'] / p['K']:.6g}*u^2"
    return Observations(
        {"t": np.tile(T.ravel(), replicates), "x": np.tile(X.ravel(), replicates)},
        {"u": np.concatenate(values)},
        clean={"u": np.tile(clean.ravel(), replicates)},
        meta={"truth": equation, "noise": noise, "source": f"assay twin, {cells} cells/well"},
    )
