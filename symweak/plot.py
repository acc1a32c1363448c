"""Figures of a discovery (matplotlib, the ``plot`` extra).

* :func:`plot_fields` — true vs reconstructed field: 1-D space–time images, 2-D snapshots
  (the layout of the paper's appendix tables), with the difference;
* :func:`plot_losses` — data and weak losses per training phase (network path);
* :func:`plot_coefficients` — coefficient trajectories during tuning (network path);
* :func:`plot_residuals` — observation minus reconstruction at the observed points;
* :func:`save_figures` — all that apply, as PNG files in a folder.

The reconstruction is the surrogate's prediction when the result has one, otherwise the
simulation of the discovered equation from the data's first snapshot.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._errors import SymweakError

__all__ = [
    "plot_coefficients",
    "plot_fields",
    "plot_losses",
    "plot_pareto",
    "plot_residuals",
    "plot_uncertainty",
    "plot_verdicts",
    "save_figures",
]


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise SymweakError("Figures need matplotlib: pip install 'symweak[plot]'.") from None
    return plt


def _reconstruction(result, obs, periodic=None, mirror=()) -> tuple[dict | None, dict, str]:
    """(data on the grid or None, reconstruction on the grid, its label)."""
    if obs.grid is None:
        raise SymweakError("plot_fields needs observations on a grid (full or sampled).")
    truth = None
    if obs.is_full_grid:
        which = "clean" if obs.clean else "fields"
        truth = {f: obs.to_grid(f, which) for f in obs.field_names}
    if result.surrogate is not None:
        return truth, result.surrogate.predict_grid(dict(obs.grid.axes)), "surrogate"
    return truth, result.simulate(obs, periodic=periodic, mirror=mirror).fields, "simulated"


def plot_fields(
    result, obs, field: str | None = None, snapshots: int = 3, periodic=None, mirror=()
):
    """True vs reconstructed field (the surrogate's, or the equation simulated from the
    first snapshot with ``periodic``/``mirror`` axes as :meth:`Discovery.simulate`); returns
    the matplotlib figure."""
    plt = _plt()
    truth, recon, label = _reconstruction(result, obs, periodic, mirror)
    names = [field] if field else [f for f in recon if truth is None or f in truth]
    axes = dict(obs.grid.axes)
    space = [n for n in axes if n != "t"]
    if len(space) == 1:
        fig, ax = plt.subplots(
            len(names), 3 if truth else 1, figsize=(12, 3.2 * len(names)), squeeze=False
        )
        extent = [axes["t"][0], axes["t"][-1], axes[space[0]][0], axes[space[0]][-1]]
        for row, name in enumerate(names):
            panels = [(f"{name} ({label})", recon[name])]
            if truth:
                panels = [(f"{name} (data)", truth[name]), *panels]
                n = min(len(truth[name]), len(recon[name]))
                panels.append(("difference", recon[name][:n] - truth[name][:n]))
            for col, (title, values) in enumerate(panels):
                style = {"cmap": "viridis"}
                if title == "difference":
                    lim = float(np.max(np.abs(values))) or 1.0
                    style = {"cmap": "RdBu_r", "vmin": -lim, "vmax": lim}
                im = ax[row, col].imshow(
                    values.T, origin="lower", aspect="auto", extent=extent, **style
                )
                ax[row, col].set_title(title)
                ax[row, col].set_xlabel("t")
                ax[row, col].set_ylabel(space[0])
                fig.colorbar(im, ax=ax[row, col])
    else:
        t = axes["t"]
        idx = np.linspace(0, min(len(t), len(next(iter(recon.values())))) - 1, snapshots).astype(
            int
        )
        rows = [(f"{name} ({label})", recon[name]) for name in names]
        if truth:
            rows = [
                r
                for name in names
                for r in ((f"{name} (data)", truth[name]), (f"{name} ({label})", recon[name]))
            ]
        fig, ax = plt.subplots(
            len(rows), snapshots, figsize=(4 * snapshots, 3.4 * len(rows)), squeeze=False
        )
        sl = (slice(None), slice(None)) + (0,) * (len(space) - 2)
        extent = [axes[space[0]][0], axes[space[0]][-1], axes[space[1]][0], axes[space[1]][-1]]
        for r, (title, values) in enumerate(rows):
            for c, k in enumerate(idx):
                im = ax[r, c].imshow(values[k][sl].T, origin="lower", extent=extent)
                ax[r, c].set_title(f"{title}, t = {t[k]:.3g}")
                fig.colorbar(im, ax=ax[r, c])
    fig.suptitle(result.short(4).replace("\n", "; "), fontsize=9)
    fig.tight_layout()
    return fig


def plot_losses(result):
    """Data and weak losses per training phase (network results)."""
    plt = _plt()
    phases = result.history.phases
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.6))
    offset = 0
    drawn = False
    for name in ("search", "prune", "tune"):
        ph = phases.get(name)
        if ph is None or not ph.weak_loss:
            continue
        n = ph.epochs
        steps = np.linspace(offset, offset + n, len(ph.weak_loss))
        if getattr(ph, "data_loss", None):
            ax[0].semilogy(steps, ph.data_loss, label=name)
        ax[1].semilogy(steps, ph.weak_loss, label=name)
        offset += n
        drawn = True
    if not drawn:
        raise SymweakError("This result has no training history (the grid path trains nothing).")
    ax[0].set_title("data loss")
    ax[1].set_title("weak loss (normalised)")
    for a in ax:
        a.set_xlabel("epoch (after warm-up)")
        a.legend()
    fig.tight_layout()
    return fig


def plot_coefficients(result):
    """Coefficient of every candidate term during tuning (least squares each step)."""
    plt = _plt()
    tune = result.history.phases.get("tune")
    traj = tune.coefficients if tune is not None else None
    if not traj:
        raise SymweakError("This result has no coefficient trajectories (network path only).")
    fig, ax = plt.subplots(1, len(traj), figsize=(6 * len(traj), 3.8), squeeze=False)
    for a, (lhs, terms) in zip(ax[0], traj.items()):
        chosen = {t.short() for eq in result.system if eq.lhs.short() == lhs for t in eq.terms}
        for term, values in terms.items():
            a.plot(
                values,
                lw=2 if term in chosen else 0.8,
                ls="-" if term in chosen else ":",
                label=term if term in chosen else None,
            )
        a.set_title(f"{lhs}: coefficients while tuning (bold: kept)")
        a.set_xlabel("record")
        a.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_residuals(result, obs, periodic=None, mirror=()):
    """Observation minus reconstruction at the observed points, against time: the
    surrogate's (network results), or the equation simulated from the first snapshot
    (full-grid results; ``periodic``/``mirror`` as :meth:`Discovery.simulate`)."""
    plt = _plt()
    if result.surrogate is not None:
        pred = result.surrogate.predict(obs.coords)
        what = "surrogate"
    else:
        sim = result.simulate(obs, periodic=periodic, mirror=mirror)
        pred = {n: np.full(len(obs), np.nan) for n in sim.fields}
        steps = len(sim.t)
        for name, grid in sim.fields.items():
            full = np.full(obs.grid.shape, np.nan)
            full[:steps] = grid
            pred[name] = full.reshape(-1)[obs.grid_index]
        what = "simulated equation"
    fig, ax = plt.subplots(1, len(pred), figsize=(6 * len(pred), 3.4), squeeze=False)
    for a, (name, values) in zip(ax[0], pred.items()):
        if name not in obs.fields:
            continue
        a.scatter(obs.coords["t"], obs.fields[name] - values, s=1, alpha=0.4)
        a.set_title(f"{name}: observation - {what}")
        a.set_xlabel("t")
    fig.tight_layout()
    return fig


def plot_uncertainty(result):
    """Each kept coefficient with its 95 % interval, and every candidate's inclusion
    probability as a bar (the returned equation's terms in colour, the others grey, the
    threshold drawn)."""
    plt = _plt()
    fits = [f for f in result.history.fits if f.intervals] if result.history else []
    if not fits:
        raise SymweakError("This result has no intervals (uncertainty=True computes them).")
    fig, ax = plt.subplots(2, len(fits), figsize=(6 * len(fits), 6.4), squeeze=False)
    from .discover import STABILITY_THRESHOLD

    threshold = result.settings.get("stability_threshold", STABILITY_THRESHOLD)
    for k, fit in enumerate(fits):
        terms = list(fit.intervals)
        coefs = {t.short(): c for eq in result.system for t, c in eq.coefficients.items()
                 if eq.lhs.short() == fit.lhs}  # fmt: skip
        values = [coefs[t] for t in terms]
        lo = [values[i] - fit.intervals[t][0] for i, t in enumerate(terms)]
        hi = [fit.intervals[t][1] - values[i] for i, t in enumerate(terms)]
        a = ax[0][k]
        a.errorbar(range(len(terms)), values, yerr=[lo, hi], fmt="o", capsize=4)
        a.axhline(0.0, color="0.7", lw=0.8)
        a.set_xticks(range(len(terms)), terms, rotation=30, ha="right")
        a.set_title(f"{fit.lhs}: coefficients with 95 % intervals")
        probs = sorted(fit.probabilities.items(), key=lambda kv: -kv[1])
        b = ax[1][k]
        # the returned equation's terms in colour: a support most halves chose is kept whole
        # exactly, so a kept term can stand below the threshold
        colors = ["tab:blue" if t in fit.intervals else "0.75" for t, _ in probs]
        b.bar(range(len(probs)), [p for _, p in probs], color=colors)
        b.set_xticks(range(len(probs)), [t for t, _ in probs], rotation=30, ha="right")
        if threshold:
            b.axhline(threshold, color="tab:red", ls="--", lw=1, label="threshold")
            b.legend(fontsize=8)
        b.set_ylim(0, 1.05)
        b.set_title(f"{fit.lhs}: inclusion probability (stability selection)")
    fig.tight_layout()
    return fig


def plot_pareto(result):
    """The Pareto front: complexity against residual on held-out test functions, the
    returned equation marked."""
    plt = _plt()
    front = result.pareto
    fronts = front if isinstance(front, dict) else {result.system[0].lhs.short(): front}
    fronts = {k: v for k, v in fronts.items() if v}
    if not fronts:
        raise SymweakError("This result has no Pareto front (uncertainty=True computes it).")
    fig, ax = plt.subplots(1, len(fronts), figsize=(6 * len(fronts), 3.8), squeeze=False)
    for a, (lhs, points) in zip(ax[0], fronts.items()):
        xs = [p.complexity for p in points]
        ys = [p.held_out for p in points]
        a.plot(xs, ys, "o-", color="tab:blue")
        for p in points:
            label = f"{len(p.equation.coefficients)} term(s)"
            a.annotate(label, (p.complexity, p.held_out), fontsize=7, xytext=(4, 4),
                       textcoords="offset points")  # fmt: skip
            if p.chosen:
                a.plot([p.complexity], [p.held_out], "o", ms=12, mfc="none", color="tab:red",
                       label=p.equation.short(3))  # fmt: skip
        a.set_yscale("log")
        a.set_xlabel("complexity")
        a.set_ylabel("held-out relative residual")
        a.set_title(f"{lhs}: Pareto front (circled: returned)")
        a.legend(fontsize=7)
    fig.tight_layout()
    return fig


#: the x labels' third line: why an alternative is one (none for "fit")
_WHY = {
    "stand-in": "\nstand-in",
    "floor": "\nbelow floor",
    "surrogate": "\nother surrogate",
    "untuned": "\nbefore tuning",
    "symmetry": "\nU(1) fit",
    "data": "\nfits the data",
}


def plot_verdicts(result):
    """What the data determine: a term × alternative chart per equation (columns: the
    equations the data cannot tell apart, closest first; a filled cell: the term is in that
    equation, with its coefficient; blue: determined, orange: uncertain), each uncertain
    term's detection floor beside its name; below each column its held-out misfit and,
    unless it is within reach of the best, why it is an alternative."""
    plt = _plt()
    fits = [f for f in result.history.fits if f.verdicts] if result.history else []
    if not fits:
        raise SymweakError("This result has no verdicts (uncertainty=True computes them).")
    widths = [max(len(f.alternatives), 1) for f in fits]
    fig, ax = plt.subplots(
        1, len(fits), figsize=(sum(2.2 + 1.3 * w for w in widths), 0.9 + 0.45 * max(
            len(f.verdicts) for f in fits)), squeeze=False,
    )  # fmt: skip
    colours = {"determined": "tab:blue", "uncertain": "tab:orange"}
    for a, fit in zip(ax[0], fits):
        terms = list(fit.verdicts)
        for col, alt in enumerate(fit.alternatives):
            for row, term in enumerate(terms):
                if term in alt["terms"]:
                    colour = colours[fit.verdicts[term]]
                    a.add_patch(plt.Rectangle((col - 0.45, row - 0.4), 0.9, 0.8, color=colour))
                    a.text(col, row, f"{alt['terms'][term]:.3g}", ha="center", va="center",
                           fontsize=8, color="white")  # fmt: skip
        labels = [t + (f"  (floor {fit.floors[t]:.2g})" if t in fit.floors else "") for t in terms]
        a.set_yticks(range(len(terms)), labels)
        a.set_xticks(
            range(len(fit.alternatives)),
            [
                f"#{k + 1}\n{alt['held_out']:.3g}" + _WHY.get(alt.get("reason"), "")
                for k, alt in enumerate(fit.alternatives)
            ],
        )
        a.set_xlim(-0.6, len(fit.alternatives) - 0.4)
        a.set_ylim(len(terms) - 0.5, -0.5)
        a.set_xlabel("equations the data cannot tell apart (held-out misfit)")
        a.set_title(f"{fit.lhs}: blue determined, orange uncertain")
    fig.tight_layout()
    return fig


def save_figures(
    result, folder, obs=None, *, periodic=None, mirror=(), skipped: dict | None = None
) -> list[Path]:
    """Every figure that applies to ``result`` (and ``obs`` when given), as PNG files.
    ``skipped`` (a dict, when given) receives ``{figure: why}`` for each figure of ``obs``
    that could not be drawn (a failed simulation, data off a grid), and for the network's
    own figures of a result that has them not."""
    plt = _plt()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    jobs = [
        ("losses", lambda: plot_losses(result)),
        ("coefficients", lambda: plot_coefficients(result)),
        ("uncertainty", lambda: plot_uncertainty(result)),
        ("pareto", lambda: plot_pareto(result)),
        ("verdicts", lambda: plot_verdicts(result)),
    ]
    if obs is not None:
        jobs += [
            ("fields", lambda: plot_fields(result, obs, periodic=periodic, mirror=mirror)),
            ("residuals", lambda: plot_residuals(result, obs, periodic=periodic, mirror=mirror)),
        ]
    for name, job in jobs:
        try:
            fig = job()
        except SymweakError as exc:
            if skipped is not None and (name in ("fields", "residuals") or result.surrogate):
                skipped[name] = str(exc)
            continue
        path = folder / f"{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(path)
    return made
