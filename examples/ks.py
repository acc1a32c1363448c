"""Kuramoto-Sivashinsky: u_t = -u u_x - u_xx - u_xxxx.

Generates the benchmark data with symweak's own solver, samples r = 0.25 of the grid,
adds noise, discovers the equation and scores it against the truth.

    python examples/ks.py   # the paper's setting (network path)
    python examples/ks.py --ratio 1 --noise 0.1  # full grid: fast path
"""

import argparse
import time

import symweak
from symweak.bench import generate, get_system
from symweak.bench.metrics import score_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratio", type=float, default=0.25, help="sampling ratio r")
    parser.add_argument("--noise", type=float, default=0, help="noise level sigma_NR")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--simulate", action="store_true", help="simulate the result")
    parser.add_argument("--export", default=None, help="write the equation (.tex, .py or .c)")
    args = parser.parse_args()

    system = get_system("ks")
    full = generate(system.name)
    obs = full.sample(args.ratio, seed=args.seed) if args.ratio < 1 else full
    obs = obs.add_noise(args.noise, seed=args.seed) if args.noise > 0 else obs
    print(obs.describe().splitlines()[0])
    start = time.perf_counter()
    res = symweak.discover(
        obs,
        ops="id,^2,^3,sin,*",
        lhs=f"{system.lhs}",
        seed=args.seed,
    )
    seconds = time.perf_counter() - start
    print("true:      ", system.true_equations().short())
    print("discovered:", res.short())
    for s in score_system(res.system, system.true_equations()):
        print(f"TPR = {s.tpr:.2f}, E_inf = {s.e_inf:.4f}, E_2 = {s.e_2:.4f}")
    print(f"{seconds:.1f} s")
    if args.export:
        res.export(args.export, periodic=["x"])
        print("wrote", args.export)
    if args.simulate:
        sim = res.simulate(full)  # integrate the discovered PDE from the first snapshot
        print(f"simulation: relative L2 error against the data {sim.errors}")


if __name__ == "__main__":
    main()
