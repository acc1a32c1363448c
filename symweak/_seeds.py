"""Child seeds: the one place that says how a run's seed becomes the seed of each random
stream it uses (the held-out split, the held-out subset, the data batches).

The streams keep the offsets they were introduced with, so that the same seed gives the
same equation as before this table existed; ``numpy.random.SeedSequence.spawn`` would give
independent streams by construction but change every result, and is left for a release that
announces new numbers.
"""

from __future__ import annotations

import contextlib

__all__ = ["STREAMS", "check_seed", "child_seed", "deterministic_torch"]

#: stream -> offset added to the run's seed
STREAMS = {
    "held_out_split": 7919,
    "held_out_subset": 15485863,
    "held_out_batches": 1,
    "batches": 104729,
    "stability": 1299709,
    "domain": 32452843,  # + the draw number: test functions drawn to fill a domain
    "nearby": 67867967,  # + the draw number: test functions drawn where data are nearby
    "ensemble": 49979687,  # + 7919 k: the k-th member of discover(..., ensemble=K)
    "surrogates": 86028121,  # + 7919 k: the k-th extra surrogate of surrogates=K
    "verdicts": 122949823,  # + the equation number: the halves verdicts are judged on
}


def child_seed(seed: int, stream: str) -> int:
    """The seed of ``stream`` (one of :data:`STREAMS`) for a run seeded with ``seed``."""
    return int(seed) + STREAMS[stream]


def check_seed(seed, error=None, what: str = "seed") -> int:
    """``seed`` as an int, or ``error`` (a SymweakError class) naming what is wrong: seeds are
    non-negative integers below 2**63 (NumPy and torch both take them)."""
    import numpy as np

    from ._errors import SymweakError

    error = error or SymweakError
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise error(f"{what} must be an integer, got {seed!r}.")
    if not 0 <= int(seed) < 2**63:
        raise error(
            f"{what} must be a non-negative integer below 2**63, got {seed}; use e.g. "
            f"{what}={abs(int(seed)) % 2**63}."
        )
    return int(seed)


@contextlib.contextmanager
def deterministic_torch():
    """Torch's deterministic algorithms while a run trains (restored afterwards). Without
    them some CPU kernels with two threads sum in an order that varies from call to call: the
    zoo's KS variant (10 %, σ = 0.2, seed 0) came back as −0.6594, −0.6630 and −0.6674
    d_x(u²) from three runs of the same call, identical once switched on (−0.6613 every
    time; one thread was deterministic too). ``warn_only``: an op without a deterministic
    kernel (some CUDA ones) warns instead of stopping the run."""
    import torch

    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    _set_deterministic(True, True)
    try:
        yield
    finally:
        _set_deterministic(enabled, warn_only)


def _set_deterministic(mode: bool, warn_only: bool) -> None:
    """``torch.use_deterministic_algorithms`` without importing torch's compiler (2 s of a
    1-D run's 25 s, for a flag of a compiler symweak does not use), unless it is loaded."""
    import sys

    import torch

    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None or "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        setter(mode, warn_only=warn_only)
