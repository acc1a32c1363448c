"""2-D Navier-Stokes (vorticity): omega_t = -d_x(u omega) - d_y(v omega) + 0.01 lap(omega).

Generates the benchmark data with symweak's own solver, samples r = 0.1 of the grid,
adds noise, discovers the equation and scores it against the truth.

    python examples/navier_stokes.py   # the paper's setting (network path)
    python examples/navier_stokes.py --ratio 1 --noise 0.1  # full grid: fast path

At 20 % noise Galilean invariance alone loses the viscous terms; stating isotropy and the
divergence-free velocity as well recovers them (docs/rules.md):

    NS="galilean(u, v); isotropic(u, v); forbid: u_x, v_y"
    python examples/navier_stokes.py --noise 0.2 --constraints "$NS"
"""

from _run import run  # the shared steps (examples/_run.py)

if __name__ == "__main__":
    run(
        "navier_stokes",
        0.1,
        0,
        "id,^2,*",
        constraints="galilean(u, v)",
        periodic=["x", "y"],
        description=__doc__.splitlines()[0],
    )
