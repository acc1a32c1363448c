"""``discover(..., surrogates=K, combine="vote")``: K network runs with child seeds, one
result.

The result shown is the run with the user's seed (so the point estimate is the same as
without an ensemble, and the intervals are about it). The K − 1 other members differ in
every random choice a seed makes — the surrogate's initialisation and Gaussians, the
held-out split, the test functions, the data batches — so their spread is the part of the
uncertainty that one run's bootstrap over test functions cannot see (the surrogate's own
variability). Per term of the shown equation:

* the inclusion probability becomes the fraction of the K members that kept the term;
* the 95 % interval becomes the envelope of the run's own bootstrap interval and every
  member's coefficient of that term.

Where :func:`.network._forking.plan` says so (a CPU that can fork, more than one core for
the run), the member runs train in child processes, started with the shown run when the
count is given (``surrogates=K``) and after it for ``"auto"``, the shown run keeping its
share of the cores; elsewhere one after another in this process. Each member's
equation is kept in ``history.ensemble``.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from functools import partial

from .._seeds import child_seed

__all__ = ["Voters", "combine", "member_seeds"]

log = logging.getLogger("symweak")


def member_seeds(seed: int, ensemble: int) -> list[int]:
    """The seeds of the members after the first (which uses ``seed`` itself)."""
    base = child_seed(seed, "ensemble")
    return [base + 7919 * k for k in range(1, ensemble)]


def _member_run(cfg, rebuild, progress: bool, seed: int):
    """One member run: (its equations, whether it was interrupted). Its configuration
    says one surrogate: the count only decides how many runs there are (and what the
    run's time estimate counts)."""
    from . import network as network_method

    own = cfg.with_overrides({"surrogates": 1})
    equations, _, record = network_method.run(rebuild(seed), own, progress)
    return equations, record.interrupted


class Voters:
    """The member runs of ``combine="vote"`` (``seeds``): in child processes forked now
    where :func:`.network._forking.plan` says so, each taking the next run as it is free
    (and the shown run's process too once it is done), the rest here."""

    def __init__(self, seeds: list[int], cfg, rebuild) -> None:
        from ..surrogate import choose_device
        from .network._forking import Children, plan

        self.seeds, self.cfg, self.rebuild = list(seeds), cfg, rebuild
        self.plan = plan(len(seeds) + 1, choose_device(cfg.training.device))
        self.children = None
        #: the threads the shown run keeps meanwhile (None: its own count)
        self.threads = self.plan.run_threads
        if self.plan.workers:
            fn = partial(_member_run, cfg, rebuild, False)
            workers, threads = self.plan.workers, self.plan.member_threads
            self.children = Children(fn, self.seeds, workers, threads)
            log.info("symweak: %d member runs in %d processes", len(seeds), workers)

    @contextmanager
    def beside(self):
        """torch's threads left to the shown run while the children run."""
        from .network._forking import beside

        with beside(self.plan.workers, self.threads):
            yield

    def collect(self, progress: bool) -> tuple[list, bool]:
        """``[(seed, equations)]`` in seed order, and whether Ctrl-C or an interrupted member
        stopped it (the members finished by then are kept)."""
        from .._trainer import announce
        from .network._forking import torch_threads

        done, stopped = {}, False
        if self.children is not None:
            announce(f"runs 2–{len(self.seeds) + 1} of {len(self.seeds) + 1}", progress)
            try:
                # the shown run is done: its cores take the runs no child has taken yet
                while (seed := self.children.claim()) is not None:
                    with torch_threads(self.plan.member_threads):
                        done[seed] = _member_run(self.cfg, self.rebuild, False, seed)
                    if done[seed][1]:
                        raise KeyboardInterrupt
                done.update(self.children.collect())
            except KeyboardInterrupt:
                done, stopped = {**self.children.stop_now(), **done}, True
        for k, seed in enumerate(self.seeds):
            if stopped:
                break
            if seed in done:
                continue
            announce(f"run {k + 2} of {len(self.seeds) + 1}", progress)
            try:
                with torch_threads(self.plan.member_threads):
                    done[seed] = _member_run(self.cfg, self.rebuild, progress, seed)
            except KeyboardInterrupt:
                stopped = True
            stopped |= seed in done and done[seed][1]
        stopped |= any(done[s][1] for s in done)
        return [(s, done[s][0]) for s in self.seeds if s in done], stopped

    def close(self) -> None:
        if self.children is not None:
            self.children.close()


def combine(equations, history, members) -> None:
    """Fold the members (``[(seed, equations)]``) into the shown run's fit records."""
    fits = {f.lhs: f for f in history.fits}
    total = 1 + len(members)
    history.ensemble = [
        {"seed": seed, "equations": [e.short() for e in eqs]} for seed, eqs in members
    ]
    for eq in equations:
        fit = fits.get(eq.lhs.short())
        if fit is None:
            continue
        others = []
        for _, eqs in members:
            match = [e for e in eqs if e.lhs == eq.lhs]
            others.append(
                {t.short(): float(c) for t, c in match[0].coefficients.items()} if match else {}
            )
        probabilities, intervals = dict(fit.probabilities), dict(fit.intervals)
        for term, coef in eq.coefficients.items():
            name = term.short()
            values = [o[name] for o in others if name in o]
            probabilities[name] = (1 + len(values)) / total
            lo, hi = intervals.get(name, (float(coef), float(coef)))
            intervals[name] = [min([lo, *values]), max([hi, *values])]
        fit.probabilities = probabilities
        fit.intervals = intervals
        _fold_verdicts(fit, eq, others)
    log.info("symweak: ensemble of %d runs folded into the intervals", total)


def _fold_verdicts(fit, eq, others) -> None:
    """The members are other surrogates of the same data: a term some of them hold and
    others lack is uncertain, and each member's equation that differs from the shown one
    joins the alternatives (reason "surrogate")."""
    if not fit.verdicts:
        return
    verdicts = dict(fit.verdicts)
    shown = {t.short() for t in eq.coefficients}
    seen = [set(o) for o in others if o]
    for term in set().union(shown, *seen):
        if any(term not in s for s in [shown, *seen]):
            verdicts[term] = "uncertain"
    known = [set(a["terms"]) for a in fit.alternatives]
    for o in others:
        if o and set(o) not in known:
            known.append(set(o))
            fit.alternatives.append(
                {
                    "terms": dict(o),
                    "held_out": float("nan"),
                    "margin": float("nan"),
                    "reason": "surrogate",
                }
            )
    fit.verdicts = verdicts
    # a term a member holds is uncertain, not excluded (its floor stays the main run's)
    fit.excluded = {t: v for t, v in fit.excluded.items() if t not in verdicts}
