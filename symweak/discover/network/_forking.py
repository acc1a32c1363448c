"""Whether the more surrogates of ``surrogates=K`` train in child processes, and in how
many (:mod:`._members`)."""

from __future__ import annotations

import multiprocessing
import os
import sys

import torch

__all__ = ["can_fork", "cores", "member_workers"]


def member_workers(count: int, device) -> int:
    """How many child processes train the ``count − 1`` members: the run's torch threads
    (at most one per member and one per core it may use) where that is more than one, on
    a CPU where processes can be forked; else 0 (here)."""
    threads = min(torch.get_num_threads(), cores())
    if count < 2 or threads < 2 or torch.device(device).type != "cpu" or not can_fork():
        return 0
    return min(count - 1, threads)


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Linux (forking is safe there for CPU tensors), outside a daemon process (which may
    not have children: a Dask worker's)."""
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )
