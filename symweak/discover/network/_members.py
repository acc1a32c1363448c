"""The more surrogates of ``surrogates=K``: K − 1 members, each from its own child seed
(initialisation, Gaussians, held-out split, test functions, batches), warmed up and tuned on
the run's own candidates, restored to its best held-out checkpoint.

Where the run may use more than one core (its torch threads, no more than the cores it may
run on) on a CPU that can fork (Linux), the members train in child processes, one per
member up to that many, the cores shared evenly among them and the run
(:func:`._forking.plan`): each child forks from the run once its warm-up has settled how
many surrogates there are, warms its members up while the run searches and prunes (a 1-D
run keeps about one core busy), and tunes them once the run sends its candidates.
Elsewhere (one thread, a GPU, no fork, a daemon process) they train here one after
another. A member trained here on a child's thread count is bit for bit the child's.
"""

from __future__ import annotations

import dataclasses
import logging

import torch

from ..._seeds import child_seed
from ..._trainer import announce
from .._history import History
from . import _tune, _warmup
from ._forking import drain, fork, gather, plan, recv, send, stop, torch_threads
from ._state import NetworkState

__all__ = ["Members"]

log = logging.getLogger("symweak")

#: seeds of the members: child_seed(seed, "surrogates") + MEMBER_STRIDE * k
MEMBER_STRIDE = 7919


def _member_problem(problem, k: int):
    seed = child_seed(problem.seed, "surrogates") + MEMBER_STRIDE * k
    return dataclasses.replace(problem, seed=seed)


def _warm(problem, config, device, k: int, progress: bool = False):
    """Member ``k``'s warm-up: (its problem, the warmed-up surrogate, torch's RNG after it)."""
    member = _member_problem(problem, k)
    torch.manual_seed(member.seed)
    warm = _warmup.run(member, config, device, History(), progress, member=True)
    return member, warm, torch.get_rng_state()


def _tuned(member, config, device, warm, rng, candidates, progress: bool = False):
    """The tuning phase of a warmed-up member: (surrogate at its best checkpoint, whether it
    was interrupted)."""
    torch.set_rng_state(rng)
    state = NetworkState(member, config, device, warm, History())
    _tune.run(state, candidates, progress)
    if state.check is not None:
        state.best.restore()
    state.surrogate.eval()
    return state.surrogate, state.interrupted


def _child(conn, problem, config, device, ks) -> None:
    """A child process (:func:`._forking.fork`): warm members ``ks`` up, wait for the
    candidates (None: stop), tune each and send ``("ok", k, (surrogate, interrupted))``;
    then ``None``."""
    warmed = [(k, *_warm(problem, config, device, k)) for k in ks]
    candidates = recv(conn)
    if candidates is not None:
        for k, member, warm, rng in warmed:
            send(conn, ("ok", k, _tuned(member, config, device, warm, rng, candidates)))
    send(conn, None)


class Members:
    """The members of one run: made once the count is known (forking the child processes
    :func:`._forking.plan` allows; see the module notes), collected after the run's own
    candidates exist."""

    def __init__(self, problem, config, device, count: int, progress: bool) -> None:
        self.problem, self.config, self.device = problem, config, device
        self.count, self.progress = count, progress
        self.children: list = []  # (process, connection)
        #: the threads left to the run's own search, pruning and tuning meanwhile (None:
        #: its own count; a thread pool that shares its cores with the children stalls)
        self.plan = plan(count, device)
        self.threads = self.plan.run_threads
        if self.plan.workers:
            self._fork(self.plan.workers)

    def _fork(self, workers: int) -> None:
        ks = list(range(1, self.count))
        for w in range(workers):
            args = (self.problem, self.config, self.device, ks[w::workers])
            self.children.append(fork(_child, args, self.plan.member_threads))
        log.info("surrogates: %d members in %d processes", self.count - 1, workers)

    def collect(self, candidates, interrupted: bool) -> tuple[list, bool]:
        """The members tuned on ``candidates``, in member order, and whether the run was
        interrupted meanwhile (the members finished by then are kept)."""
        if interrupted:
            self.close()
            return [], True
        done: dict = {}
        try:
            if self.children:
                self._from_children(candidates, done)
            self._here(candidates, done)
        except KeyboardInterrupt:
            interrupted = True
            drain(dict((conn, proc) for proc, conn in self.children), done)
        finally:
            self.close()
        members = [done[k] for k in sorted(done)]
        interrupted |= any(flag for _, flag in members) or len(members) < self.count - 1
        return [s for s, _ in members], interrupted

    def _from_children(self, candidates, done: dict) -> None:
        """Send the candidates to the children and receive their members into ``done`` as
        they come (``(surrogate, interrupted)``); a child that fails leaves its members to
        :meth:`_here` (logged)."""
        announce(f"surrogates 2–{self.count} of {self.count}", self.progress)
        for _, conn in self.children:
            send(conn, candidates)
        gather({conn: proc for proc, conn in self.children}, done)

    def _here(self, candidates, done: dict) -> None:
        """The members no child returned, here one after another (on the plan's member
        threads); an interrupted one ends it."""
        interrupted = False
        for k in range(1, self.count):
            if k in done:
                continue
            if interrupted:
                break
            announce(f"surrogate {k + 1} of {self.count}", self.progress)
            with torch_threads(self.plan.member_threads):
                member, warm, rng = _warm(self.problem, self.config, self.device, k, self.progress)
                surrogate, flag = _tuned(
                    member, self.config, self.device, warm, rng, candidates, self.progress
                )
            done[k] = (surrogate, flag)
            interrupted |= flag

    def close(self) -> None:
        """Stop the children that are still running (Ctrl-C, an error, a stopped run)."""
        stop(self.children)
        self.children = []
