"""A diffusion term left out of an equation that couples no neighbouring points is uncertain
when the data could hold it unseen (regress.judge's ``diffusion``), and which library terms
are diffusion terms and which couple points along their axis."""

import numpy as np
import pytest
import sympy

from symweak import parse_equation
from symweak.discover import Discovery
from symweak.discover._history import FitRecord, History
from symweak.discover._verdicts import diffusion_columns, dispersion_columns
from symweak.ir import System, Term, field
from symweak.ir._symbols import coord
from symweak.regress import judge
from symweak.regress._verdict import UNSEEN

#: column 2 is the diffusion term; columns 2 and 3 couple points along its axis
DIFFUSION = {2: [2, 3]}


def _system(diffusion: float, noise: float, advection: float = 0.0, seed: int = 0):
    """Five independent columns: b = G_0 + diffusion·G_2 + advection·G_3 + noise."""
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(300, 5))
    b = G[:, 0] + diffusion * G[:, 2] + advection * G[:, 3] + noise * rng.normal(size=300)
    return G, b


def _part(G, b, j: int, size: float) -> float:
    return size * np.linalg.norm(G[:, j]) / np.linalg.norm(b)


def test_a_diffusion_left_out_of_a_pointwise_equation_is_uncertain_with_its_floor():
    """0.05 of column 2 under noise 0.5: below what the data detect. Without ``diffusion``
    it is excluded above its floor; with it, uncertain with the same floor, and the best
    plus column 2 is an alternative (reason "floor")."""
    G, b = _system(0.05, 0.5)
    plain = judge(G, b, [0], seed=0)
    assert plain.verdicts == {0: "determined"}
    floor = plain.excluded[2]
    assert 0.05 < floor < 0.3
    assert _part(G, b, 2, floor) >= UNSEEN
    found = judge(G, b, [0], seed=0, diffusion=DIFFUSION)
    assert found.verdicts == {0: "determined", 2: "uncertain"}
    assert found.floors == {2: pytest.approx(floor)}
    assert 2 not in found.excluded and set(found.excluded) == {1, 3, 4}
    assert [(a.support, a.reason) for a in found.alternatives] == [((0,), "fit"), ((0, 2), "floor")]
    assert found.alternatives[1].margin < 0  # it pays the complexity price, explains nothing


def test_diffusion_beside_a_term_that_couples_points_stays_excluded():
    G, b = _system(0.0, 0.5, advection=0.6)
    found = judge(G, b, [0, 3], seed=0, diffusion=DIFFUSION)
    assert found.verdicts == {0: "determined", 3: "determined"}
    assert _part(G, b, 2, found.excluded[2]) >= UNSEEN  # would count, were 3 not there
    assert all(a.reason == "fit" for a in found.alternatives)


def test_diffusion_the_data_would_see_is_excluded_or_determined_as_any_term():
    """Noise 0.01: the data would see column 2 at a tiny size (part below UNSEEN): absent,
    it is excluded; present at 0.05, determined."""
    G, b = _system(0.0, 0.01)
    found = judge(G, b, [0], seed=0, diffusion=DIFFUSION)
    assert found.verdicts == {0: "determined"}
    assert _part(G, b, 2, found.excluded[2]) < UNSEEN
    G, b = _system(0.05, 0.01)
    assert judge(G, b, [0], seed=0, diffusion=DIFFUSION).verdicts == {
        0: "determined",
        2: "determined",
    }


