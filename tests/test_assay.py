"""Data shaped like an experiment's: the shipped scratch assays and their simulated twin."""

import numpy as np
import pytest

import symweak
from symweak import DataError
from symweak.bench._assay import assay_twin
from symweak.data import scratch_assay
from symweak.discover._settings import REFIT_CHI2


def test_shipped_assays_load_with_their_replicates():
    obs = scratch_assay(10_000)
    assert repr(obs).startswith(
        "<Observations 570 points at 190 distinct coordinates, 3 replicates each; "
        "t in [0, 48], x in [25, 1875]"
    )
    # the pooled spread is the root mean square of the file's own per-place SD column
    assert obs.replicates.spread(obs.fields["u"]) == pytest.approx(1.272e-4, rel=2e-3)
    assert obs.meta["units"] == {"t": "h", "x": "µm", "u": "cells/µm²"}
    means = scratch_assay(20_000, replicates=False)
    assert means.is_full_grid and means.grid.shape == (5, 38)
    with pytest.raises(DataError, match=r"No scratch assay with 5000 cells per well is shipped"):
        scratch_assay(5000)


def test_twin_is_the_assay_layout_in_its_units():
    obs = assay_twin(20_000, noise=0.1, seed=0)
    assert len(obs) == 570 and obs.replicates.distinct == 190
    np.testing.assert_array_equal(np.unique(obs.coords["t"]), [0, 12, 24, 36, 48])
    np.testing.assert_allclose(np.unique(obs.coords["x"]), 25 + 50 * np.arange(38))
    assert obs.meta["truth"] == "u_t = 600*u_xx + 0.055*u - 32.3529*u^2"
    clean = obs.clean["u"][:190].reshape(5, 38)
    assert clean[0, 0] == pytest.approx(1.15e-3, rel=1e-3)  # outside the scratch at t = 0
    assert clean[0, 19] < 1e-6  # inside it
    assert 1.5e-3 < clean[-1, 0] < 1.7e-3  # grown towards K = 1.7e-3 by 48 h


def _coefficients(res):
    return {t.short(): float(c) for t, c in res.ir.coefficients.items()}


@pytest.mark.slow  # two whole runs (about 30 s each on 2 cores)
def test_rescaled_units_give_rescaled_coefficients_and_the_same_growth_verdicts():
    """The twin in µm, h, cells/µm² and with u × 1e6, x and t ÷ 1000: the same determined
    growth terms, each coefficient converted (u_xx × 1e-3, u × 1e3, u² × 1e-3) within 10 %, and a term
    only one run holds called uncertain there; the first run within 5 % of the truth
    (5 snapshots, clean). Rounding differs between the two unit systems and the float32
    training amplifies it as a retrained run would: on this machine the rescaled run's u
    came back 4 % low with two torch threads and 0.7 % high with one, and one build added an
    uncertain d_xx(u²). (A change of the ratio of the time and space units moves the paper's
    isotropic supports and can change the result: docs/data.md.)"""
    obs = assay_twin(20_000, noise=0.0, seed=0)
    scaled = symweak.Observations(
        {"t": obs.coords["t"] / 1000, "x": obs.coords["x"] / 1000}, {"u": obs.fields["u"] * 1e6}
    )
    kw = dict(ops="+,-,*", lhs="u_t", constraints="symmetric: x", seed=0, progress=False)
    a, b = symweak.discover(obs, **kw), symweak.discover(scaled, **kw)
    ca, cb = _coefficients(a), _coefficients(b)
    assert set(ca) == {"u_xx", "u", "u^2"}
    assert ca == pytest.approx({"u_xx": 600.0, "u": 0.055, "u^2": -32.35}, rel=0.05)

    def determined(res):
        return {k for k, v in res.verdicts.items() if v == "determined"}

    # five snapshots: logistic growth at each place from a free initial profile fits them
    # nearly as well as the spreading front does (the data's likelihood ratio for u_xx is
    # about 7, under the 10.83 cutoff, docs/verdicts.md), so u_xx is uncertain; a verdict
    # the data barely decide can flip where rounding takes the rescaled run elsewhere (one
    # build's rescaled run called u_xx determined beside an uncertain d_xx(u²)), but it is
    # never excluded and the growth terms are determined in both
    assert determined(a) == {"u", "u^2"} and {"u", "u^2"} <= determined(b)
    assert a.verdicts["u_xx"] == "uncertain" and b.verdicts["u_xx"] in ("uncertain", "determined")
    assert REFIT_CHI2 / 2 < a.history.fits[0].refits["u_xx"] < REFIT_CHI2
    factor = {"u_xx": 1e-3, "u": 1e3, "u^2": 1e-3}
    assert {k: cb[k] for k in ca} == pytest.approx(
        {k: v * factor[k] for k, v in ca.items()}, rel=0.1
    )
    for res, other in ((a, cb), (b, ca)):
        for term in set(_coefficients(res)) - set(other):
            assert res.verdicts[term] == "uncertain"


