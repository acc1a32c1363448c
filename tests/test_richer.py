"""An equation the Pareto front's richer equations fit markedly better: its terms are
determined only where all of them hold them too, theirs are uncertain, and the result says
so (symweak.discover._verdicts.RICHER)."""

import numpy as np
import pytest

from symweak import parse_equation
from symweak.discover import Discovery
from symweak.discover._history import FitRecord, History
from symweak.discover._verdicts import judge_equation, richer_fronts
from symweak.ir import System
from symweak.regress import loose_columns

TERMS = ("u", "u^2", "u^3", "u_xx")


def _front(returned: float, richer: float) -> list:
    return [
        {"terms": {"u": 1.0}, "complexity": 1.0, "held_out": returned, "chosen": True},
        {"terms": {"u": 0.9, "u^2": 0.2}, "complexity": 2.5, "held_out": returned, "chosen": False},
        {
            "terms": {"u": 0.9, "u^2": 0.2, "u_xx": 0.05},
            "complexity": 3.5,
            "held_out": richer,
            "chosen": False,
        },
    ]


def _judged(returned: float, richer: float) -> FitRecord:
    """b = G_u + noise judged from the support {u}, with a Pareto front as given."""
    rng = np.random.default_rng(0)
    G = rng.normal(size=(300, len(TERMS)))
    b = G[:, 0] + 0.05 * rng.normal(size=300)
    lib = [parse_equation(f"u_t = {t}").terms[0] for t in TERMS]
    record = FitRecord(
        lhs="u_t", residual=returned, method="mstls", pareto=_front(returned, richer)
    )
    coef = np.array([1.0, 0.0, 0.0, 0.0])
    lhs = parse_equation("u_t = u").lhs
    judge_equation(lhs, lib, G, b, coef, record, how="terms", constraints=None, seed=0)
    return record


def test_a_markedly_better_richer_equation_makes_its_terms_uncertain():
    record = _judged(0.05, 0.01)
    assert record.verdicts == {"u": "determined", "u^2": "uncertain", "u_xx": "uncertain"}
    assert set(record.excluded) == {"u^3"}
    assert record.richer == {
        "held_out": 0.01,
        "returned": 0.05,
        "terms": {"u": 0.9, "u^2": 0.2, "u_xx": 0.05},
        "count": 1,
    }


@pytest.mark.parametrize(
    "returned, richer",
    [(0.05, 0.0125 + 1e-9), (0.008, 0.001)],
    ids=["a quarter of the residual or more", "less than 1 % of the left-hand side gained"],
)
def test_a_front_that_fits_only_somewhat_better_changes_nothing(returned, richer):
    record = _judged(returned, richer)
    assert record.verdicts == {"u": "determined"}
    assert record.richer == {}
    assert richer_fronts(record.pareto)[1] == []


def test_a_returned_term_missing_from_a_richer_equation_is_uncertain():
    front = _front(0.05, 0.01)
    front[2]["terms"] = {"u^2": 0.2, "u_xx": 0.05}
    chosen, better = richer_fronts(front)
    assert chosen is front[0] and better == [front[2]]
    rng = np.random.default_rng(0)
    G = rng.normal(size=(300, len(TERMS)))
    lib = [parse_equation(f"u_t = {t}").terms[0] for t in TERMS]
    record = FitRecord(lhs="u_t", residual=0.05, method="mstls", pareto=front)
    lhs = parse_equation("u_t = u").lhs
    b = G[:, 0] + 0.05 * rng.normal(size=300)
    judge_equation(lhs, lib, G, b, np.array([1.0, 0, 0, 0]), record, how="terms",
                   constraints=None, seed=0)  # fmt: skip
    assert record.verdicts == {"u": "uncertain", "u^2": "uncertain", "u_xx": "uncertain"}


def test_the_result_warns_and_keeps_it_through_save_and_load(tmp_path):
    record = _judged(0.05, 0.01)
    res = Discovery(
        System([parse_equation("u_t = 1.0*u")]), history=History(fits=[record]),
        settings={"coords": ["t", "x"]},
    )  # fmt: skip
    expected = (
        "u_t: an equation with more terms leaves 1 % of u_t unexplained on held-out test "
        "functions against 5 % for the one returned (res.pareto): these data hold more than "
        "it says, so they determine only u; 2 terms may belong (u^2, u_xx; res.verdicts)."
    )
    assert res.warnings() == [expected]
    res.save(tmp_path / "run.json")
    back = Discovery.load(tmp_path / "run.json")
    assert back.history.fits[0].richer == record.richer
    assert back.warnings() == [expected]
    assert back.verdicts == {"u": "determined", "u^2": "uncertain", "u_xx": "uncertain"}


def _stand_in_design():
    rng = np.random.default_rng(1)
    u = rng.uniform(0, 1, 100)
    G = np.column_stack([u, u**2, u**3, np.sin(7 * u)])
    return G, u + 0.15 * rng.normal(size=100)


def _stand_in_case(front: list) -> FitRecord:
    """u_t = u on 100 values of u in [0, 1] with noise 0.15, judged from {u}: u³ is nearly u
    and u² combined, so beside a richer equation holding u² it fixes no size."""
    G, b = _stand_in_design()
    lib = [parse_equation(f"u_t = {t}").terms[0] for t in TERMS]
    record = FitRecord(lhs="u_t", residual=0.05, method="mstls", pareto=front)
    lhs = parse_equation("u_t = u").lhs
    judge_equation(lhs, lib, G, b, np.array([1.0, 0, 0, 0]), record, how="terms",
                   constraints=None, seed=0)  # fmt: skip
    return record


def test_loose_columns_are_those_other_terms_stand_in_for():
    G, b = _stand_in_design()
    assert loose_columns(G, b, [[0, 1]], [2, 3]) == [2]  # u³ beside u and u²
    assert loose_columns(G, b, [[0]], [2, 3]) == []  # beside u alone it is detected
    assert loose_columns(G, b, [[0], [0, 1]], [2]) == [2]  # any one support will do


def test_a_term_a_richer_equation_stands_in_for_is_uncertain_not_excluded():
    chosen = {"terms": {"u": 1.0}, "complexity": 1.0, "held_out": 0.05, "chosen": True}
    richer = {"terms": {"u": 0.9, "u^2": 0.2}, "complexity": 2.5, "held_out": 0.01}
    alone = _stand_in_case([chosen])
    assert "u^3" in alone.excluded and "u^3" not in alone.verdicts
    record = _stand_in_case([chosen, {**richer, "chosen": False}])
    assert record.verdicts["u^3"] == "uncertain" and record.verdicts["u"] == "determined"
    assert "u^3" not in record.excluded
    assert record.floors["u^3"] == pytest.approx(alone.excluded["u^3"])  # its floor, kept