def test_a_diffusion_the_held_out_rows_favour_is_uncertain_below_unseen():
    """Noise 0.03 and column 2 three units of complexity: 0.01 of it lowers the held-out
    misfit clearly (FAVOURED standard deviations) but does not pay its penalty; its floor
    (0.034) holds under UNSEEN of b. Absent (0), it stays excluded, and so does −0.01 of it
    where it is a diffusion (``damping``)."""
    weights = [1, 1, 3, 1, 1]
    G, b = _system(0.01, 0.03)
    plain = judge(G, b, [0], seed=0, complexity=weights)
    assert plain.verdicts == {0: "determined"}
    floor = plain.excluded[2]
    assert floor == pytest.approx(0.0338, abs=5e-4)
    assert _part(G, b, 2, floor) < UNSEEN
    found = judge(G, b, [0], seed=0, complexity=weights, diffusion=DIFFUSION)
    assert found.verdicts == {0: "determined", 2: "uncertain"}
    assert found.floors == {2: pytest.approx(floor)}
    assert [(a.support, a.reason) for a in found.alternatives] == [((0,), "fit"), ((0, 2), "floor")]
    G, b = _system(0.0, 0.03)
    found = judge(G, b, [0], seed=0, complexity=weights, diffusion=DIFFUSION)
    assert found.verdicts == {0: "determined"}
    assert 2 in found.excluded
    # a diffusion (``damping``) is favoured only with the sign that damps
    for size, verdicts in ((0.01, {0: "determined", 2: "uncertain"}), (-0.01, {0: "determined"})):
        G, b = _system(size, 0.03)
        kw = {"complexity": weights, "diffusion": DIFFUSION, "damping": [2]}
        assert judge(G, b, [0], seed=0, **kw).verdicts == verdicts


def test_diffusion_columns_name_each_axis_and_the_terms_that_damp_along_it():
    """Even total orders along the axis damp (u_xx, d_xx(u²), u_xy, u_xxxx, d_xx(u·v)), as
    does a derivative inside F (u_y²); odd orders only carry or disperse (u_x, d_x(u²),
    u_xxx, u_xxy); another field's v_xx damps v, not u."""
    u, v = field("u", "txy"), field("v", "txy")
    t, x, y = coord("t"), coord("x"), coord("y")
    lib = [
        Term(u),  # 0
        Term(u**2, {x: 1}),  # 1 d_x(u^2): a flux, damps nothing
        Term(u, {x: 2}),  # 2 u_xx
        Term(u, {y: 2}),  # 3 u_yy
        Term(sympy.Derivative(u, y) ** 2),  # 4 u_y^2: a derivative along y inside F
        Term(v, {x: 2}),  # 5 v_xx: another field's, damps v along x, not u
        Term(u, {x: 1, y: 1}),  # 6 u_xy: second order along both
        Term(u * v),  # 7
        Term(u, {x: 3}),  # 8 u_xxx: dispersion, damps nothing
        Term(u**2, {x: 2}),  # 9 d_xx(u^2)
        Term(u, {x: 4}),  # 10 u_xxxx
        Term(u, {x: 2, y: 1}),  # 11 u_xxy: third order
        Term(u * v, {x: 2}),  # 12 d_xx(u v): damps both fields along x
    ]
    assert diffusion_columns(Term(u, {t: 1}), lib) == {2: [2, 6, 9, 10, 12], 3: [3, 4, 6]}
    assert diffusion_columns(Term(v, {t: 1}), lib) == {5: [5, 12]}
    assert diffusion_columns(Term(u, {t: 2}), [Term(u, {t: 2}), Term(u)]) == {}


def test_a_diffusion_left_out_beside_a_flux_and_a_dispersion_is_uncertain():
    """A KdV–Burgers-like weak system: b = the columns of −d_x(u²) − 0.4 u_xxx
    + ν u_xx + noise. With ν = 0.02 under the noise, u_xx is uncertain beside the flux and
    the dispersion (they damp nothing); beside a d_xx(u²) the data show (it damps) it is
    judged as any term, never added for its floor."""
    rng = np.random.default_rng(1)
    G = rng.normal(size=(300, 4))  # d_x(u^2), u_xxx, u_xx, d_xx(u^2)
    b = -G[:, 0] - 0.4 * G[:, 1] + 0.02 * G[:, 2] + 0.5 * rng.normal(size=300)
    u, x, t = field("u", "tx"), coord("x"), coord("t")
    lib = [Term(u**2, {x: 1}), Term(u, {x: 3}), Term(u, {x: 2}), Term(u**2, {x: 2})]
    columns = diffusion_columns(Term(u, {t: 1}), lib)
    assert columns == {2: [2, 3]}
    found = judge(G, b, [0, 1], seed=0, diffusion=columns)
    assert found.verdicts == {0: "determined", 1: "determined", 2: "uncertain"}
    assert [a.reason for a in found.alternatives] == ["fit", "floor"]
    assert _part(G, b, 2, found.floors[2]) >= UNSEEN
    damped = b + 0.3 * G[:, 3]  # a porous-medium-like d_xx(u^2) the data do show
    beside = judge(G, damped, [0, 1, 3], seed=0, diffusion=columns)
    assert beside.verdicts[3] == "determined"
    assert all(a.reason != "floor" for a in beside.alternatives)


