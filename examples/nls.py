"""nonlinear Schroedinger: i psi_t = -0.5 psi_xx - |psi|^2 psi, split psi = u + i v.

Generates the benchmark data with symweak's own solver, samples r = 0.25 of the grid,
adds noise, discovers the equation and scores it against the truth.

    python examples/nls.py   # the paper's setting (network path)
    python examples/nls.py --ratio 1 --noise 0.1  # full grid: fast path
"""

from _run import run  # the shared steps (examples/_run.py)

if __name__ == "__main__":
    run(
        "nls",
        0.25,
        0,
        "id,^2,^3,*",
        constraints="u1(u, v)",
        periodic=["x"],
        description=__doc__.splitlines()[0],
    )