def test_mirror_boundary_simulates_a_no_flux_well():
    """Fisher–KPP from the twin's first snapshot on its 38 positions: with the no-flux
    (mirror) boundary the simulation follows the twin's own solver within 2e-3; with free
    one-sided ends it is 9.7e-3 off."""
    from symweak import Discovery
    from symweak.grammar import parse_equation
    from symweak.ir import System

    twin = assay_twin(20_000, noise=0.0, seed=0, replicates=1)
    means = symweak.Observations(twin.coords, twin.fields)  # a complete 5 × 38 lattice
    res = Discovery(
        System([parse_equation("u_t = 600*u_xx + 0.055*u - 32.35294*u^2")]),
        coords=("t", "x"),
        fields=("u",),
    )
    mirrored = res.simulate(means, mirror=["x"])
    assert mirrored.fields["u"].shape == (5, 38)
    assert mirrored.errors["u"] < 2e-3
    assert res.simulate(means).errors["u"] > 5 * mirrored.errors["u"]
    with pytest.raises(DataError, match=r"mirror names 'y'; the data's space axes are \['x'\]"):
        res.simulate(means, mirror=["y"])


def _assay_equation():
    from symweak import Discovery
    from symweak.grammar import parse_equation
    from symweak.ir import System

    return Discovery(
        System([parse_equation("u_t = 0.1638*u - 127.1*u^2 + 1077*u_xx")]),
        coords=("t", "x"),
        fields=("u",),
    )


def test_a_failed_simulation_names_periodic_and_mirror():
    means = scratch_assay(20_000, replicates=False)
    with pytest.raises(symweak.SymweakError) as info:
        _assay_equation().simulate(means)
    assert str(info.value).startswith("The simulation failed: the integrator stopped: ")
    assert str(info.value).endswith(
        "The ends of 'x' are free (one-sided differences, no boundary condition): if the "
        "domain wraps around, pass periodic=['x'] (the data can record it: "
        "obs.meta['periodic'] = ['x']); for walls with no flux, mirror=['x']."
    )


def test_plot_draws_what_it_can_and_says_why_not(tmp_path, capsys):
    from symweak.cli import main

    run, data = tmp_path / "run.json", tmp_path / "means.npz"
    _assay_equation().save(run)
    scratch_assay(20_000, replicates=False).save(data)
    assert main(["plot", str(run), "--data", str(data), "--out", str(tmp_path / "a")]) == 2
    out = capsys.readouterr()
    assert "not drawn: fields — The simulation failed: the integrator stopped" in out.out
    assert "not drawn: residuals — The simulation failed: the integrator stopped" in out.out
    assert "symweak: error: Nothing could be plotted (see above)." in out.err
    assert main(["plot", str(run), "--data", str(data), "--mirror", "x",
                 "--out", str(tmp_path / "b")]) == 0  # fmt: skip
    shown = capsys.readouterr().out
    assert f"wrote {tmp_path / 'b' / 'fields.png'}" in shown
    assert f"wrote {tmp_path / 'b' / 'residuals.png'}" in shown  # data minus the equation


@pytest.mark.parametrize("integrator", ["BDF", "LSODA"])
def test_a_solution_that_blows_up_is_the_integrators_failure_not_a_warning(integrator):
    """u_t = 2u³ from u ≈ 3 blows up at t ≈ 0.03: LSODA overflowed inside the right-hand
    side (a numpy RuntimeWarning, an error under this suite's filters) before giving up."""
    from symweak import Discovery
    from symweak.grammar import parse_equation
    from symweak.ir import System

    t, x = np.linspace(0, 1, 21), np.linspace(0, 2 * np.pi, 32, endpoint=False)
    u = 3 + 0.1 * np.sin(x)[None, :] + 0 * t[:, None]
    obs = symweak.Observations.from_grid(t=t, x=x, fields={"u": u})
    res = Discovery(System([parse_equation("u_t = 2*u^3")]), coords=("t", "x"), fields=("u",))
    stopped = "The simulation failed: the integrator stopped: "
    with pytest.raises(symweak.SymweakError, match=stopped):
        res.simulate(obs, periodic=["x"], integrator=integrator)