def test_a_dispersion_left_out_beside_a_flux_alone_is_uncertain_not_beside_a_reaction():
    """u_xxx is settled by terms of order 2 or more along x and counts only beside a term
    that carries along x. Flux alone chosen on b = −d_x(u²) + weak u_xx and u_xxx + noise:
    both regularisations are uncertain; a reaction alone (u_t = u) leaves u_xxx excluded."""
    u, x, t = field("u", "tx"), coord("x"), coord("t")
    lib = [Term(u**2, {x: 1}), Term(u, {x: 3}), Term(u, {x: 2}), Term(u), Term(u**2, {x: 2})]
    lhs = Term(u, {t: 1})
    settle, carry = dispersion_columns(lhs, lib)
    assert (settle, carry) == ({1: [1, 2, 4]}, {1: [0]})
    assert dispersion_columns(Term(u, {t: 2}), lib) == ({}, {})
    unseen = {**diffusion_columns(lhs, lib), **settle}
    rng = np.random.default_rng(2)
    G = rng.normal(size=(300, 5))
    noise = 0.5 * rng.normal(size=300)
    b = -G[:, 0] + 0.03 * G[:, 1] + 0.02 * G[:, 2] + noise
    found = judge(G, b, [0], seed=0, diffusion=unseen, carried=carry)
    assert found.verdicts == {0: "determined", 1: "uncertain", 2: "uncertain"}
    assert [a.reason for a in found.alternatives] == ["fit", "floor", "floor"]
    assert set(found.floors) == {1, 2}
    b = G[:, 3] + 0.03 * G[:, 1] + noise
    found = judge(G, b, [3], seed=0, diffusion=unseen, carried=carry)
    assert found.verdicts == {3: "determined", 2: "uncertain"}
    assert 1 in found.excluded


def test_the_summary_names_an_alternative_below_its_floor():
    record = FitRecord(
        lhs="u_t",
        residual=0.04,
        method="mstls",
        verdicts={"tanh(u)": "determined", "u_xx": "uncertain"},
        alternatives=[
            {"terms": {"tanh(u)": -0.8}, "held_out": 0.039, "margin": 0.0, "reason": "fit"},
            {
                "terms": {"tanh(u)": -0.79, "u_xx": 0.027},
                "held_out": 0.0389,
                "margin": -0.49,
                "reason": "floor",
            },
        ],
        floors={"u_xx": 0.31},
    )
    system = System([parse_equation("u_t = -0.8*tanh(u)")])
    res = Discovery(system, history=History(fits=[record]), settings={"coords": ["t", "x"]})
    assert str(res).splitlines()[1] == (
        "uncertain: u_xx (the data cannot tell; see res.alternatives)"
    )
    assert (
        "  3.89 %  -0.490  u_t = -0.79*tanh(u) + 0.027*u_xx  (below its detection floor)"
        in res.summary()
    )
    assert [a.reason for a in res.alternatives] == ["fit", "floor"]


