"""2-D wave: u_tt = u_xx + u_yy.

Generates the benchmark data with symweak's own solver, samples r = 0.05 of the grid,
adds noise, discovers the equation and scores it against the truth.

    python examples/wave.py   # the paper's setting (network path)
    python examples/wave.py --ratio 1 --noise 0.1  # full grid: fast path
"""

from _run import run  # the shared steps (examples/_run.py)

if __name__ == "__main__":
    run("wave", 0.05, 0, "id,^2,^3,sin,*", periodic=["x", "y"], description=__doc__.splitlines()[0])
