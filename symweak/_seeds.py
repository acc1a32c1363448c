"""Child seeds: the one place that says how a run's seed becomes the seed of each random
stream it uses (the held-out split, the held-out subset, the data batches).

The streams keep the offsets they were introduced with, so that the same seed gives the
same equation as before this table existed; ``numpy.random.SeedSequence.spawn`` would give
independent streams by construction but change every result, and is left for a release that
announces new numbers.
"""

from __future__ import annotations

__all__ = ["STREAMS", "child_seed"]

#: stream -> offset added to the run's seed
STREAMS = {
    "held_out_split": 7919,
    "held_out_subset": 15485863,
    "held_out_batches": 1,
    "batches": 104729,
    "stability": 1299709,
}


def child_seed(seed: int, stream: str) -> int:
    """The seed of ``stream`` (one of :data:`STREAMS`) for a run seeded with ``seed``."""
    return int(seed) + STREAMS[stream]
