"""2-D sine-Gordon: u_tt = u_xx + u_yy - sin(u).

Generates the benchmark data with symweak's own solver, samples r = 0.1 of the grid,
adds noise, discovers the equation and scores it against the truth.

    python examples/sine_gordon.py   # the paper's setting (network path)
    python examples/sine_gordon.py --ratio 1 --noise 0.1  # full grid: fast path
"""

from _run import run  # the shared steps (examples/_run.py)

if __name__ == "__main__":
    run(
        "sine_gordon", 0.1, 0, "id,^2,^3,sin,*", periodic=["x"], description=__doc__.splitlines()[0]
    )
