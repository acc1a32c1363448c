"""Real data: the scratch assays of Jin et al. (2016), shipped with symweak.

Cell density (cells/µm²) at 38 positions (µm) and 5 times (h), three replicates each, at two
initial densities. The replicates go in as they are (their spread is the noise); what we know
of the biology goes in as constraints: the scratch closes from both sides (`symmetric: x`: no
advection) and cells grow and spread (`order: x <= 2`: growth and diffusion, possibly
density-dependent). The result is compared with the published Fisher–KPP fits
u_t = D u_xx + r u (1 − u/K): D ≈ 250–1000 µm²/h, r ≈ 0.04–0.07 /h, K ≈ 1.7e-3 cells/µm².

    python examples/scratch_assay.py                 # both densities
    python examples/scratch_assay.py --cells 20000 --plot assay.png
    python examples/scratch_assay.py --twin          # the simulated twin (known truth)
"""

import argparse
import time

import numpy as np

import symweak
from symweak.data import scratch_assay

#: what the biology says (docs/real-data.md)
CONSTRAINTS = "symmetric: x\norder: x <= 2"
PUBLISHED = {"D": (250.0, 1000.0), "r": (0.04, 0.07), "K": (1.7e-3 * 0.8, 1.7e-3 * 1.2)}


def fisher_kpp(res):
    """(D, r, K) where the equation is D u_xx + r u − (r/K) u², else None."""
    coef = {term.short(): float(c) for term, c in res.ir.coefficients.items()}
    if set(coef) != {"u_xx", "u", "u^2"} or coef["u^2"] >= 0:
        return None
    return coef["u_xx"], coef["u"], -coef["u"] / coef["u^2"]


def report(res, seconds):
    print("discovered:", res.short(4))
    print("verdicts:  ", res.verdicts)
    if res.detection_floor:
        print("floor:     ", {k: f"{v:.3g}" for k, v in res.detection_floor.items()})
    found = fisher_kpp(res)
    if found is not None:
        inside = all(lo <= v <= hi for v, (lo, hi) in zip(found, PUBLISHED.values()))
        where = "within" if inside else "outside"
        D, r, K = found
        print(f"Fisher–KPP: D = {D:.4g} µm²/h, r = {r:.3g} /h, K = {K:.3g} cells/µm² ({where} "
              "the published ranges)")  # fmt: skip
    print(f"{seconds:.1f} s")


def plot(res, means, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        sim = res.simulate(means, mirror=["x"])
    except symweak.SymweakError as exc:  # an equation that blows up from the noisy profile
        sim = None
        print(f"not simulated: {exc}")
    x, t = means.grid.axes["x"], means.grid.axes["t"]
    data = means.to_grid("u")
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, ti in enumerate(t):
        colour = plt.cm.viridis(i / max(len(t) - 1, 1))
        ax.plot(x, data[i], "o", ms=3, color=colour, label=f"data, t = {ti:g} h")
        if sim is not None and i < len(sim.t):
            ax.plot(x, sim.fields["u"][i], "-", color=colour)
    ax.set(xlabel="x (µm)", ylabel="cells / µm²", title=res.short(3))
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}" + ("" if sim is None else " (lines: the discovered equation from the "
          f"first snapshot; relative L2 error {sim.errors['u']:.3f})"))  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, choices=(10_000, 20_000), action="append")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--twin", action="store_true", help="the simulated twin, not the data")
    parser.add_argument("--plot", default=None, help="write data vs the equation (.png)")
    args = parser.parse_args()
    for cells in args.cells or (10_000, 20_000):
        if args.twin:
            from symweak.bench._assay import assay_twin

            obs = assay_twin(cells, noise=0.2, seed=args.seed)
            print(f"twin of {cells} cells/well, truth:", obs.meta["truth"])
        else:
            obs = scratch_assay(cells)
        print(obs.describe())
        start = time.perf_counter()
        res = symweak.discover(obs, ops="+,-,*", lhs="u_t", constraints=CONSTRAINTS, seed=args.seed)
        report(res, time.perf_counter() - start)
        if args.plot and not args.twin:
            plot(res, scratch_assay(cells, replicates=False), args.plot.replace(".", f"_{cells}."))
        print()


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
