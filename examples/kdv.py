"""Korteweg-de Vries: u_t = -6 u u_x - u_xxx.

Generates the benchmark data with symweak's own solver, samples r = 0.25 of the grid,
adds noise, discovers the equation and scores it against the truth.

    python examples/kdv.py   # the paper's setting (network path)
    python examples/kdv.py --ratio 1 --noise 0.1  # full grid: fast path
"""

from _run import run  # the shared steps (examples/_run.py)

if __name__ == "__main__":
    run("kdv", 0.25, 1, "id,^2,^3,sin,*", periodic=["x"], description=__doc__.splitlines()[0])
