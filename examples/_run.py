"""What every example script does: generate a benchmark system with symweak's own solver,
sample and add noise as the paper does, discover the equation, score it against the truth,
and optionally export and simulate the result."""

import argparse
import time

import symweak
from symweak.bench import generate, get_system
from symweak.bench.metrics import score_system


def run(name, ratio, noise, ops, constraints=None, periodic=(), description=""):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--ratio", type=float, default=ratio, help="sampling ratio r")
    parser.add_argument("--noise", type=float, default=noise, help="noise level sigma_NR")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--constraints", default=constraints, help="constraint text (replaces the default)"
    )
    parser.add_argument("--simulate", action="store_true", help="simulate the result")
    parser.add_argument("--export", default=None, help="write the equation (.tex, .py or .c)")
    args = parser.parse_args()

    system = get_system(name)
    full = generate(system.name)
    obs = full.sample(args.ratio, seed=args.seed) if args.ratio < 1 else full
    obs = obs.add_noise(args.noise, seed=args.seed) if args.noise > 0 else obs
    print(obs.describe().splitlines()[0])
    start = time.perf_counter()
    res = symweak.discover(
        obs, ops=ops, lhs=system.lhs, seed=args.seed, constraints=args.constraints
    )
    seconds = time.perf_counter() - start
    print("true:      ", system.true_equations().short())
    print("discovered:", res)
    for s in score_system(res.system, system.true_equations()):
        print(f"TPR = {s.tpr:.2f}, E_inf = {s.e_inf:.4f}, E_2 = {s.e_2:.4f}")
    print(f"{seconds:.1f} s")
    if args.export:
        res.export(args.export, periodic=periodic)
        print("wrote", args.export)
    if args.simulate:
        sim = res.simulate(full)  # integrate the discovered PDE from the first snapshot
        print(f"simulation: relative L2 error against the data {sim.errors}")
