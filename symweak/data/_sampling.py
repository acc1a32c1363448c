"""Sampling ratio r and noise σ_NR exactly as the paper (section 5.4), both seeded."""

from __future__ import annotations

import math

import numpy as np

from .._errors import DataError
from .._seeds import check_seed

__all__ = ["add_noise", "rms", "sample"]


def rms(values: np.ndarray) -> float:
    """Root mean square |u|_RMS = sqrt(mean(|u|^2))."""
    return float(np.sqrt(np.mean(np.abs(values) ** 2)))


def sample(obs, ratio: float, seed: int = 0):
    """Keep round(ratio · N_total) points chosen uniformly without replacement.

    N_total is the grid size when the points lie on a grid (the paper's r = N_data /
    N_total), otherwise the number of points. Selected points keep their original order.
    """
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not math.isfinite(ratio):
        raise DataError(f"Sampling ratio must be a number in (0, 1], got {ratio!r}.")
    if not 0.0 < ratio <= 1.0:
        raise DataError(f"Sampling ratio must be in (0, 1], got {ratio}. Use 0.1 for 10 %.")
    total = obs.grid.size if obs.grid is not None else len(obs)
    n = round(ratio * total)
    if n < 1:
        raise DataError(f"Ratio {ratio} of {total} points keeps no point; use a larger ratio.")
    if n > len(obs):
        raise DataError(
            f"Ratio {ratio} of the {total}-point grid asks for {n} points but only {len(obs)} "
            "are observed."
        )
    seed = check_seed(seed, DataError)
    rng = np.random.default_rng(seed)
    index = np.sort(rng.choice(len(obs), size=n, replace=False))
    out = obs.subset(index)
    out.meta.update({"ratio": n / total, "sample_seed": seed})
    return out


def add_noise(obs, sigma: float, seed: int = 0):
    """ũ = u + σ_NR · |u|_RMS · ε with ε ~ N(0, 1), independently per field (seeded).

    A complex field gets independent noise on its real and imaginary parts, each scaled by
    the RMS of that part (as if it had been split into two real fields first). The values
    before noise are kept in ``clean`` (or the existing clean values are kept).
    """
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not math.isfinite(sigma):
        raise DataError(f"Noise level must be a finite number, got {sigma!r}.")
    if sigma < 0:
        raise DataError(f"Noise level must be >= 0, got {sigma}. Use 0.2 for 20 %.")
    seed = check_seed(seed, DataError)
    if sigma > 0:
        for name, values in obs.fields.items():
            if not np.any(values):
                raise DataError(
                    f"Field {name!r} is zero everywhere: noise relative to its root mean square "
                    "(sigma_NR) would be zero too. Add noise of a size of your own "
                    f"(u + s * rng.standard_normal(n)), or check that {name!r} is the right "
                    "field."
                )
    rng = np.random.default_rng(seed)
    noisy = {}
    for name, values in obs.fields.items():
        if np.iscomplexobj(values):
            re = values.real + sigma * rms(values.real) * rng.standard_normal(values.shape)
            im = values.imag + sigma * rms(values.imag) * rng.standard_normal(values.shape)
            noisy[name] = re + 1j * im
        else:
            noisy[name] = values + sigma * rms(values) * rng.standard_normal(values.shape)
    clean = obs.clean if obs.clean is not None else {k: v.copy() for k, v in obs.fields.items()}
    out = obs._replace(fields=noisy, clean=clean)
    previous = obs.meta.get("noise", 0.0)
    out.meta.update(
        {"noise": float(sigma) if not previous else [previous, float(sigma)], "noise_seed": seed}
    )
    return out