@pytest.mark.slow
def test_kdv_burgers_from_noisy_points_gets_the_diffusion_the_data_fit_better():
    """u_t = −0.8 d_x(u²) + 0.04 u_xx − 0.15 u_xxx from 10 % of a 101 × 256 grid as point
    columns at σ = 0.2: the weak form selects the flux and the dispersion with the
    diffusion uncertain (not excluded: odd orders do not count as damping), and the data
    fit the equation better with u_xx added (the check on the data), so all three come
    back determined."""
    from symweak import Observations, discover
    from symweak.bench._speed import columns
    from symweak.bench._zoo import _periodic_1d

    def u0(x):
        return 1.2 * np.exp(-((x + 3) ** 2) / 3) + 0.5 * np.exp(-((x - 9) ** 2) / 2)

    d = _periodic_1d(
        -20.0, 20.0, 256, 12.0, 101, {"u": u0},
        {"u": lambda k: -0.04 * k**2 + 1j * 0.15 * k**3},
        lambda f, D: {"u": -0.8 * D(f["u"] ** 2, 1)}, 40,
    )  # fmt: skip
    obs = Observations.from_grid(t=d["t"], x=d["x"], fields=d["fields"])
    obs = columns(obs.sample(0.1, seed=1).add_noise(0.2, seed=1), seed=1)
    res = discover(obs, ops="+,-,*,sin", lhs="u_t", seed=1, progress=False)
    assert res.verdicts == dict.fromkeys(["d_x(u^2)", "u_xx", "u_xxx"], "determined")
    coefs = {t.short(): c for t, c in res.system[0].coefficients.items()}
    assert coefs["d_x(u^2)"] == pytest.approx(-0.8, rel=0.1)
    assert coefs["u_xx"] == pytest.approx(0.04, rel=0.25)
    adopted = res.history.fits[0].adopted
    assert (adopted["by"], adopted["replaced"]) == ("u_xx", [])
    assert adopted["selected"].keys() == {"d_x(u^2)", "u_xxx"}


def test_a_diffusion_another_fields_derivative_stands_in_for_is_uncertain():
    """A FitzHugh–Nagumo-like u_t: b = u − v + 0.25 v_xx + 0.05 u_xx + noise, with v_xx a
    smoothed copy of u_xx (correlation ≈ 0.9) that fits better (as a surrogate that lags
    makes it). v_xx damps v, not u: u_xx is uncertain (reason "floor"), where counting
    v_xx as u's damping excluded it at the same floor."""
    u, v, x, t = field("u", "tx"), field("v", "tx"), coord("x"), coord("t")
    lib = [Term(u), Term(v), Term(v, {x: 2}), Term(u, {x: 2})]
    rng = np.random.default_rng(3)
    G = rng.normal(size=(300, 4))
    G[:, 2] = 0.9 * G[:, 3] + 0.45 * rng.normal(size=300)
    b = G[:, 0] - G[:, 1] + 0.25 * G[:, 2] + 0.05 * G[:, 3] + 0.5 * rng.normal(size=300)
    columns = diffusion_columns(Term(u, {t: 1}), lib)
    assert columns == {3: [3]}
    found = judge(G, b, [0, 1, 2], seed=0, diffusion=columns)
    assert found.verdicts == {0: "determined", 1: "determined", 2: "determined", 3: "uncertain"}
    assert [a.reason for a in found.alternatives] == ["fit", "floor"]
    assert found.floors[3] == pytest.approx(0.1432, rel=0.01)
    assert _part(G, b, 3, found.floors[3]) >= UNSEEN
    settled = judge(G, b, [0, 1, 2], seed=0, diffusion={3: [2, 3]})
    assert 3 not in settled.verdicts
    assert settled.excluded[3] == pytest.approx(found.floors[3])


def test_the_verdicts_judge_a_diffusion_the_network_did_not_offer():
    """Each first-order-in-time left-hand side's own u_xx (and u_yy) joins the verdicts'
    terms when the library lacks it and the multi-indices allow it; forbidden terms, a
    second-order left-hand side and a library that has it add nothing."""
    from types import SimpleNamespace

    from symweak.discover.network._extract import diffusion_terms
    from symweak.grammar import parse_constraints

    u, v = field("u", "txy"), field("v", "txy")
    t, x, y = coord("t"), coord("x"), coord("y")
    alphas = [(0, 0, 0), (0, 1, 0), (0, 2, 0), (0, 0, 2), (0, 1, 1)]
    problem = SimpleNamespace(
        coords=(t, x, y), lhs=[Term(u, {t: 1}), Term(v, {t: 1})], constraints=None
    )
    present = [Term(u), Term(u**2), Term(v, {y: 2})]
    found = diffusion_terms(problem, alphas, present)
    assert [term.short() for term in found] == ["u_xx", "u_yy", "v_xx"]
    # only first order along x allowed: nothing along x
    assert [
        term.short() for term in diffusion_terms(problem, alphas[:2] + alphas[3:], present)
    ] == ["u_yy"]
    forbid = parse_constraints("forbid: u_yy, v_xx", fields=["u", "v"], coords="t,x,y")
    problem.constraints = forbid
    assert [term.short() for term in diffusion_terms(problem, alphas, present)] == ["u_xx"]
    wave = SimpleNamespace(coords=(t, x, y), lhs=[Term(u, {t: 2})], constraints=None)
    assert diffusion_terms(wave, alphas, [Term(u)]) == []


