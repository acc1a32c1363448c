"""Running a sweep: each run in a Dask worker (or in this process), each row stored as it
arrives, finished keys skipped.

Dask distributed runs the runs: a ``LocalCluster`` of ``workers`` processes with one thread
each (torch's own threads: ``threads``, by default cores / workers), or an existing cluster given
by its scheduler address. Only the process that drives the sweep writes to the store, one
transaction per run, so an interrupted sweep leaves complete rows only; running it again
executes what is missing. A run that raises is stored as failed with its error and the
others go on; ``retry_failed`` runs those again.
"""

from __future__ import annotations

import datetime
import logging
import os
import platform
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import SymweakError
from ._spec import Run, Spec, load_spec
from ._store import Store

__all__ = ["SweepSummary", "execute", "sweep"]

log = logging.getLogger("symweak")


@dataclass
class SweepSummary:
    """What a call to :func:`sweep` did."""

    store: Path
    total: int  # runs in the spec
    skipped: int  # already in the store
    ok: int
    failed: int
    interrupted: bool = False

    def __str__(self) -> str:
        state = "interrupted" if self.interrupted else "done"
        return (
            f"sweep {state}: {self.total} runs, {self.skipped} already stored, {self.ok} ok, "
            f"{self.failed} failed; store {self.store}"
        )


def _versions() -> dict[str, str]:
    """The versions a stored run was made with: the same code and seed can select another
    support on marginal data under other numpy, scipy or sympy releases (the zoo's exp flux
    at σ 0.1, seed 0, exact under the releases of 2026-11-28, not under numpy 2.4.6, scipy
    1.17.1, sympy 1.14.0)."""
    import numpy
    import scipy
    import sympy
    import torch

    from .._version import __version__

    return {
        "symweak": __version__,
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "sympy": sympy.__version__,
        "python": platform.python_version(),
    }


def _discover_file(run: Run) -> dict[str, Any]:
    from .. import discover, load
    from ..bench import coefficient_table, columns

    obs = load(run.file)
    if run.ratio < 1.0:
        obs = obs.sample(run.ratio, seed=run.seed)
    if run.noise > 0.0:
        obs = obs.add_noise(run.noise, seed=run.seed)
    if run.columns:
        obs = columns(obs, seed=run.seed)
    start = time.perf_counter()
    res = discover(obs, seed=run.seed, progress=False, **run.options)
    seconds = time.perf_counter() - start
    return {
        "equation": res.short(),
        "coefficients": coefficient_table(res.system),
        "intervals": {f.lhs: f.intervals for f in res.history.fits if f.intervals} or None,
        "verdicts": {f.lhs: f.verdicts for f in res.history.fits if f.verdicts} or None,
        "seconds": seconds,
        "device": getattr(res, "settings", {}).get("device"),
        "interrupted": bool(res.history.interrupted),
    }


def execute(run: Run, threads: int | None = None) -> dict[str, Any]:
    """One run (in a worker): its store row, ``status`` "ok" or "failed" with the error, or
    "interrupted" when a Ctrl-C reached the discovery's training (that row is not stored).
    ``threads``: torch's threads for the run (the process's own count comes back after)."""
    if not threads:
        return _execute(run)
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _execute(run)
    finally:
        torch.set_num_threads(before)


def _execute(run: Run) -> dict[str, Any]:
    row: dict[str, Any] = {**_identity(run), "versions": _versions()}
    start = time.perf_counter()
    try:
        if run.system is not None:
            from ..bench import run_case

            options = {"progress": False, **run.options}
            got = run_case(
                run.system, run.ratio, run.noise, run.seed, rules=run.rules,
                columns=run.columns, **options,
            )  # fmt: skip
            row.update(
                tpr=min(got["TPR"]),
                e_inf=max(got["E_inf"]),
                e_2=max(got["E_2"]),
                equation=got["equation"],
                coefficients=got["coefficients"],
                intervals=got["intervals"] or None,
                verdicts=got.get("verdicts") or None,
                honest=int(all(got["honest"])) if got.get("honest") else None,
                exact=int(all(got["exact"])) if got.get("exact") else None,
                seconds=got["seconds"],
                device=got.get("device"),
                interrupted=got.get("interrupted", False),
            )
        else:
            row.update(_discover_file(run))
        # a Ctrl-C that reached the training loop ended a phase early: not a finished run
        row["status"] = "interrupted" if row.pop("interrupted", False) else "ok"
    except Exception as exc:  # a failed run is a row, not the end of the sweep
        row.update(
            status="failed",
            error=f"{type(exc).__name__}: {exc}",
            seconds=time.perf_counter() - start,
        )
    # ru_maxrss is in KiB on Linux, bytes on macOS: the process's peak so far
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    row["peak_memory_mib"] = peak / (2**20 if sys.platform == "darwin" else 2**10)
    row["finished"] = _now()
    return row


