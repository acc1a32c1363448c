"""Phase 0: the surrogate warm-up (data loss only). The kernel count comes from a rule on
the number of observations and their estimated noise (``kernels="auto"``, one warm-up) or
from comparing held-out losses (``kernels="compare"``, one warm-up per count)."""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from ..._trainer import announce
from ...surrogate import (
    FEW_VALUES,
    Surrogate,
    axis_lengths,
    estimate_noise,
    noise_readings,
    plain_mlp_like,
    split_points,
)
from .._config import PAPER_KERNELS
from .._history import WarmupRecord
from .._settings import (
    ASPECT_MAX,
    ASPECT_MISREAD,
    AUTO_SURROGATES,
    COMPARE_POINTS,
    KERNEL_CHOICES,
    LR_SURROGATE,
    NOISE_THRESHOLD,
    POINTS_PER_KERNEL,
    SURROGATES_NOISE,
    WARMUP_PATIENCE,
)
from ._forking import member_workers, workers_beside

__all__ = ["WarmedUp", "choose_kernels", "run"]

log = logging.getLogger("symweak")


@dataclass
class WarmedUp:
    """The kept surrogate, the warm-up's split of the observations and its batch size."""

    surrogate: Surrogate
    train: object
    held: object
    max_points: int | None
    interrupted: bool


def choose_kernels(trials, held) -> tuple[int, dict]:
    """Which of the warmed-up surrogates ``[(kernels, surrogate), ...]`` (ascending kernel
    counts) to keep: the smallest whose held-out loss exceeds the lowest one by at most one
    standard error of their point-by-point difference (the one-standard-error rule), on the
    held-out observations ``held`` (``Surrogate.point_errors``; computed only when there is
    a choice to make).

    With 1 000 Gaussians per feature and a few thousand observations the embedding has
    more parameters than there are data, and early stopping alone does not keep it from
    fitting noise: on Burgers (10 % of the grid, σ = 0.2) 64 kernels give a held-out loss
    of 0.0574 against 0.0657 and a reconstruction error ℒ of 6.0e-5 against 4.5e-4, while
    on clean Kuramoto–Sivashinsky cells 1 000 stay best by 14 standard errors (ℒ 3.5e-5
    against 2.2e-3 with 64). The same held-out points judge every count (same split, same
    seed), so their difference is measured point by point; counts within one standard
    error are indistinguishable on these data, and the smaller one is kept.
    Returns (index into ``trials``, ``{kernels: [held-out loss, standard error]}``)."""
    if len(trials) == 1 or held is None or not len(held):
        return len(trials) - 1, {}
    errors = [s.point_errors(held) for _, s in trials]
    means = [float(np.mean(e)) for e in errors]
    best = int(np.argmin(means))
    table = {}
    chosen = best
    for i, (count, _) in enumerate(trials):
        diff = errors[i] - errors[best]
        se = float(np.std(diff) / math.sqrt(len(diff)))
        table[int(count)] = [means[i], se]
        if chosen == best and i < best and means[i] - means[best] <= se:
            chosen = i
    return chosen, table


def rule_kernels(n: int, noise: float) -> int:
    """``kernels="auto"``: one Gaussian per ``POINTS_PER_KERNEL`` observations (clean, noisy),
    taken to the nearest of ``KERNEL_CHOICES`` in ratio (64, 250 or 1000).

    Why a rule and not a comparison: on the paper's rows (800-epoch warm-ups, seed 0; the
    table in docs/network.md) the held-out comparison of 64, 250 and 1 000 kept 64 on every
    noisy row but two (KS, NLS σ = 0.1: 250) and on sparse clean data (Burgers 2.5 %, 646
    points), 250 on Burgers 10 % clean (2 586 points) and 1 000 on the large clean rows (KdV,
    KS, NLS, Chafee–Infante 25 %, wave 5 %: 15–26 thousand points). One Gaussian per 10
    points when clean and per 40 when noisy gives those counts, or one whose held-out loss
    is within 1.3 % of the kept one's — from one warm-up instead of three. The comparison
    cannot be made cheaply instead: after 25–100 of 800 epochs 1 000 Gaussians lead on every
    row (they fit fastest) and the noisy rows' ranking turns only late (measured on an H100:
    short runs agreed with the full comparison on 1 of 11 rows)."""
    per = POINTS_PER_KERNEL[1] if noise >= NOISE_THRESHOLD else POINTS_PER_KERNEL[0]
    want = max(n / per, 1.0)
    return min(sorted(set(KERNEL_CHOICES)), key=lambda c: (abs(math.log(c / want)), c))


