"""Whether the more surrogates of ``surrogates=K`` (or the more runs of ``combine="vote"``)
train in child processes, and in how many (:mod:`._members`, :class:`Children`)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import signal
import sys
import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from multiprocessing.connection import wait

import torch

__all__ = [
    "Children",
    "Plan",
    "beside",
    "can_fork",
    "cores",
    "drain",
    "fork",
    "gather",
    "member_workers",
    "memory_room",
    "plan",
    "receive",
    "recv",
    "send",
    "stop",
    "torch_threads",
    "workers_beside",
]

log = logging.getLogger("symweak")


@dataclass(frozen=True)
class Plan:
    """Where the more surrogates (or runs) of one run train: ``workers`` child processes
    (0: here, one after another), each member on ``member_threads`` torch threads, the
    run's own phases meanwhile on ``run_threads`` (None: its own count)."""

    workers: int
    member_threads: int
    run_threads: int | None


def plan(count: int, device) -> Plan:
    """For ``count − 1`` members: where the run may use more than one core (its torch
    threads, no more than the cores it may run on) on a CPU that can fork, one child per
    member up to that many and as many as the free memory holds (a child may need as much
    as the run has needed so far), the cores shared evenly among the children and the run
    (each at least one thread); otherwise here, on the run's own threads."""
    threads = torch.get_num_threads()
    usable = min(threads, cores())
    if count < 2 or usable < 2 or torch.device(device).type != "cpu" or not can_fork():
        return Plan(0, threads, None)
    workers = min(count - 1, usable, memory_room())
    if workers < 1:
        return Plan(0, threads, None)
    member = max(1, usable // (workers + 1))
    return Plan(workers, member, max(1, usable - workers * member))


def memory_room() -> int:
    """How many more processes of this one's peak size the available memory holds (Linux:
    ``MemAvailable`` over the peak resident size; a large number where unknown)."""
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        free = int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError, ImportError):
        return 1 << 30
    return int(free // max(peak, 1))


def member_workers(count: int, device) -> int:
    """How many child processes :func:`plan` gives the ``count − 1`` members."""
    return plan(count, device).workers


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


@contextmanager
def torch_threads(count: int | None):
    """torch's thread count set to ``count`` meanwhile (None: left as it is)."""
    before = torch.get_num_threads()
    if count is not None:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


#: the child processes running beside the current run (:func:`beside`)
_BESIDE: ContextVar[int] = ContextVar("symweak_beside", default=0)


@contextmanager
def beside(workers: int, threads: int | None):
    """A run with ``workers`` child processes beside it, on ``threads`` torch threads
    meanwhile (None: its own count); :func:`workers_beside` tells the run's estimate."""
    token = _BESIDE.set(workers)
    try:
        with torch_threads(threads):
            yield
    finally:
        _BESIDE.reset(token)


def workers_beside() -> int:
    return _BESIDE.get()


def send(conn, obj) -> None:
    """Plain pickles (copies): torch's own reducers would share tensors through file
    descriptors that vanish when the child exits."""
    conn.send_bytes(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def recv(conn):
    return pickle.loads(conn.recv_bytes())


def fork(target, args, threads: int = 1) -> tuple:
    """A child process forked now running ``target(conn, *args)`` on ``threads`` torch
    threads with Ctrl-C left to the run: (process, the run's end of the pipe)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    with warnings.catch_warnings():  # 3.12+: forking a process that has threads
        warnings.simplefilter("ignore", DeprecationWarning)
        proc = ctx.Process(target=_start, args=(target, threads, child, *args), daemon=True)
        proc.start()
    child.close()
    return proc, parent


def _start(target, threads: int, conn, *args) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run decides when to stop
    torch.set_num_threads(threads)
    try:
        target(conn, *args)
    except BaseException as exc:  # reported to the run, which does the work itself
        send(conn, ("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def stop(children) -> None:
    """End the children ``[(process, connection), ...]`` still running."""
    for proc, conn in children:
        try:
            if proc.is_alive():
                send(conn, None)
        except (BrokenPipeError, OSError):
            pass
        conn.close()
        proc.join(timeout=1.0)
        if proc.is_alive():
            proc.terminate()
            proc.join()


def claim(counter, count: int) -> int | None:
    """The next of ``count`` pieces of work no process has taken (``counter``: an integer
    shared with the children, :func:`multiprocessing.Value`), or None."""
    with counter.get_lock():
        k = counter.value
        if k >= count:
            return None
        counter.value = k + 1
        return k


def _each(conn, fn, items, counter) -> None:
    while (i := claim(counter, len(items))) is not None:
        send(conn, ("ok", items[i], fn(items[i])))
    send(conn, None)


def receive(conn, pending: dict, done: dict) -> None:
    """One message of a child in ``pending`` (``{connection: process}``): a result
    ``("ok", item, value)`` into ``done``; its end (None) or an error (logged: the run does
    that work itself) takes it out of ``pending``."""
    try:
        msg = recv(conn)
    except EOFError:
        msg = ("error", f"exit code {pending[conn].exitcode}")
    if msg is None:
        del pending[conn]
    elif msg[0] == "error":
        log.warning("a child process failed (%s); its work is done here", msg[1])
        del pending[conn]
    else:
        done[msg[1]] = msg[2]


def gather(pending: dict, done: dict) -> None:
    """Every result of the children in ``pending`` into ``done``, as they come."""
    while pending:
        for conn in wait(list(pending)):
            receive(conn, pending, done)


def drain(pending: dict, done: dict) -> None:
    """The results the children have sent and the run has not read yet (Ctrl-C)."""
    for conn in list(pending):
        try:
            while conn in pending and not conn.closed and conn.poll(0):
                receive(conn, pending, done)
        except (OSError, EOFError):
            continue


class Children:
    """``fn(item)`` for each of ``items`` in ``workers`` child processes forked now (each
    child takes the next item as it is free, as can the run with :meth:`claim`; ``threads``
    torch threads each), the results received as they come (:meth:`collect`)."""

    def __init__(self, fn, items: list, workers: int, threads: int = 1) -> None:
        self.items = list(items)
        self.counter = multiprocessing.get_context("fork").Value("i", 0)
        args = (fn, self.items, self.counter)
        self.children = [fork(_each, args, threads) for _ in range(workers)]
        self.done: dict = {}

    def claim(self):
        """The next item no child has taken (the run does it itself), or None."""
        i = claim(self.counter, len(self.items))
        return None if i is None else self.items[i]

    def stop_now(self) -> dict:
        """Stop waiting (Ctrl-C): the results received or waiting in the pipes are kept."""
        drain({conn: proc for proc, conn in self.children}, self.done)
        self.close()
        return self.done

    def collect(self) -> dict:
        """``{item: result}`` of every item a child finished; a child that failed is logged
        and its remaining items are missing. Ctrl-C stops waiting: the results received or
        waiting in the pipes by then are kept, and KeyboardInterrupt is raised again."""
        pending = {conn: proc for proc, conn in self.children}
        try:
            gather(pending, self.done)
        except KeyboardInterrupt:
            drain(pending, self.done)
            raise
        finally:
            self.close()
        return self.done

    def close(self) -> None:
        stop(self.children)
        self.children = []
