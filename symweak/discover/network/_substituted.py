"""The selected equation's alternatives with a swap made in them.

Where the check on the data (:mod:`._refit`) returns a swap in place of the selected
equation, the alternatives of that equation that hold a replaced term (with none
replaced, those that lack the added term) no longer say anything about the swap: they are
refitted with the swap made in them (at most ``SUBSTITUTES``), so that the terms only they
held stay uncertain beside it (tanh damping's u_xx beside tanh u).
"""

from __future__ import annotations

__all__ = ["SUBSTITUTES", "substituted"]

#: the alternatives refitted with the swap made in them, at most
SUBSTITUTES = 3


def substituted(record, replaced: tuple, other: str, mine: set, lib: dict) -> list:
    """The supports of ``record``'s alternatives (not the returned one) that hold a term of
    ``replaced``, with ``other`` in their place (with none replaced, those that lack
    ``other``, with it added); none equal to the swap ``mine``."""
    out: list = []
    for alt in record.alternatives:
        terms = list(alt["terms"])
        stale = set(replaced) & set(terms) if replaced else other not in terms
        if alt.get("reason") == "fit" or not stale:
            continue
        names = list(dict.fromkeys([other if t in replaced else t for t in terms] + [other]))
        if set(names) != mine and all(t in lib for t in names) and names not in out:
            out.append(names)
    return out[:SUBSTITUTES]
