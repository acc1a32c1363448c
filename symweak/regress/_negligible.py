"""Terms too small to matter: an alternative that differs from another only by a term the
data would detect above a size holding less than :data:`NEGLIGIBLE` of the left-hand side.

On clean data the misfit left is the surrogate's own error, and a term can explain part
of it without being in the equation: a front's u_x absorbs a small error in its speed
(Nagumo from 10 % point columns, clean: 0.0006 u_x added leaves 0.19 % of u_t unexplained
on held-out test functions instead of 0.30 %, within reach of the best, while the data
would detect u_x above 0.0007, 0.2 % of u_t). Such a term is excluded above its floor,
which says all the data do: at most a part of u_t the surrogate's error is made of."""

from __future__ import annotations

import numpy as np

__all__ = ["NEGLIGIBLE", "drop_negligible"]

#: a term whose detection floor holds less than this part of the left-hand side
#: (|ξ|·‖G_j‖/‖b‖ at the floor) is negligible: the surrogate's own error is that size
NEGLIGIBLE = 0.01


def drop_negligible(out, best: tuple, part: np.ndarray) -> dict[int, float]:
    """Remove from ``out`` (a :class:`~symweak.regress.Judgement` with its floors) each
    ``"fit"`` alternative that is another alternative plus one uncertain column outside
    ``best`` whose floor holds less than :data:`NEGLIGIBLE` of the left-hand side (``part``:
    ‖G_j‖/‖b‖ per column); a column no alternative holds any more leaves the verdicts and
    its floor, and is returned ``{column: floor}`` (excluded above it)."""
    moved: dict[int, float] = {}
    for j in sorted(out.floors):
        if j in best or out.floors[j] * part[j] >= NEGLIGIBLE:
            continue
        supports = {tuple(a.support) for a in out.alternatives}
        idle = {
            id(a)
            for a in out.alternatives
            if a.reason == "fit"
            and j in a.support
            and tuple(k for k in a.support if k != j) in supports
        }
        if not idle:
            continue
        out.alternatives = [a for a in out.alternatives if id(a) not in idle]
        if not any(j in a.support for a in out.alternatives):
            del out.verdicts[j]
            moved[j] = out.floors.pop(j)
    return moved