def _counts(obs, cfg, validation: float, seed: int) -> tuple[list[int], dict, dict]:
    """The kernel counts to warm up (0: the plain-MLP ablation), the noise estimate and the
    round neighbourhood's readings (:func:`symweak.surrogate.noise_readings`). A field the
    round neighbourhood misreads (:func:`misread`) gets the clean rule's count: it holds
    more structure than its noise."""
    if not cfg.embedding:
        return [0], {}, {}
    if cfg.kernels == "auto":
        noise, round_ = noise_readings(obs, seed=seed)
        worst = max((v for v in noise.values() if v == v), default=0.0)
        if misread(noise, round_) and not sampled(obs):
            worst = 0.0
        return [rule_kernels(len(obs), worst)], noise, round_
    if cfg.kernels == "compare":
        few = len(obs) <= COMPARE_POINTS and validation > 0
        return (sorted(set(KERNEL_CHOICES)) if few else [PAPER_KERNELS]), {}, {}
    return [cfg.kernels], {}, {}


def misread(noise: dict, round_: dict) -> bool:
    """Whether the round neighbourhood misreads some field (a pattern much finer along one
    axis, e.g. ten wavelengths in x over a slow transient): it reads at least
    NOISE_THRESHOLD, and at least ASPECT_MISREAD (√2) times the lowest reading ``noise``,
    so that it misses the field by more than the noise (round² − lowest² ≥ lowest²).
    Swift–Hohenberg at 10 %: 7.9 (clean), 1.9–2.6 (σ 0.05); every other zoo case and paper
    row 1.24 or less at σ ≥ 0.05, and under NOISE_THRESHOLD round when clean."""
    return any(
        r == r and noise.get(f, 0.0) == noise.get(f, 0.0)
        and r >= NOISE_THRESHOLD
        and r >= ASPECT_MISREAD * noise.get(f, 0.0)
        for f, r in round_.items()
    )  # fmt: skip


def sampled(obs) -> bool:
    """Whether some coordinate holds ``FEW_VALUES`` (10) distinct values or fewer (a few
    snapshots or sensors): there a round neighbourhood reaches across the gaps between
    them and misreads the field for that reason, not for a fine pattern (the five-snapshot
    assay twin, clean, read 0.080 round against 0.011 stretched), so nothing is shaped."""
    return any(np.unique(np.asarray(obs.coords[n])).size <= FEW_VALUES for n in obs.coord_names)


def aspect_for(obs, seed: int, noise: dict | None = None, round_=None) -> list[float] | None:
    """The Gaussians' initial width along each coordinate relative to a round one where the
    round neighbourhood misreads a field (:func:`misread`; ``noise`` and ``round_`` as
    :func:`symweak.surrogate.noise_readings` gives them, read here when not given): round
    ones are too wide along its fast axis and too narrow along the slow one. Then the
    field's length scales (:func:`symweak.surrogate.axis_lengths`, within [1/ASPECT_MAX,
    ASPECT_MAX], geometric mean 1); else None (round Gaussians)."""
    if len(obs.coord_names) < 2:
        return None
    if not noise or not round_:
        noise, round_ = noise_readings(obs, seed=seed)
    if not misread(noise, round_) or sampled(obs):
        return None
    lengths = np.clip(axis_lengths(obs, seed=seed), 1.0 / ASPECT_MAX, ASPECT_MAX)
    lengths = lengths / np.exp(np.mean(np.log(lengths)))
    return [round(float(v), 4) for v in lengths]


