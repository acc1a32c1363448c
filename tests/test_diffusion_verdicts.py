"""A diffusion term left out of an equation that couples no neighbouring points is uncertain
when the data could hold it unseen (regress.judge's ``diffusion``), and which library terms
are diffusion terms and which couple points along their axis."""

import numpy as np
import pytest
import sympy

from symweak import parse_equation
from symweak.discover import Discovery
from symweak.discover._history import FitRecord, History
from symweak.discover._verdicts import diffusion_columns
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


def test_diffusion_columns_name_each_axis_and_the_terms_that_couple_along_it():
    u, v = field("u", "txy"), field("v", "txy")
    t, x, y = coord("t"), coord("x"), coord("y")
    lib = [
        Term(u),  # 0
        Term(u**2, {x: 1}),  # 1 couples along x
        Term(u, {x: 2}),  # 2 u_xx
        Term(u, {y: 2}),  # 3 u_yy
        Term(sympy.Derivative(u, y) ** 2),  # 4 u_y^2 couples along y
        Term(v, {x: 2}),  # 5 v_xx: another field's, couples along x
        Term(u, {x: 1, y: 1}),  # 6 u_xy couples along both
        Term(u * v),  # 7
    ]
    assert diffusion_columns(Term(u, {t: 1}), lib) == {2: [1, 2, 5, 6], 3: [3, 4, 6]}
    assert diffusion_columns(Term(v, {t: 1}), lib) == {5: [1, 2, 5, 6]}
    assert diffusion_columns(Term(u, {t: 2}), [Term(u, {t: 2}), Term(u)]) == {}


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