def test_the_term_that_would_damp_an_amplifying_equation_is_uncertain_when_unseen():
    """u_t = −0.8 u − 2 u_xx − u_xxxx (Swift–Hohenberg's linear part): an equation that
    holds −2 u_xx and nothing of order 4 amplifies short waves, so a left-out u_xxxx the
    data do not exclude at every size is uncertain (at any part of u_t: ``needed``); beside a damping +u_xx, or with u_xxxx (or
    d_xxxx(u²)) in the equation, or for u_tt, nothing is added; a positive u_xxxx alone
    asks for order 6."""
    from symweak.discover._settling import regularising_columns

    u, x, t = field("u", "tx"), coord("x"), coord("t")
    lib = [Term(u), Term(u, {x: 2}), Term(u, {x: 4}), Term(u, {x: 3}), Term(u**2, {x: 4}),
           Term(u, {x: 6})]  # fmt: skip
    lhs = Term(u, {t: 1})
    assert regularising_columns(lhs, lib, [-0.8, -2, 0, 0, 0, 0]) == {2: [2, 4, 5]}
    assert regularising_columns(lhs, lib, [-0.8, -2, 0, 0.1, 0, 0]) == {2: [2, 4, 5]}
    assert regularising_columns(lhs, lib, [-0.8, 2, 0, 0, 0, 0]) == {}
    assert regularising_columns(lhs, lib, [-0.8, -2, -1, 0, 0, 0]) == {}
    assert regularising_columns(lhs, lib, [-0.8, -2, 0, 0, 0.3, 0]) == {}
    assert regularising_columns(lhs, lib, [0, 0, 0.5, 0, 0, 0]) == {5: [5]}
    assert regularising_columns(Term(u, {t: 2}), lib, [-0.8, -2, 0, 0, 0, 0]) == {}
    rng = np.random.default_rng(1)
    G = rng.normal(size=(300, 4))  # u, u_xx, u_xxxx, u_xxx
    noise = rng.normal(size=300)
    b = -0.8 * G[:, 0] - 2 * G[:, 1] - 0.02 * G[:, 2] + 0.5 * noise
    columns = regularising_columns(lhs, lib[:4], [-0.8, -2, 0, 0])
    assert columns == {2: [2]}
    found = judge(G, b, [0, 1], seed=0, diffusion=columns)
    assert found.verdicts == {0: "determined", 1: "determined", 2: "uncertain"}
    assert [a.reason for a in found.alternatives] == ["fit", "floor"]
    assert _part(G, b, 2, found.floors[2]) >= UNSEEN
    plain = judge(G, b, [0, 1], seed=0)  # without the rule: excluded
    assert plain.verdicts == {0: "determined", 1: "determined"} and 2 in plain.excluded
    # on data that would see it at 0.6 % of b (noise 0.05, no u_xxxx): excluded as a plain
    # diffusion's would be, uncertain as the damping an amplifying equation needs
    quiet = -0.8 * G[:, 0] - 2 * G[:, 1] + 0.05 * noise
    assert 2 in judge(G, quiet, [0, 1], seed=0, diffusion=columns).excluded
    needed = judge(G, quiet, [0, 1], seed=0, diffusion=columns, needed=[2])
    assert needed.verdicts == {0: "determined", 1: "determined", 2: "uncertain"}
    assert [a.reason for a in needed.alternatives] == ["fit", "floor"]
    assert _part(G, quiet, 2, needed.floors[2]) < UNSEEN