def sweep(
    spec,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    store=None,
    retry_failed: bool = False,
    progress: bool = True,
    threads: int | None = None,
) -> SweepSummary:
    """Run every run of ``spec`` (a TOML path, a dict or a :class:`Spec`) not yet stored.

    ``workers``: processes of a local Dask cluster (default: the machine's cores); 0 runs
    everything in this process, one after another. ``scheduler``: the address of an existing
    Dask scheduler (``tcp://host:8786``) instead of a local cluster. ``store`` overrides the
    spec's store file. ``threads``: torch threads per run (default: the machine's cores
    shared among the local workers; in this process with ``workers=0``, torch's own).
    """
    if not isinstance(spec, Spec):
        spec = load_spec(spec, store=store)
    elif store is not None:
        spec = Spec(spec.runs, Path(store), spec.source)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)):
        raise SymweakError(f"workers must be a whole number >= 0, got {workers!r}.")
    if workers is not None and workers < 0:
        raise SymweakError(f"workers must be a whole number >= 0, got {workers}.")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)):
        raise SymweakError(f"threads must be a whole number >= 1, got {threads!r}.")
    if threads is not None and threads < 1:
        raise SymweakError(f"threads must be a whole number >= 1, got {threads}.")
    results = Store(spec.store)
    done = results.keys("ok") | (set() if retry_failed else results.keys("failed"))
    todo = [run for run in spec.runs if run.key not in done]
    summary = SweepSummary(spec.store, len(spec.runs), len(spec.runs) - len(todo), 0, 0)
    if not todo:
        return summary
    bar = _bar(len(todo), progress)

    def record(row):
        if row["status"] == "interrupted":
            # the discovery absorbed the Ctrl-C (it ends a phase early and goes on): stop the
            # sweep here and leave the run to the next one, as if it had not started
            raise KeyboardInterrupt
        results.put(row)
        if row["status"] == "ok":
            summary.ok += 1
        else:
            summary.failed += 1
            log.warning("symweak: sweep: %s failed: %s", row["label"], row["error"])
        bar.update(1)
        bar.set_postfix(ok=summary.ok, failed=summary.failed, refresh=False)
        if progress and bar.disable:  # no terminal (a log, CI): one line per run, no bar
            done = summary.ok + summary.failed
            seconds = f", {row['seconds']:.0f} s" if row.get("seconds") is not None else ""
            print(
                f"sweep: {done}/{len(todo)} {row['label']}: {row['status']}{seconds}",
                file=sys.stderr,
                flush=True,
            )

    try:
        if workers == 0 and scheduler is None:
            for run in todo:
                record(execute(run, threads))
        else:
            _on_dask(todo, workers, scheduler, record, threads)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        bar.close()
    return summary


def _bar(total: int, progress: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="sweep", unit="run", disable=not progress or None, mininterval=1)


def _on_dask(todo: list[Run], workers: int | None, scheduler: str | None, record, threads) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise SymweakError(
            "Sweeps run on Dask distributed: pip install 'symweak[sweep]' (or workers=0 to run "
            "in this process)."
        ) from None
    cluster = None
    if scheduler is None:
        n = workers or os.cpu_count() or 1
        threads = threads or max(1, (os.cpu_count() or 1) // n)
        # BLAS pools are sized when NumPy loads: set before the worker process starts
        pools = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: two sweeps on one machine must not clash
            silence_logs=logging.ERROR,
            env={name: str(threads) for name in pools},
        )
    client = Client(cluster if cluster is not None else scheduler)
    futures = {}
    try:
        for run in todo:
            future = client.submit(execute, run, threads, key=f"symweak-run-{run.key}", pure=False)
            futures[future] = run
        for future in as_completed(futures):
            try:
                row = future.result()
            except Exception as exc:  # the worker died (KilledWorker) or could not run it
                row = execute_failed(futures[future], exc)
            record(row)
    finally:
        for future in futures:
            future.cancel()
        client.close()
        if cluster is not None:
            cluster.close()


def execute_failed(run: Run, exc: BaseException) -> dict[str, Any]:
    """The row of a run whose worker never returned (lost worker, unpicklable result)."""
    return {
        **_identity(run),
        "status": "failed",
        "error": f"{type(exc).__name__}: {exc}",
        "finished": _now(),
    }


def _identity(run: Run) -> dict[str, Any]:
    """The columns that say which run a row is."""
    return {
        "key": run.key,
        "label": run.label,
        "system": run.system,
        "file": run.file,
        "ratio": run.ratio,
        "noise": run.noise,
        "seed": run.seed,
        "config": run.config(),
    }


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
