"""The more surrogates of ``surrogates=K``: K − 1 members, each from its own child seed
(initialisation, Gaussians, held-out split, test functions, batches), warmed up and tuned on
the run's own candidates, restored to its best held-out checkpoint.

A member is always trained on one torch thread, so that it comes out the same wherever it
runs. Where the run has more than one thread (``torch.get_num_threads()``, the cores it was
given) on a CPU that can fork (Linux), the members run in that many child processes: each
forks from the run once its warm-up has settled how many surrogates there are, warms its
members up while the run searches and prunes (a 1-D run keeps about one core busy), and
tunes them once the run sends its candidates. Elsewhere (one thread, a GPU, no fork, a
daemon process) they run here one after another. Either way the members and the mean the
final fit integrates are the same.
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import pickle
import signal
import warnings
from contextlib import contextmanager
from multiprocessing.connection import wait

import torch

from ..._seeds import child_seed
from ..._trainer import announce
from .._history import History
from . import _tune, _warmup
from ._forking import member_workers
from ._state import NetworkState

__all__ = ["Members"]

log = logging.getLogger("symweak")

#: seeds of the members: child_seed(seed, "surrogates") + MEMBER_STRIDE * k
MEMBER_STRIDE = 7919


@contextmanager
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


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
    """A child process: warm members ``ks`` up, wait for the candidates (None: stop), tune
    each and send ``(k, surrogate, interrupted)``; then ``None``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run decides when to stop
    torch.set_num_threads(1)
    try:
        warmed = [(k, *_warm(problem, config, device, k)) for k in ks]
        candidates = _recv(conn)
        if candidates is not None:
            for k, member, warm, rng in warmed:
                _send(conn, (k, *_tuned(member, config, device, warm, rng, candidates)))
        _send(conn, None)
    except BaseException as exc:  # reported to the run, which trains these members itself
        _send(conn, ("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _send(conn, obj) -> None:
    """Plain pickles (copies): torch's own reducers would share tensors through file
    descriptors that vanish when the child exits."""
    conn.send_bytes(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _recv(conn):
    return pickle.loads(conn.recv_bytes())


class Members:
    """The members of one run: started once the count is known, collected after the run's
    own candidates exist. ``start`` forks the child processes (see the module notes)."""

    def __init__(self, problem, config, device, count: int, progress: bool) -> None:
        self.problem, self.config, self.device = problem, config, device
        self.count, self.progress = count, progress
        self.children: list = []  # (process, connection, ks)
        #: the threads left to the run's own search, pruning and tuning meanwhile (None:
        #: its own count; a thread pool that shares its cores with the children stalls)
        self.threads = None
        workers = member_workers(count, device)
        if workers:
            self._fork(workers)
            self.threads = max(1, torch.get_num_threads() - workers)

    def _fork(self, workers: int) -> None:
        ctx = multiprocessing.get_context("fork")
        ks = list(range(1, self.count))
        with warnings.catch_warnings():  # 3.12+: forking a process that has threads
            warnings.simplefilter("ignore", DeprecationWarning)
            for w in range(workers):
                mine = ks[w::workers]
                parent, child = ctx.Pipe()
                args = (child, self.problem, self.config, self.device, mine)
                proc = ctx.Process(target=_child, args=args, daemon=True)
                proc.start()
                child.close()
                self.children.append((proc, parent, mine))
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
                interrupted = self._from_children(candidates, done)
            self._here(candidates, done, interrupted)
        except KeyboardInterrupt:
            interrupted = True
            self._drain(done)
        finally:
            self.close()
        members = [done[k] for k in sorted(done)]
        interrupted |= any(flag for _, flag in members) or len(members) < self.count - 1
        return [s for s, _ in members], interrupted

    def _from_children(self, candidates, done: dict) -> bool:
        """Send the candidates to the children and receive their members into ``done`` as
        they come; a child that fails leaves its members to :meth:`_here` (logged)."""
        announce(f"surrogates 2–{self.count} of {self.count}", self.progress)
        for _, conn, _ in self.children:
            _send(conn, candidates)
        pending = {conn: proc for proc, conn, _ in self.children}
        while pending:
            for conn in wait(list(pending)):
                self._receive(conn, pending, done)
        return False

    def _receive(self, conn, pending: dict, done: dict) -> None:
        """One message of a child: a member into ``done``, or its end (``pending`` loses it)."""
        try:
            msg = _recv(conn)
        except EOFError:
            msg = ("error", f"exit code {pending[conn].exitcode}")
        if msg is None:
            del pending[conn]
        elif msg[0] == "error":
            log.warning("a member process failed (%s); its members run here", msg[1])
            del pending[conn]
        else:
            k, surrogate, flag = msg
            done[k] = (surrogate.to(self.device), flag)

    def _drain(self, done: dict) -> None:
        """The members the children have sent and the run has not read yet (Ctrl-C)."""
        pending = {conn: proc for proc, conn, _ in self.children if not conn.closed}
        for conn in list(pending):
            try:
                while conn in pending and conn.poll(0):
                    self._receive(conn, pending, done)
            except (OSError, EOFError):
                continue

    def _here(self, candidates, done: dict, interrupted: bool) -> None:
        """The members no child returned, here one after another on one thread."""
        for k in range(1, self.count):
            if k in done:
                continue
            if interrupted:
                break
            announce(f"surrogate {k + 1} of {self.count}", self.progress)
            with _one_thread():
                member, warm, rng = _warm(self.problem, self.config, self.device, k, self.progress)
                surrogate, flag = _tuned(
                    member, self.config, self.device, warm, rng, candidates, self.progress
                )
            done[k] = (surrogate, flag)
            interrupted |= flag

    def close(self) -> None:
        """Stop the children that are still running (Ctrl-C, an error, a stopped run)."""
        for proc, conn, _ in self.children:
            try:
                if proc.is_alive():
                    _send(conn, None)
            except (BrokenPipeError, OSError):
                pass
            conn.close()
            proc.join(timeout=1.0)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        self.children = []