def _candidate(obs, cfg, count: int, seed: int) -> Surrogate:
    options = dict(
        features=cfg.features,
        hidden=cfg.hidden,
        layers=cfg.layers,
        activation=cfg.activation,
        seed=seed,
    )
    if count == 0:  # the ablation "without FE_φ": a plain MLP of about the same size
        size = cfg.kernels if isinstance(cfg.kernels, int) else PAPER_KERNELS
        reference = Surrogate.for_observations(obs, **{**options, "kernels": size})
        return Surrogate.for_observations(
            obs, seed=seed, **plain_mlp_like(reference, cfg.activation)
        )
    return Surrogate.for_observations(obs, **{**options, "kernels": count})


#: an epoch of search, prune or tune costs about this many warm-up epochs (the weak form
#: on the quadrature grid as well as the data term): 2.9 measured on the demo (Burgers 10 %
#: as point columns, 2 CPU threads; 2.3-2.5 before stability selection and readable terms)
LATER_EPOCH_COST = 3.0
#: the final fit (several test scales, stability selection), the candidate library and the
#: set-up cost about this many warm-up epochs: 790 on the same run (4.1 s of 18.2 s, 5.2 ms
#: a warm-up epoch; 1 400 before the sparse fits ran on the R factor); the estimate without
#: it said 17 s for a 38 s run
FINAL_COST = 800
#: the estimate is made after this many warm-up epochs (the first is not counted)
ESTIMATE_AFTER = 20


def noise_ratio(history, problem) -> float:
    """The estimated noise / std, the largest over the fields: the warm-up's estimate, or
    one made here when the warm-up made none (a fixed kernel count)."""
    record = history.phases.get("warmup")
    noise = getattr(record, "noise", None) or estimate_noise(problem.obs, seed=problem.seed)
    return max((float(v) for v in noise.values() if v == v), default=0.0)


def _what(obs, counts, noise, device) -> str:
    points = f"{len(obs):,} points".replace(",", " ")
    if obs.grid is not None:
        where = f"on a {' × '.join(map(str, obs.grid.shape))} grid"
    elif obs.replicates is not None:
        where = f"at {obs.replicates.distinct:,} coordinates (replicates)".replace(",", " ")
    else:
        where = "scattered"
    gauss = (
        f"{counts[0]} Gaussians per feature"
        if len(counts) == 1
        else f"{'/'.join(map(str, counts))} Gaussians compared"
    )
    if noise:
        how = "measured by the replicates" if obs.replicates is not None else "of the spread"
        gauss += f" (noise ≈ {max(noise.values()):.2g} {how})"
    return f"network method: {points} {where}, {gauss}, on {device}"


def expected_surrogates(cfg, noise: dict) -> int:
    """How many surrogates the final fit will average (``combine="mean"``), as far as it is
    known before the warm-up: ``cfg.surrogates``, or for ``"auto"`` what the noise estimate
    says (1 when there is none yet; the count is settled after the warm-up)."""
    if cfg.combine != "mean":
        return 1
    return surrogates_for(cfg, max((float(v) for v in noise.values() if v == v), default=0.0))


def surrogates_for(cfg, ratio: float) -> int:
    """``cfg.surrogates``, or for ``"auto"`` ``AUTO_SURROGATES`` where the noise / std
    ``ratio`` is at least ``SURROGATES_NOISE``, else 1."""
    if cfg.surrogates != "auto":
        return int(cfg.surrogates)
    return AUTO_SURROGATES if ratio >= SURROGATES_NOISE else 1


