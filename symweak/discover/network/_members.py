"""The more surrogates of ``surrogates=K``: K − 1 members, each from its own child seed
(initialisation, Gaussians, held-out split, test functions, batches), warmed up and tuned on
the run's own candidates, restored to its best held-out checkpoint.

Where the run may use more than one core (its torch threads, no more than the cores it may
run on) on a CPU that can fork (Linux), the members train in child processes, one per
member up to that many, the cores shared evenly among them and the run
(:func:`._forking.plan`): each child forks from the run once its warm-up has settled how
many surrogates there are, takes members as it is free and warms them up while the run
searches and prunes (a 1-D run keeps about one core busy), and tunes them once the run
sends its candidates (as soon as they are read back, while the run tunes its own
surrogate), then takes, warms up and tunes any member left.
Elsewhere (one thread, a GPU, no fork, a daemon process) they train here one after
another. A member trained here on a child's thread count is bit for bit the child's.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import multiprocessing

import torch

from ..._seeds import child_seed
from ..._trainer import announce
from .._history import History
from . import _tune, _warmup
from ._forking import claim, drain, fork, gather, plan, recv, send, stop, torch_threads
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


def _child(conn, problem, config, device, counter, count: int, quota: int) -> None:
    """A child process (:func:`._forking.fork`): warm up to ``quota`` members taken from
    ``counter`` until the candidates come (None: stop), tune each and send ``("ok", k,
    (surrogate, interrupted))``; then take, warm up and tune members while any is left, and
    send None. Members are taken as a process is free, the run's own too once its tuning is
    done, so no process waits on another's share (dealt out in turn, one child's fourth
    member of seven ran while the other child and the run idled)."""
    warmed = []
    while len(warmed) < quota and not conn.poll():
        k = claim(counter, count)
        if k is None:
            break
        warmed.append((k, *_warm(problem, config, device, k)))
    candidates = recv(conn)
    if candidates is not None:
        for k, member, warm, rng in warmed:
            send(conn, ("ok", k, _tuned(member, config, device, warm, rng, candidates)))
        while (k := claim(counter, count)) is not None:
            member, warm, rng = _warm(problem, config, device, k)
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
        self.sent = False  # the candidates went to the children
        self.counter = None  # the next member to take (shared with the children)
        #: the threads left to the run's own search, pruning and tuning meanwhile (None:
        #: its own count; a thread pool that shares its cores with the children stalls)
        self.plan = plan(count, device)
        self.threads = self.plan.run_threads
        if self.plan.workers:
            self._fork(self.plan.workers)

    def _fork(self, workers: int) -> None:
        self.counter = multiprocessing.get_context("fork").Value("i", 1)  # the next member
        # before the candidates, each child warms up its share of the run's and theirs; the
        # rest go to whichever process is free first afterwards
        quota = math.ceil((self.count - 1) / (workers + 1))
        for _ in range(workers):
            args = (self.problem, self.config, self.device, self.counter, self.count, quota)
            self.children.append(fork(_child, args, self.plan.member_threads))
        log.info("surrogates: %d members in %d processes", self.count - 1, workers)

    def start(self, candidates) -> None:
        """Send the candidates to the children as soon as they exist, so that they tune the
        members while the run tunes its own surrogate."""
        if self.children and not self.sent:
            announce(f"surrogates 2–{self.count} of {self.count}", self.progress)
            for _, conn in self.children:
                send(conn, candidates)
            self.sent = True

    def collect(self, candidates, interrupted: bool) -> tuple[list, bool]:
        """The members tuned on ``candidates``, in member order, and whether the run was
        interrupted meanwhile (the members finished by then are kept)."""
        if interrupted:
            self.close()
            return [], True
        done: dict = {}
        try:
            if self.children:
                self.start(candidates)
                if self._share(candidates, done):
                    raise KeyboardInterrupt  # the run's member was stopped: stop waiting
                gather({conn: proc for proc, conn in self.children}, done)
            self._here(candidates, done)
        except KeyboardInterrupt:
            interrupted = True
            drain(dict((conn, proc) for proc, conn in self.children), done)
        finally:
            self.close()
        members = [done[k] for k in sorted(done)]
        interrupted |= any(flag for _, flag in members) or len(members) < self.count - 1
        return [s for s, _ in members], interrupted

    def _share(self, candidates, done: dict) -> bool:
        """The members no child has taken yet, here (the run's own tuning is done, so its
        cores are free), taken one at a time as the children take theirs; whether one was
        interrupted."""
        while (k := claim(self.counter, self.count)) is not None:
            done[k] = self._train(k, candidates)
            if done[k][1]:
                return True
        return False

    def _here(self, candidates, done: dict) -> None:
        """The members no child returned, here one after another (on the plan's member
        threads); an interrupted one ends it."""
        interrupted = False
        for k in range(1, self.count):
            if k in done:
                continue
            if interrupted:
                break
            done[k] = self._train(k, candidates)
            interrupted |= done[k][1]

    def _train(self, k: int, candidates) -> tuple:
        """Member ``k`` warmed up and tuned here, on the plan's member threads (bit for bit
        a child's): (surrogate, whether it was interrupted)."""
        announce(f"surrogate {k + 1} of {self.count}", self.progress)
        with torch_threads(self.plan.member_threads):
            member, warm, rng = _warm(self.problem, self.config, self.device, k, self.progress)
            return _tuned(member, self.config, self.device, warm, rng, candidates, self.progress)

    def close(self) -> None:
        """Stop the children that are still running (Ctrl-C, an error, a stopped run)."""
        stop(self.children)
        self.children = []
