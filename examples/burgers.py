"""Burgers: u_t = -u u_x + 0.1 u_xx.

Generates the benchmark data with symweak's own solver, samples r = 0.1 of the grid,
adds noise, discovers the equation and scores it against the truth.

    python examples/burgers.py   # the paper's setting (network path)
    python examples/burgers.py --ratio 1 --noise 0.1  # full grid: fast path
"""

from _run import run  # the shared steps (examples/_run.py)

if __name__ == "__main__":
    run("burgers", 0.1, 0.2, "id,^2,^3,sin,*", periodic=["x"], description=__doc__.splitlines()[0])