def _estimator(
    text: str, config, n_warmups: int, progress: bool, surrogates: int = 1, workers: int = 0
):
    """A ``Surrogate.fit`` callback that announces ``text`` with the expected run time once
    ``ESTIMATE_AFTER`` warm-up epochs have been timed: the run's own phases, the final fit
    and ``surrogates − 1`` more surrogates (a warm-up and a tuning phase each; with
    ``combine="vote"`` whole runs), shared among ``workers`` child processes when there are
    any."""
    tr = config.training
    later = tr.search_epochs + tr.prune_epochs + tr.tune_epochs
    member = tr.warmup_epochs * n_warmups + LATER_EPOCH_COST * tr.tune_epochs
    marks: dict[int, float] = {}
    along = bool(workers_beside())

    def callback(epoch: int, _loss) -> None:
        if epoch == 0:
            marks[0] = time.perf_counter()
        elif epoch == ESTIMATE_AFTER:
            per = (time.perf_counter() - marks[0]) / ESTIMATE_AFTER
            own = tr.warmup_epochs * n_warmups + LATER_EPOCH_COST * later + FINAL_COST
            vote = config.surrogate.combine == "vote"
            rest = (surrogates - 1) * (own if vote else member) / max(1, workers)
            # the other runs started beside this one, or after it
            total = per * (max(own, rest) if vote and along else own + rest)
            what = "runs" if vote else "surrogates"
            more = f" ({surrogates} {what})" if surrogates > 1 else ""
            announce(f"{text}: about {_seconds(total)} on this machine{more}", progress)

    return callback


def _seconds(s: float) -> str:
    if s < 90:
        return f"{max(round(s), 1)} s"
    return f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"


def run(problem, config, device, history, progress: bool, member: bool = False) -> WarmedUp:
    """Warm up one surrogate per kernel count and keep one (see :func:`choose_kernels`).
    ``member``: one of the more surrogates of ``surrogates=K`` (its run was announced with
    the run's own; nothing is announced here)."""
    obs, seed, cfg = problem.obs, problem.seed, config.surrogate
    max_points = config.data.max_points
    if max_points == "auto":
        max_points = 20000 if len(obs.coord_names) <= 2 else 5000
    start = time.perf_counter()
    # the warm-up's own split (Surrogate.fit makes the same one): training and held-out points
    train, held = split_points(obs, config.data.validation, seed)
    trials = []  # (kernels, surrogate, losses)
    interrupted = False
    counts, noise, round_ = _counts(obs, cfg, config.data.validation, seed)
    aspect = aspect_for(obs, seed, noise, round_) if cfg.embedding else None
    if aspect and not member:
        log.info(
            "surrogate: Gaussians shaped %s (a field much finer along one axis)",
            dict(zip(obs.coord_names, aspect)),
        )
    text = _what(obs, counts, noise, device)
    callback = None
    # a member was announced with the run's own warm-up, which counted it in its estimate
    if not member and config.training.warmup_epochs > ESTIMATE_AFTER:
        count = expected_surrogates(cfg, noise)
        workers = member_workers(count, device)
        if cfg.combine == "vote":  # K whole runs (a member run is given surrogates=1)
            count = surrogates_for(cfg, max([float(v) for v in noise.values() if v == v] + [0.0]))
            workers = workers_beside() or member_workers(count, device)
        callback = _estimator(text, config, len(counts), progress, count, workers)
    elif not member:
        announce(text, progress)
    for count in counts:
        candidate = _candidate(obs, cfg, count, seed).to(device)
        if aspect and candidate.embedding is not None and not candidate.embedding.full:
            candidate.embedding.reshape(aspect)
            candidate.start_between_samples(obs)
        losses = candidate.fit(
            obs,
            epochs=config.training.warmup_epochs,
            lr=LR_SURROGATE,
            validation=config.data.validation,
            seed=seed,
            progress=progress,
            max_points=max_points,
            callback=callback,
            patience=max(1, round(WARMUP_PATIENCE * config.training.warmup_epochs)),
        )
        callback = None  # one estimate, from the first warm-up
        trials.append((count, candidate, losses))
        if candidate.interrupted:
            interrupted = True
            break
    chosen, choice = choose_kernels([(c, s) for c, s, _ in trials], held)
    kernels, surrogate, losses = trials[chosen]
    history.phases["warmup"] = WarmupRecord(
        seconds=time.perf_counter() - start,
        final_loss=losses[-1] if losses else None,
        kernels=kernels,
        kernel_choice=choice,
        noise=noise,
        aspect=dict(zip(obs.coord_names, aspect)) if aspect else {},
    )
    if len(trials) > 1:
        log.info("surrogate: %d kernels per feature (held-out %s)", kernels, choice)
    return WarmedUp(surrogate, train, held, max_points, interrupted)
