"""The selected equation's alternatives with a swap made in them
(discover/network/_substituted.py)."""

from symweak.discover._history import FitRecord
from symweak.discover.network._substituted import SUBSTITUTES, substituted
from symweak.grammar import parse_terms

RETURNED = {"d_x(u^3)": -0.3017, "u_xx": 0.05446}


def _record(*more) -> FitRecord:
    """Cubic flux at σ 0.05 (tuning half, seed 0) with the alternatives ``more``."""
    return FitRecord(
        lhs="u_t", residual=0.0422, method="mstls+tls",
        intervals={"d_x(u^3)": [-0.317, -0.2863], "u_xx": [0.05151, 0.06123]},
        verdicts={"d_x(u^3)": "determined", "u_xx": "determined"},
        alternatives=[
            {"terms": dict(RETURNED), "held_out": 0.0422, "margin": 0.0, "reason": "fit"},
            *more,
        ],
    )  # fmt: skip


def _lib(names) -> dict:
    return {t.short(): t for t in parse_terms(", ".join(names), "t,x", "u")}


def test_substituted_alternatives_hold_the_swap_in_place_of_the_replaced_term():
    """The selected equation's data alternatives holding a replaced term, with the swap
    made in them, none equal to the swap; the weak form's own fit is not one of them."""
    record = _record(
        {"terms": {"d_x(u^3)": -0.3, "u_xx": 0.05, "u_x": 0.01}, "held_out": 0.042,
         "margin": 0.5, "reason": "data"},
        {"terms": {"u_xx": 0.05}, "held_out": 0.3, "margin": 0.1, "reason": "data"},
    )  # fmt: skip
    lib = _lib(["d_x(u^3)", "d_x(u^4)", "u_xx", "u_x"])
    mine = {"d_x(u^4)", "u_xx"}
    assert substituted(record, ("d_x(u^3)",), "d_x(u^4)", mine, lib) == [
        ["d_x(u^4)", "u_xx", "u_x"]
    ]


def test_at_most_three_alternatives_are_substituted():
    more = [
        {"terms": {"d_x(u^3)": -0.3, "u_xx": 0.05, t: 0.01}, "held_out": 0.05, "margin": 0.5,
         "reason": "data"}
        for t in ("u", "u_x", "u_xxx", "u_xxxx")
    ]  # fmt: skip
    lib = _lib(["d_x(u^3)", "d_x(u^4)", "u_xx", "u", "u_x", "u_xxx", "u_xxxx"])
    out = substituted(_record(*more), ("d_x(u^3)",), "d_x(u^4)", {"d_x(u^4)", "u_xx"}, lib)
    assert SUBSTITUTES == 3
    assert out == [["d_x(u^4)", "u_xx", t] for t in ("u", "u_x", "u_xxx")]
