"""Whether the more surrogates of ``surrogates=K`` train in child processes, and in how
many (:mod:`._members`)."""

from __future__ import annotations

import multiprocessing
import sys

import torch

__all__ = ["can_fork", "member_workers"]


def member_workers(count: int, device) -> int:
    """How many child processes train the ``count − 1`` members: the run's torch threads
    (at most one per member) where it has more than one, on a CPU where processes can be
    forked; else 0 (here)."""
    threads = torch.get_num_threads()
    if count < 2 or threads < 2 or torch.device(device).type != "cpu" or not can_fork():
        return 0
    return min(count - 1, threads)


def can_fork() -> bool:
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )
