"""A swap the data fit better returned in place of the selected equation
(:mod:`symweak.discover.network._adopt`)."""

import math

import numpy as np
import pytest
import sympy
import torch

import symweak
from symweak.discover import Discovery
from symweak.discover._history import FitRecord, History
from symweak.discover.network._adopt import adopt
from symweak.grammar import parse_equation, parse_terms
from symweak.ir import System

#: cubic diffusion 0.02 d_xx(u³) selected as a quadratic stand-in (own case, σ 0.1)
SELECTED = {"u": 0.000203, "u_xx": -0.02137, "d_xx(u^2)": 0.03715}


def _record() -> FitRecord:
    return FitRecord(
        lhs="u_t", residual=0.05, method="mstls+tls",
        intervals={t: [c * 0.9, c * 1.1] for t, c in SELECTED.items()},
        without={"u": 0.051, "u_xx": 0.3, "d_xx(u^2)": 0.4},
        probabilities={"u": 0.6, "u_xx": 1.0, "d_xx(u^2)": 1.0},
        verdicts={"u": "uncertain", "u_xx": "uncertain", "d_xx(u^2)": "uncertain",
                  "d_xx(u^3)": "uncertain"},
        floors={"u": 4.3e-5, "u_xx": math.inf, "d_xx(u^2)": math.inf, "d_xx(u^3)": 0.002},
        alternatives=[
            {"terms": dict(SELECTED), "held_out": 0.05, "margin": 0.0, "reason": "fit"},
            {"terms": {"u_xx": -0.02, "d_xx(u^2)": 0.037}, "held_out": 0.051, "margin": 0.7,
             "reason": "data"},
            {"terms": {"u": 0.0002, "d_xx(u^3)": 0.0201}, "held_out": 0.05, "margin": 3.5,
             "reason": "data"},
        ],
        excluded={"d_xx(u^3)": 0.002, "u_x": 0.01},
        pareto=[{"terms": dict(SELECTED), "complexity": 4.0, "held_out": 0.05,
                 "chosen": True}],
    )  # fmt: skip


def test_the_swap_is_returned_with_its_intervals_and_the_selected_equation_kept():
    record = _record()
    support = parse_terms("u, d_xx(u^3)", "t,x", "u")
    lhs = parse_terms("u_t", "t,x", "u")[0]
    rng = np.random.default_rng(1)
    G = rng.normal(size=(60, 2))
    b = G @ np.array([0.0002, 0.0201]) + 1e-4 * rng.normal(size=60)
    found = (-27.4, ("u_xx", "d_xx(u^2)"), "d_xx(u^3)")
    eq = adopt(record, lhs, support, [0.0002, 0.0201], G, b, found, 0, "degree")
    assert eq.short() == "u_t = 0.0002*u + 0.0201*d_xx(u^3)"
    assert record.adopted == {"replaced": ["u_xx", "d_xx(u^2)"], "by": "d_xx(u^3)",
                              "statistic": -27.4, "selected": SELECTED}  # fmt: skip
    # the term brought in is determined; the replaced ones are excluded, gone from the
    # floors, the prices and the alternatives; u keeps its verdict and its floor
    assert record.verdicts == {"u": "uncertain", "d_xx(u^3)": "determined"}
    assert record.floors == {"u": 4.3e-5}
    assert record.without == {"u": 0.051} and record.probabilities == {"u": 0.6}
    assert "d_xx(u^3)" not in record.excluded and record.excluded == {"u_x": 0.01}
    # the returned swap, and the swap without the uncertain u (the selected equation's
    # margin without u)
    assert [a["reason"] for a in record.alternatives] == ["fit", "data"]
    assert record.alternatives[0]["terms"] == {"u": 0.0002, "d_xx(u^3)": 0.0201}
    assert list(record.alternatives[1]["terms"]) == ["d_xx(u^3)"]
    assert record.alternatives[1]["margin"] == 0.7
    lo, hi = record.intervals["d_xx(u^3)"]
    assert lo < 0.0201 < hi and hi - lo < 1e-4
    # u's interval holds its interval in the selected equation too
    lo, hi = record.intervals["u"]
    assert lo <= 0.000203 * 0.9 and hi >= 0.000203 * 1.1
    assert record.residual == pytest.approx(
        np.linalg.norm(G @ [0.0002, 0.0201] - b) / np.linalg.norm(b), rel=1e-9
    )
    # the selected equation stays on the Pareto front, no longer chosen
    assert [(p["complexity"], p["chosen"]) for p in record.pareto] == [(4.0, False), (4.0, True)]


def test_the_warning_says_what_was_returned_and_save_load_keeps_it():
    record = _record()
    support = parse_terms("u, d_xx(u^3)", "t,x", "u")
    lhs = parse_terms("u_t", "t,x", "u")[0]
    G = np.eye(3)[:, :2] + 0.1
    b = G @ [0.0002, 0.0201]
    found = (-27.4, ("u_xx", "d_xx(u^2)"), "d_xx(u^3)")
    eq = adopt(record, lhs, support, [0.0002, 0.0201], G, b, found, 0, "degree")
    history = History.from_dict(History(fits=[record]).to_dict())
    assert history.fits[0].adopted == record.adopted
    warnings = Discovery(System([eq]), history=history).warnings()
    assert (
        "u_t: the data fit d_xx(u^3) in place of u_xx + d_xx(u^2) better (likelihood ratio "
        "27.4), so the equation returned has it; the weak form selected u_t = 0.000203*u - "
        "0.02137*u_xx + 0.03715*d_xx(u^2)."
    ) in warnings


def test_a_function_is_never_added_beside_a_monomial_of_its_own_expansion():
    """Damped heat built for tuning (σ 0.05) had sin u added beside u and u² by a ratio of
    14.1: a function is judged in place of its stand-in, never beside it, either way."""
    from symweak.discover.network._swaps import additions

    names = ["u", "u^2", "sin(u)", "u_xx", "u_xxxx"]
    lib = dict(zip(names, parse_terms(", ".join(names), "t,x", "u")))

    def record(terms, uncertain):
        verdicts = {t: "determined" for t in terms} | {t: "uncertain" for t in uncertain}
        others = [{**terms, t: 0.01} for t in uncertain]
        return FitRecord(
            lhs="u_t", residual=0.05, method="mstls+tls",
            intervals={t: [c * 0.9, c * 1.1] for t, c in terms.items()}, verdicts=verdicts,
            alternatives=[{"terms": dict(t), "held_out": 0.05, "margin": 0.1, "reason": "fit"}
                          for t in [terms, *others]],
        )  # fmt: skip

    assert additions(record({"u": -0.4, "u_xx": 0.1}, ["sin(u)", "u_xxxx"]), lib) == ["u_xxxx"]
    assert additions(record({"sin(u)": -0.4, "u_xx": 0.1}, ["u^2", "u_xxxx"]), lib) == ["u_xxxx"]
    assert additions(record({"u_xx": 0.1}, ["sin(u)", "u^2"]), lib) == ["sin(u)", "u^2"]


def test_an_added_term_leaves_the_alternatives_without_it_and_is_said():
    from symweak.discover.network._adopt import said
    from symweak.discover.network._swaps import additions

    terms = {"u": 0.24, "u^2": -0.23}
    record = FitRecord(
        lhs="u_t", residual=0.05, method="mstls+tls",
        intervals={t: [c * 0.9, c * 1.1] for t, c in terms.items()},
        verdicts={"u": "determined", "u^2": "determined", "u^3": "uncertain",
                  "u_xx": "uncertain", "sin(u)": "uncertain"},
        alternatives=[
            {"terms": dict(terms), "held_out": 0.05, "margin": 0.0, "reason": "fit"},
            {"terms": {**terms, "u^3": -0.1}, "held_out": 0.049, "margin": 0.2,
             "reason": "fit+1"},
            {"terms": {**terms, "u_xx": 0.1, "sin(u)": 0.1}, "held_out": 0.049,
             "margin": 0.3, "reason": "fit+1"},
        ],
    )  # fmt: skip
    lib = dict(zip(["u", "u^2", "u^3", "u_xx"], parse_terms("u, u^2, u^3, u_xx", "t,x", "u")))
    # the closest alternatives' uncertain terms the equation lacks, candidates only, two
    assert additions(record, lib) == ["u^3", "u_xx"]
    support = [lib["u"], lib["u^2"], lib["u^3"]]
    G = np.eye(4)[:, :3] + 0.1
    b = G @ [0.2, -0.3, 0.1]
    lhs = parse_terms("u_t", "t,x", "u")[0]
    eq = adopt(record, lhs, support, [0.2, -0.3, 0.1], G, b, (-15.0, (), "u^3"), 0, "terms")
    assert eq.short() == "u_t = 0.2*u - 0.3*u^2 + 0.1*u^3"
    # the alternative without u^3 is gone; the terms only it held stay uncertain
    assert [set(a["terms"]) for a in record.alternatives] == [{"u", "u^2", "u^3"}]
    assert record.verdicts == {"u": "determined", "u^2": "determined", "u^3": "determined",
                               "u_xx": "uncertain", "sin(u)": "uncertain"}  # fmt: skip
    assert said("u_t", record.adopted) == (
        "u_t: the data fit the equation better with u^3 added (likelihood ratio 15), so the "
        "equation returned has it; the weak form selected u_t = 0.24*u - 0.23*u^2."
    )


@pytest.mark.slow
def test_cubic_diffusion_comes_back_as_the_cube_the_data_fit_better(tmp_path):
    """u_t = 0.02 d_xx(u³), u in [0.3, 1.5], 10 % of the grid as a CSV of point columns
    with 10 % noise: the weak form selects a quadratic stand-in (u_xx and d_xx(u²)), the
    data fit d_xx(u³) alone better, and that is returned, determined."""
    import symweak
    from symweak.bench._zoo import _periodic_1d

    sol = _periodic_1d(
        0.0, 10.0, 256, 40.0, 101,
        {"u": lambda x: 0.3 + 1.2 * np.exp(-((x - 4) ** 2)) + 0.6 * np.exp(-((x - 7.5) ** 2) / 0.5)},
        {"u": lambda k: -0.03 * k**2},
        lambda f, D: {"u": D(0.02 * f["u"] ** 3, 2) - 0.03 * D(f["u"], 2)}, 200,
    )  # fmt: skip
    U, (T, X) = sol["fields"]["u"], np.meshgrid(sol["t"], sol["x"], indexing="ij")
    rng = np.random.default_rng(0)
    idx = rng.choice(U.size, U.size // 10, replace=False)
    u = U.ravel()[idx] + 0.1 * np.std(U.ravel()[idx]) * rng.standard_normal(idx.size)
    path = tmp_path / "cubic.csv"
    np.savetxt(path, np.c_[T.ravel()[idx], X.ravel()[idx], u], delimiter=",", header="t,x,u",
               comments="")  # fmt: skip
    res = symweak.discover(symweak.load(path), ops="+,-,*", seed=0)
    determined = {t for t, v in res.verdicts.items() if v == "determined"}
    assert determined == {"d_xx(u^3)"}
    coef = {t.short(): c for t, c in res.system[0].coefficients.items()}["d_xx(u^3)"]
    assert coef == pytest.approx(0.02, rel=0.05)
    adopted = res.history.fits[0].adopted
    assert (adopted["by"], adopted["replaced"]) == ("d_xx(u^3)", ["u_xx", "d_xx(u^2)"])
    assert any("the data fit d_xx(u^3) in place of u_xx + d_xx(u^2) better" in w
               for w in res.warnings())  # fmt: skip


def _modes(t, x):  # u_t = u_xx
    lib = torch if isinstance(t, torch.Tensor) else np
    return lib.exp(-t) * lib.sin(x) + lib.exp(-9 * t) * lib.sin(3 * x)


def _diffusing():
    """Clean point columns of u_t = u_xx (two decaying modes): no function of u alone
    gives their time derivative at a place."""
    t, x = np.meshgrid(np.linspace(0, 1, 40), np.linspace(0, 2 * np.pi, 30, endpoint=False))
    t, x = t.ravel(), x.ravel()
    return symweak.Observations(coords={"t": t, "x": x}, fields={"u": _modes(t, x)})


class _Exact(torch.nn.Module):
    """A surrogate that is the field itself (its derivatives exact), or ``off`` times it."""

    coord_names, field_names = ("t", "x"), ("u",)
    lo, device = torch.zeros(2, dtype=torch.float64), torch.device("cpu")

    def __init__(self, off: float = 1.0):
        super().__init__()
        self.off = off

    def forward(self, x):
        return self.off * _modes(x[:, 0], x[:, 1])[:, None]


def _fake_refits(monkeypatch, losses: dict, coefs: list, explained: bool = False) -> None:
    """Refits whose data loss is ``losses[support]`` (0.02 otherwise), coefficients
    ``coefs`` and a random weak system (with ``explained``, one they solve exactly)."""
    from symweak.discover.network import _refit

    rng = np.random.default_rng(0)
    G, b = rng.normal(size=(40, len(coefs))), rng.normal(size=40)
    if explained:
        b = G @ np.asarray(coefs)

    def fake(state, cands, e, cols, start, weight=1.0, epochs=50, marks=None):
        loss = losses.get(tuple(t.short() for t in cols), 0.02)
        out = loss, coefs[: len(cols)], (G[:, : len(cols)], b)
        marks and marks.update(dict.fromkeys(marks, out))  # every length alike
        return out

    monkeypatch.setattr(_refit, "_refit", fake)


class _Points:
    """2000 training points (the refits' n) and their batch generator."""

    max_points = None  # every point in every step

    _gen = torch.Generator()

    def __len__(self):
        return 2000


def _checked(
    record, library: str, selected: str, noise: float, lo: float, obs=None, surrogate=None,
    symmetry=None,
):  # fmt: skip
    """``check`` of ``record`` (its ``_refit`` faked by the caller) on candidates
    ``library``, the returned equation ``selected``, the warm-up's noise / std ``noise``,
    the field observed over [``lo``, 1], ``history.symmetry`` ``symmetry``: the equation
    returned."""
    from types import SimpleNamespace

    from symweak.discover.network import _refit

    observed = {"u": {"quantiles": list(np.linspace(lo, 1.0, 101)), "noise": noise / 10}}
    state = SimpleNamespace(
        history=SimpleNamespace(fits=[record], observed=observed, symmetry=symmetry or {},
                                phases={"warmup": SimpleNamespace(noise={"u": noise})}),
        problem=SimpleNamespace(lhs=parse_terms("u_t", "t,x", "u"), seed=0, obs=obs,
                                fields=[sympy.Function("u")(*sympy.symbols("t x"))]),
        surrogate=surrogate if surrogate is not None else torch.nn.Linear(2, 1),
        interrupted=False, data=_Points(),
        config=SimpleNamespace(training=SimpleNamespace(tune_epochs=200),
                               selection=SimpleNamespace(complexity="terms")),
    )  # fmt: skip
    cands = SimpleNamespace(library=parse_terms(library, "t,x", "u"), ties=[])
    return _refit.check(state, cands, [parse_equation(selected, coords="t,x")])[0]


_LOGISTIC = {"u": 0.1, "u^2": -0.1}


def _logistic(*more) -> FitRecord:
    """The record of u_t = 0.1 u − 0.1 u², u_xx uncertain, with alternatives ``more``."""
    return FitRecord(
        lhs="u_t", residual=0.05, method="mstls+tls",
        intervals={t: sorted([c * 0.9, c * 1.1]) for t, c in _LOGISTIC.items()},
        without={"u": 0.4, "u^2": 0.3},
        verdicts={"u": "determined", "u^2": "determined", "u_xx": "uncertain"},
        alternatives=[{"terms": dict(_LOGISTIC), "held_out": 0.05, "margin": 0.0,
                       "reason": "fit"}, *more],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("size", "contradicted", "returned"),
    [(0.05, False, True), (-0.05, False, False), (0.05, True, False), (1.0, True, True),
     (1.0, "off", False)],
)  # fmt: skip
def test_an_uncertain_term_the_data_fit_better_added_unless_ill_posed(
    monkeypatch, size, contradicted, returned
):
    """Noisy data: the equation's uncertain u_xx refitted added; the data fit it better by
    far more than 10.83, and it is returned with it — never as a backward diffusion; and
    where the data's own time series (u_t = u_xx) contradict the pointwise equation
    selected, only if they do not contradict the equation with u_xx too (its u_xx read
    from the surrogate) and the surrogate follows them: 0.05 u_xx explains them no better
    (Swift–Hohenberg on clean points), 1.0 u_xx does — not read from a surrogate 0.8
    times the field."""

    record = _logistic({"terms": {**_LOGISTIC, "u_xx": 0.05}, "held_out": 0.049,
                        "margin": 0.3, "reason": "fit+1"})  # fmt: skip
    losses = {("u", "u^2", "u_xx"): 0.009, ("u", "u^2"): 0.0101}
    _fake_refits(monkeypatch, losses, [0.1, -0.1, size])
    obs = _diffusing() if contradicted else None
    surrogate = _Exact(0.8 if contradicted == "off" else 1.0)
    selected = "u_t = 0.1*u - 0.1*u^2"
    eq = _checked(record, "u, u^2, u_xx", selected, 0.1, 0.0, obs, surrogate)
    assert record.refits["+ u_xx"] == pytest.approx(2000 * (0.009 - 0.0101) / 0.0101)
    if returned:
        assert eq.short() == "u_t = 0.1*u - 0.1*u^2 + " + ("u_xx" if size == 1 else "0.05*u_xx")
        assert record.verdicts["u_xx"] == "determined"
    else:  # u_t = ... − 0.05 u_xx is a backward diffusion: the selected equation stays
        assert eq.short() == selected and record.adopted == {}
        assert record.verdicts["u_xx"] == "uncertain"


@pytest.mark.parametrize("noise", [0.1, 0.001])
@pytest.mark.parametrize("ratio", [13.0, 30.0])
def test_an_added_term_is_returned_only_beyond_the_added_cutoff(monkeypatch, caplog, ratio, noise):
    """A ratio of 13 passes REFIT_CHI2 (10.83) but not ADDED_CHI2 (15.14): the selected
    equation stays, u_xx stays uncertain and the log says why; at 30, u_xx is returned —
    on clean data too (noise / std 0.001: clean KdV–Burgers lost its weak u_xx, which the
    data fit better added by 687), where its refit's weak form leaves less unexplained."""
    from symweak.discover._settings import ADDED_CHI2, REFIT_CHI2

    assert REFIT_CHI2 < 13.0 < ADDED_CHI2 < 30.0
    record = _logistic({"terms": {**_LOGISTIC, "u_xx": 0.05}, "held_out": 0.049,
                        "margin": 0.3, "reason": "fit+1"})  # fmt: skip
    losses = {("u", "u^2", "u_xx"): 0.0101 * (1 - ratio / 2000), ("u", "u^2"): 0.0101}
    _fake_refits(monkeypatch, losses, [0.1, -0.1, 0.05], explained=True)
    selected = "u_t = 0.1*u - 0.1*u^2"
    with caplog.at_level("INFO", logger="symweak"):
        eq = _checked(record, "u, u^2, u_xx", selected, noise, 0.0)
    assert record.refits["+ u_xx"] == pytest.approx(-ratio)
    if ratio < ADDED_CHI2:
        assert eq.short() == selected and record.adopted == {}
        assert record.verdicts["u_xx"] == "uncertain"
        assert (
            "u_t: the data fit u_xx added better by a likelihood ratio of 13, under the 15.1 "
            "an added term needs: it stays uncertain" in caplog.text
        )
    else:
        assert eq.short() == "u_t = 0.1*u - 0.1*u^2 + 0.05*u_xx"
        assert record.verdicts["u_xx"] == "determined"


@pytest.mark.parametrize(("at_one", "at_ten"), [(8.0, 24.0), (24.0, -83.0)])
def test_an_addition_is_refitted_with_the_weak_form_weighed_more(
    monkeypatch, marked, at_one, at_ten
):
    """At weight 1 a surrogate refitted without a term the data hold leaves the term's part
    in the weak form (the damped heat built for tuning, σ 0.2, seed 0: 0.1 u_xx added at
    8.4); an addition is also refitted, beside the equation's own refit, at ADDED_LAMBDA
    (23.9 there), and the better ratio counts: at 10 a refit may not settle (the
    Swift–Hohenberg variant's u³ added: −83 at 10, 147 at 1). Either way it is returned;
    the drops of the equation's terms stay at REFIT_LAMBDA."""
    from symweak.discover._settings import ADDED_LAMBDA, REFIT_LAMBDA
    from symweak.discover.network import _refit

    assert ADDED_LAMBDA > REFIT_LAMBDA == 1.0
    calls = []
    rng = np.random.default_rng(0)
    G = rng.normal(size=(40, 3))
    b = G @ np.array([0.1, -0.1, 0.05])

    def fake(state, cands, e, cols, start, weight=1.0, epochs=50):
        key = tuple(t.short() for t in cols)
        calls.append((key, weight))
        # the equation's own refit against the one with u_xx added (loss 0.0101)
        ratio = {("u", "u^2"): at_one if weight == REFIT_LAMBDA else at_ten}.get(key, at_one + 1)
        if len(key) == 1 or ("u_xx" in key and len(key) == 2):
            ratio = 500.0  # a drop of u or u^2
        loss = 0.0101 * (1 + ratio / 2000) if len(key) < 3 else 0.0101
        return loss, [0.1, -0.1, 0.05][: len(cols)], (G[:, : len(cols)], b)

    monkeypatch.setattr(_refit, "_refit", marked(fake))
    record = _logistic({"terms": {**_LOGISTIC, "u_xx": 0.05}, "held_out": 0.049,
                        "margin": 0.3, "reason": "fit+1"})  # fmt: skip
    eq = _checked(record, "u, u^2, u_xx", "u_t = 0.1*u - 0.1*u^2", 0.1, 0.0)
    assert eq.short() == "u_t = 0.1*u - 0.1*u^2 + 0.05*u_xx"
    assert record.verdicts["u_xx"] == "determined"
    assert record.refits["+ u_xx"] == pytest.approx(-24.0 / (1 + 24.0 / 2000))
    # the equation's own refit and its drops at 1, u^2 -> u^3 at 1, the addition at 1,
    # then the equation's own refit and the addition at 10; the returned one judged at 1
    assert calls == [(("u", "u^2"), 1.0), (("u",), 1.0), (("u^2",), 1.0),
                     (("u", "u^3"), 1.0), (("u", "u^2", "u_xx"), 1.0),
                     (("u", "u^2"), ADDED_LAMBDA), (("u", "u^2", "u_xx"), ADDED_LAMBDA),
                     (("u", "u^2", "u_xx"), 1.0), (("u", "u_xx"), 1.0), (("u^2", "u_xx"), 1.0),
                     (("u", "u^3", "u_xx"), 1.0)]  # fmt: skip
    assert record.refits["u"] == pytest.approx(500.0)  # the drop from the returned one


@pytest.mark.parametrize(
    ("u3_ratio", "returned"), [(29.0, None), (20.0, None), (16.0, "u_xx"), (12.0, "u_xx")]
)
def test_an_addition_another_added_term_fits_as_well_is_not_returned(
    monkeypatch, caplog, u3_ratio, returned
):
    """u_xx added fits better by 30 (beyond ADDED_CHI2), u^3 added by 29 or 20 (beyond it
    too, and within 10.83 of u_xx): the data gain from a term, not from u_xx, so neither
    is returned (both stay uncertain) and the log says so. u^3 at 16 is beaten by 14: u_xx
    is returned; u^3 at 12 is no addition of its own (under 15.14): u_xx is returned."""
    record = _logistic(
        {"terms": {**_LOGISTIC, "u_xx": 0.05}, "held_out": 0.049, "margin": 0.3,
         "reason": "fit+1"},
        {"terms": {**_LOGISTIC, "u^3": 0.01}, "held_out": 0.049, "margin": 0.4,
         "reason": "fit+1"},
    )  # fmt: skip
    record.verdicts["u^3"] = "uncertain"
    losses = {
        ("u", "u^2", "u_xx"): 0.0101 * (1 - 30.0 / 2000),
        ("u", "u^2", "u^3"): 0.0101 * (1 - u3_ratio / 2000),
        ("u", "u^2"): 0.0101,
    }
    _fake_refits(monkeypatch, losses, [0.1, -0.1, 0.05])
    selected = "u_t = 0.1*u - 0.1*u^2"
    with caplog.at_level("INFO", logger="symweak"):
        eq = _checked(record, "u, u^2, u^3, u_xx", selected, 0.1, 0.0)
    assert record.refits["+ u_xx"] == pytest.approx(-30.0)
    assert record.refits["+ u^3"] == pytest.approx(-u3_ratio)
    if returned is None:
        assert eq.short() == selected and record.adopted == {}
        assert record.verdicts["u_xx"] == record.verdicts["u^3"] == "uncertain"
        assert (
            "u_t: the data fit u_xx added better (likelihood ratio 30) and u^3 about as well "
            f"({u3_ratio:.0f}): they do not tell which term the equation lacks, so neither is "
            "returned" in caplog.text
        )
    else:
        assert eq.short() == "u_t = 0.1*u - 0.1*u^2 + 0.05*u_xx"
        assert record.verdicts["u_xx"] == "determined"


@pytest.mark.parametrize("drop_ratio", [-20.0, -5.0])
def test_no_addition_is_returned_where_a_drop_fits_the_data_better(monkeypatch, caplog, drop_ratio):
    """The refit without u fitting the data better than the equation's own (by 20 > 10.83)
    says the refits did not settle (a nested model cannot fit better at its optimum): u_xx,
    added better by 30, is not returned and the log says why; by 5 (the refits' noise) it
    is returned as before."""
    record = _logistic({"terms": {**_LOGISTIC, "u_xx": 0.05}, "held_out": 0.049,
                        "margin": 0.3, "reason": "fit+1"})  # fmt: skip
    losses = {
        ("u", "u^2", "u_xx"): 0.0101 * (1 - 30.0 / 2000),
        ("u", "u^2"): 0.0101,
        ("u^2",): 0.0101 * (1 - (-drop_ratio) / 2000),
    }
    _fake_refits(monkeypatch, losses, [0.1, -0.1, 0.05])
    selected = "u_t = 0.1*u - 0.1*u^2"
    with caplog.at_level("INFO", logger="symweak"):
        eq = _checked(record, "u, u^2, u_xx", selected, 0.1, 0.0)
    assert record.refits["u"] == pytest.approx(drop_ratio)
    assert record.refits["+ u_xx"] == pytest.approx(-30.0)
    if drop_ratio < -10.83:
        assert eq.short() == selected and record.adopted == {}
        assert record.verdicts["u_xx"] == "uncertain"
        assert (
            "u_t: the data fit the equation better without u (likelihood ratio -20) than with "
            "it: the refits are not settled here, so no swap or addition is returned" in caplog.text
        )
    else:
        assert eq.short() == "u_t = 0.1*u - 0.1*u^2 + 0.05*u_xx"


def test_no_term_is_added_to_an_equation_the_data_determine_nothing_of(monkeypatch):
    """Every term uncertain (the weak form's best leaves most of u_t unexplained): u_xx,
    which the data would fit added better by 30, is not even refitted: an addition to an
    equation the data do not determine would come back determined."""
    record = _logistic({"terms": {**_LOGISTIC, "u_xx": 0.05}, "held_out": 0.049,
                        "margin": 0.3, "reason": "fit+1"})  # fmt: skip
    record.verdicts = dict.fromkeys(record.verdicts, "uncertain")
    losses = {("u", "u^2", "u_xx"): 0.0101 * (1 - 30.0 / 2000), ("u", "u^2"): 0.0101}
    _fake_refits(monkeypatch, losses, [0.1, -0.1, 0.05])
    selected = "u_t = 0.1*u - 0.1*u^2"
    eq = _checked(record, "u, u^2, u_xx", selected, 0.1, 0.0)
    assert eq.short() == selected and record.adopted == {}
    assert "+ u_xx" not in record.refits
    assert set(record.verdicts.values()) == {"uncertain"}


def test_equations_fitted_under_the_kept_symmetry_are_not_refitted_one_by_one(monkeypatch):
    """The U(1) hypothesis the data kept fits the two equations as one complex equation:
    the refit that would add u_xx to this one alone (as above, by far more than 10.83) is
    not made, so no term is added, swapped or judged on it."""
    record = _logistic()
    _fake_refits(monkeypatch, {("u", "u^2", "u_xx"): 0.009, ("u", "u^2"): 0.0101}, [0.1, -0.1, 1])
    selected = "u_t = 0.1*u - 0.1*u^2"
    kept = {"kept": "symmetric"}
    eq = _checked(record, "u, u^2, u_xx", selected, 0.1, 0.0, symmetry=kept)
    assert eq.short() == selected and record.adopted == {} and record.refits == {}
    assert record.verdicts == {"u": "determined", "u^2": "determined", "u_xx": "uncertain"}


@pytest.mark.parametrize(
    ("function_loss", "returned"), [(0.01005, True), (0.0100, False), (0.0103, "better")]
)
def test_an_uncertain_function_the_data_fit_no_better_than_its_field_gives_way(
    monkeypatch, function_loss, returned
):
    """An uncertain sin(u) (the weak form cannot tell it from u) is refitted with u in its
    place, on clean data too: where the data fit sin(u) better by 2000·(0.0101 −
    0.01005)/0.01005 = 9.95 < 10.83, the field is returned, both uncertain; by
    2000·(0.0101 − 0.0100)/0.0100 = 20, sin(u) stays; where the field fits better by
    more than 10.83 it is returned determined, sin(u) excluded."""

    terms = {"sin(u)": -0.3, "u_xx": 0.15}
    record = FitRecord(
        lhs="u_t", residual=0.05, method="mstls+tls",
        intervals={t: sorted([c * 0.9, c * 1.1]) for t, c in terms.items()},
        without={"sin(u)": 0.4, "u_xx": 0.3},
        verdicts={"sin(u)": "uncertain", "u_xx": "determined", "u": "uncertain"},
        alternatives=[
            {"terms": dict(terms), "held_out": 0.05, "margin": 0.0, "reason": "fit"},
            {"terms": {"u": -0.29, "u_xx": 0.15}, "held_out": 0.0502, "margin": 0.4,
             "reason": "fit+1"},
        ],
    )  # fmt: skip
    losses = {("sin(u)", "u_xx"): function_loss, ("u", "u_xx"): 0.0101}
    _fake_refits(monkeypatch, losses, [-0.3, 0.15])
    selected = "u_t = -0.3*sin(u) + 0.15*u_xx"
    eq = _checked(record, "u, sin(u), u_xx", selected, 0.0, -1.0)
    statistic = 2000 * (0.0101 - function_loss) / function_loss
    assert record.refits["sin(u) -> u"] == pytest.approx(statistic)
    if not returned:
        assert eq.short() == selected and record.adopted == {}
        assert record.verdicts["sin(u)"] == "uncertain"
        return
    assert eq.short() == "u_t = -0.3*u + 0.15*u_xx"
    if returned == "better":  # by 2000·0.0002/0.0103 = 38.8: returned as any swap
        assert "tie" not in record.adopted and record.verdicts["u"] == "determined"
        assert "sin(u)" not in record.verdicts
        return
    assert record.adopted["tie"] is True and record.adopted["by"] == "u"
    assert record.verdicts["u"] == "uncertain" and record.verdicts["sin(u)"] == "uncertain"
    assert {"sin(u)", "u_xx"} in [set(a["terms"]) for a in record.alternatives[1:]]
    res = Discovery(System([eq]), history=History(fits=[record]), settings={"coords": ["t", "x"]})
    assert any(
        "the data fit u in place of sin(u) as well (the selected one fits better by a "
        "likelihood ratio of 9.95, below 10.83), so the equation returned has the simpler u; "
        "both stay uncertain." in w
        for w in res.warnings()
    ), res.warnings()


@pytest.mark.parametrize("noise", [0.1, 0.001])
def test_on_clean_data_an_addition_must_explain_more_of_the_weak_form(monkeypatch, caplog, noise):
    """Clean Zeldovich: u⁴ added fit the data better by 135, yet its refit's weak form left
    17.9 % unexplained against the selected fit's 0.18 %: on clean data (noise / std
    0.001) the ratio measures the surrogate's own misfit, so it is not returned and the log
    says why; on noisy data the ratio alone decides (a random weak system here)."""
    record = _logistic({"terms": {**_LOGISTIC, "u_xx": 0.05}, "held_out": 0.049,
                        "margin": 0.3, "reason": "fit+1"})  # fmt: skip
    losses = {("u", "u^2", "u_xx"): 0.0101 * (1 - 135.0 / 2000), ("u", "u^2"): 0.0101}
    _fake_refits(monkeypatch, losses, [0.1, -0.1, 0.05])
    selected = "u_t = 0.1*u - 0.1*u^2"
    with caplog.at_level("INFO", logger="symweak"):
        eq = _checked(record, "u, u^2, u_xx", selected, noise, 0.0)
    assert record.refits["+ u_xx"] == pytest.approx(-135.0)
    if noise < 0.01:
        assert eq.short() == selected and record.adopted == {}
        assert record.verdicts["u_xx"] == "uncertain"
        assert "u_t: the data fit u_xx added better, but its weak form leaves" in caplog.text
        assert "unexplained against 5 %: not returned on clean data" in caplog.text
    else:
        assert eq.short() == "u_t = 0.1*u - 0.1*u^2 + 0.05*u_xx"


@pytest.mark.parametrize(("ratio", "returned"), [(343.0, True), (-4.0, True), (-30.0, False)])
def test_an_ill_posed_square_gives_way_to_the_field_the_data_fit_as_well(
    monkeypatch, ratio, returned
):
    """Advection–diffusion–dispersion at σ 0.05 came back as −0.29 u_x + 0.022 d_xx(u²) −
    0.046 u_xxx with u down to −0.2: ill-posed (D(u) = 0.044 u). The data fit u_xx in
    place of the square better by 343: u_xx is returned; as well (the square better by 4):
    u_xx is returned and both are uncertain; where the square fits better by 30 it stays."""
    terms = {"u_x": -0.29, "d_xx(u^2)": 0.022, "u_xxx": -0.046}
    record = FitRecord(
        lhs="u_t", residual=0.009, method="mstls+tls",
        intervals={t: sorted([c * 0.95, c * 1.05]) for t, c in terms.items()},
        without={"u_x": 0.68, "d_xx(u^2)": 0.035, "u_xxx": 0.075},
        verdicts=dict.fromkeys(terms, "determined"),
        alternatives=[{"terms": dict(terms), "held_out": 0.009, "margin": 0.0, "reason": "fit"}],
    )  # fmt: skip
    with_loss = 0.0101
    swap = with_loss * (1 - ratio / 2000)
    losses = {("u_x", "d_xx(u^2)", "u_xxx"): with_loss, ("u_x", "u_xx", "u_xxx"): swap,
              ("u_x", "d_xx(u^3)", "u_xxx"): 0.0102}  # fmt: skip
    _fake_refits(monkeypatch, losses, [-0.29, 0.022, -0.046], explained=True)
    selected = "u_t = -0.29*u_x + 0.022*d_xx(u^2) - 0.046*u_xxx"
    eq = _checked(record, "u_x, u_xx, u_xxx, d_xx(u^2), d_xx(u^3)", selected, 0.05, -0.2)
    assert record.refits["d_xx(u^2) -> u_xx"] == pytest.approx(-ratio)
    if not returned:
        assert eq.short() == selected and record.verdicts["d_xx(u^2)"] == "determined"
        return
    assert eq.short() == "u_t = -0.29*u_x + 0.022*u_xx - 0.046*u_xxx"
    if ratio > 0:  # better: the square is gone, u_xx determined
        assert record.verdicts == dict.fromkeys(["u_x", "u_xxx", "u_xx"], "determined")
    else:  # as well: both uncertain, the square an alternative
        assert record.verdicts == {"u_x": "determined", "d_xx(u^2)": "uncertain",
                                   "u_xxx": "determined", "u_xx": "uncertain"}  # fmt: skip


def test_an_uncertain_function_gives_way_to_its_field_where_the_weak_form_explains_more():
    """The Swift–Hohenberg variant from clean point columns: the data fit d_xx(sin u) better
    than the true u_xx (291), while u_xx's refit left less of its weak form unexplained."""
    from symweak.discover.network._adopt import said, weak_form_prefers

    selected = {"u": -0.5449, "d_xx(sin(u))": -1.496}
    record = FitRecord(lhs="u_t", residual=0.056, method="mstls+tls",
                       intervals={t: [c * 1.1, c * 0.9] for t, c in selected.items()},
                       verdicts={"u": "determined", "d_xx(sin(u))": "uncertain",
                                 "u_xx": "uncertain"})  # fmt: skip
    field = parse_terms("u_xx", "t,x", "u")[0]
    G, b = np.eye(3)[:, :2], np.array([1.0, 1.0, 0.1])
    better, worse = ([1.0, 1.0], (G, b)), ([1.0, 0.8], (G, b))  # 7.05 % and 15.8 % left
    assert weak_form_prefers(record, ("d_xx(sin(u))",), field, better, worse) is True
    assert weak_form_prefers(record, ("d_xx(sin(u))",), field, worse, better) is False
    assert weak_form_prefers(record, ("u", "d_xx(sin(u))"), field, better, worse) is False
    record.verdicts["d_xx(sin(u))"] = "determined"  # a function the weak form determines
    assert weak_form_prefers(record, ("d_xx(sin(u))",), field, better, worse) is False
    adopted = {"replaced": ["d_xx(sin(u))"], "by": "u_xx", "statistic": 291.66,
               "selected": selected, "tie": True}  # fmt: skip
    assert said("u_t", adopted) == (
        "u_t: the data fit d_xx(sin(u)) better than u_xx in its place (likelihood ratio 292), "
        "but the weak form leaves less unexplained with u_xx, so the equation returned has "
        "the simpler u_xx; both stay uncertain. The weak form selected "
        "u_t = -0.5449*u - 1.496*d_xx(sin(u))."
    )
