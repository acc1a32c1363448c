"""What the data determine: verdicts, alternatives and detection floors (regress.judge) and
how a Discovery reports and keeps them."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symweak import parse_equation
from symweak.bench.metrics import verdict_scores
from symweak.discover import Discovery
from symweak.discover._history import FitRecord, History
from symweak.ir import System
from symweak.regress import judge


def _system(c: float, noise: float = 0.5, seed: int = 0):
    """Six independent columns; b = G_0 + c·G_1 + noise."""
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(300, 6))
    return G, G[:, 0] + c * G[:, 1] + noise * rng.normal(size=300)


def test_a_term_far_above_its_floor_is_determined_and_an_absent_one_excluded():
    G, b = _system(0.4)
    found = judge(G, b, [0], seed=0)  # the selection missed column 1: the judge finds it
    assert found.verdicts == {0: "determined", 1: "determined"}
    assert found.floors == {}
    assert [a.support for a in found.alternatives] == [(0, 1)]
    assert found.alternatives[0].coef[1] == pytest.approx(0.4, abs=0.05)
    G, b = _system(0.0)
    assert judge(G, b, [0, 1], seed=0).verdicts == {0: "determined"}


def test_a_term_below_its_floor_comes_back_uncertain_with_the_floor():
    G, b = _system(0.12)
    found = judge(G, b, [0], seed=0)
    assert found.verdicts == {0: "determined", 1: "uncertain"}
    assert {a.support for a in found.alternatives} == {(0,), (0, 1)}
    assert all(a.margin >= 0 and a.reason == "fit" for a in found.alternatives)
    # the floor is where the term would be detected: above the true 0.12, and a term of
    # twice the floor's size is determined in the same noise
    assert set(found.floors) == {1}
    floor = found.floors[1]
    assert 0.12 < floor < 0.3
    rng = np.random.default_rng(0)
    G2 = rng.normal(size=(300, 6))
    b2 = G2[:, 0] + 2 * floor * G2[:, 1] + 0.5 * rng.normal(size=300)
    assert judge(G2, b2, [0], seed=0).verdicts[1] == "determined"


def test_an_excluded_term_is_excluded_above_its_floor_only():
    """Column 1 absent from b: excluded, with the size below which the data would not see it;
    injected into the same data at half that size it stays excluded, at twice it is
    determined. The excluded columns come most-hidden first (part of b they could hold)."""
    G, b = _system(0.0)
    found = judge(G, b, [0], seed=0)
    assert found.verdicts == {0: "determined"}
    assert set(found.excluded) == {1, 2, 3, 4, 5}
    floor = found.excluded[1]
    assert 0.1 < floor < 0.25  # noise 0.5 on 300 rows, half of them per resample
    nb = np.linalg.norm(b)
    part = [found.excluded[j] * np.linalg.norm(G[:, j]) / nb for j in found.excluded]
    assert part == sorted(part, reverse=True)
    assert judge(G, b + 0.5 * floor * G[:, 1], [0], seed=0).verdicts == {0: "determined"}
    assert judge(G, b + 2 * floor * G[:, 1], [0], seed=0).verdicts == {
        0: "determined",
        1: "determined",
    }
    G[:, 5] = 0.0  # a column that is zero on the data says nothing: no floor
    assert 5 not in judge(G, b, [0], seed=0).excluded


def test_a_term_that_others_stand_in_for_is_uncertain_not_excluded():
    """u − u² on u in [0, 1], noisy: u³ is nearly u and u² combined, so the data explain as
    much without it and fix no size for it: uncertain (a stand-in), with a large floor."""
    rng = np.random.default_rng(1)
    u = rng.uniform(0, 1, 400)
    G = np.column_stack([u, u**2, u**3, np.sin(7 * u)])
    b = u - u**2 + 0.1 * rng.normal(size=400)
    found = judge(G, b, [0, 1], seed=0)
    assert found.verdicts[2] == "uncertain"
    assert 3 not in found.verdicts
    assert any(a.reason == "stand-in" and 2 in a.support for a in found.alternatives)
    assert found.floors == {2: pytest.approx(0.74, abs=0.05)}


def test_judging_is_seeded():
    G, b = _system(0.1)
    a, b_ = judge(G, b, [0], seed=3), judge(G, b, [0], seed=3)
    assert a.verdicts == b_.verdicts and a.floors == b_.floors


def _result(tmp_path=None):
    system = System([parse_equation("u_t = 0.8*u - 0.8*u^2")])
    record = FitRecord(
        lhs="u_t",
        residual=0.05,
        method="mstls",
        verdicts={"u": "determined", "u^2": "determined", "u_xx": "uncertain"},
        alternatives=[
            {"terms": {"u": 0.8, "u^2": -0.8}, "held_out": 0.06, "margin": 0.2, "reason": "fit"},
            {
                "terms": {"u": 0.79, "u^2": -0.81, "u_xx": 0.04},
                "held_out": 0.058,
                "margin": 0.05,
                "reason": "fit",
            },
        ],
        floors={"u_xx": 0.11},
        excluded={"u^3": 0.5, "u_x": 0.02},
    )
    return Discovery(system, history=History(fits=[record]), settings={"coords": ["t", "x"]})


def test_a_discovery_reports_verdicts_alternatives_and_floors():
    res = _result()
    assert res.verdicts == {"u": "determined", "u^2": "determined", "u_xx": "uncertain"}
    assert res.detection_floor == {"u_xx": 0.11}
    alts = res.alternatives
    assert [a.equation.short() for a in alts] == [
        "u_t = 0.8*u - 0.8*u^2",
        "u_t = 0.79*u - 0.81*u^2 + 0.04*u_xx",
    ]
    assert [a.held_out for a in alts] == [0.06, 0.058]
    assert str(res) == (
        "u_t = 0.8*u - 0.8*u^2\nuncertain: u_xx (the data cannot tell; see res.alternatives)"
    )
    assert res.warnings() == [
        "u_t: these data cannot tell whether u_xx belongs in the equation (2 equations fit "
        "about as well, see res.alternatives); they would not detect u_xx with |coefficient| "
        "below 0.11."
    ]
    text = res.summary()
    assert "u_t: determined u, u^2; uncertain u_xx (the data cannot tell)" in text
    assert "  5.8 %  +0.050  u_t = 0.79*u - 0.81*u^2 + 0.04*u_xx" in text
    assert "u_t: detection floor (smaller |coefficient| would not be detected): u_xx 0.11" in text
    assert res.excluded == {"u^3": 0.5, "u_x": 0.02}
    assert text.splitlines()[text.splitlines().index(
        "u_t: detection floor (smaller |coefficient| would not be detected): u_xx 0.11"
    ) + 1] == "u_t: excluded above (smaller |coefficient| would not be detected): u^3 0.5, u_x 0.02"  # fmt: skip


def test_an_equation_the_verdicts_contradict_says_so():
    """The selection kept d_xx(u^2) of two diffusion terms that stand in for each other,
    and the data determine u_xx (the assay twin, clean, with order: x <= 2)."""
    res = _result()
    res.system = System([parse_equation("u_t = 0.05*u - 28*u^2 + 4.6e5*d_xx(u^2)")])
    res.history.fits[0].verdicts = {
        "u": "determined", "u^2": "determined", "u_xx": "determined", "d_xx(u^2)": "uncertain",
    }  # fmt: skip
    assert res.disagreements() == {"u_t": (["u_xx"], [])}
    assert str(res).splitlines()[1:] == [
        "uncertain: d_xx(u^2) (the data cannot tell; see res.alternatives)",
        "the data determine u_xx, which this equation lacks (the first of res.alternatives is "
        "the equation they prefer)",
    ]
    assert res.warnings()[-1] == (
        "u_t: the data determine u_xx, which the equation lacks: the selection kept the weaker "
        "of terms that stand in for each other; the first of res.alternatives is the equation "
        "the data prefer."
    )
    res.history.fits[0].verdicts = {"u": "determined", "u^2": "determined"}
    assert res.disagreements() == {"u_t": ([], ["d_xx(u^2)"])}
    assert _result().disagreements() == {}


def test_one_alternative_is_counted_in_the_singular():
    res = _result()
    res.history.fits[0].alternatives = res.history.fits[0].alternatives[1:]
    assert res.warnings()[0].startswith(
        "u_t: these data cannot tell whether u_xx belongs in the equation (1 equation fits "
        "about as well, see res.alternatives)"
    )


def test_the_returned_equation_alone_is_not_counted_as_fitting_as_well():
    # a term made uncertain by its tied partner (agree_ties) has no alternative of its own
    res = _result()
    res.history.fits[0].alternatives = res.history.fits[0].alternatives[:1]
    assert res.warnings()[0] == (
        "u_t: these data cannot tell whether u_xx belongs in the equation; they would not "
        "detect u_xx with |coefficient| below 0.11."
    )


def test_save_and_load_keep_what_the_data_determine(tmp_path):
    res = _result()
    res.save(tmp_path / "run.json")
    back = Discovery.load(tmp_path / "run.json")
    assert back.verdicts == res.verdicts
    assert back.detection_floor == res.detection_floor
    assert [a.equation for a in back.alternatives] == [a.equation for a in res.alternatives]
    data = json.loads((tmp_path / "run.json").read_text())
    assert data["history"]["fits"][0]["floors"] == {"u_xx": 0.11}
    assert list(back.excluded.items()) == [("u^3", 0.5), ("u_x", 0.02)]  # order kept


def test_an_infinite_floor_survives_json(tmp_path):
    res = _result()
    res.history.fits[0].floors = {"u_xx": float("inf")}
    res.save(tmp_path / "run.json")
    back = Discovery.load(tmp_path / "run.json")
    assert back.detection_floor == {"u_xx": float("inf")}
    assert "u_xx none at any size" in back.summary()


def test_verdict_scores_read_honest_and_exact_against_the_truth():
    res = _result()
    truth = parse_equation("u_t = 0.05*u_xx + 0.8*u - 0.8*u^2")
    (s,) = verdict_scores(res, truth)
    assert (s.honest, s.exact, s.uncertain) == (True, False, 1)
    (s,) = verdict_scores(res, parse_equation("u_t = 0.8*u - 0.8*u^2"))
    assert (s.honest, s.exact) == (True, False)
    (s,) = verdict_scores(res, parse_equation("u_t = 0.8*u + 0.1*u_x"))
    assert (s.honest, s.exact) == (False, False)
    res.history.fits[0].verdicts = {"u": "determined", "u^2": "determined"}
    (s,) = verdict_scores(res, parse_equation("u_t = 0.8*u - 0.8*u^2"))
    assert (s.honest, s.exact, s.uncertain) == (True, True, 0)


def test_the_verdict_chart_has_a_cell_per_term_in_each_alternative():
    pytest.importorskip("matplotlib")
    from symweak.plot import plot_verdicts

    fig = plot_verdicts(_result())
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["u", "u^2", "u_xx  (floor 0.11)"]
    assert len(ax.patches) == 5  # u, u^2 in both equations; u_xx in the second
    colours = sorted(tuple(round(c, 3) for c in p.get_facecolor()[:3]) for p in ax.patches)
    assert len(set(colours)) == 2  # determined and uncertain
    assert [t.get_text() for t in ax.texts] == ["0.8", "-0.8", "0.79", "-0.81", "0.04"]
    with pytest.raises(Exception, match="no verdicts"):
        plot_verdicts(Discovery(_result().system))


@settings(max_examples=12, deadline=None)
@given(
    c=st.floats(0.0, 0.6),
    noise=st.floats(0.05, 1.0),
    seed=st.integers(0, 2**16),
    chosen=st.sets(st.integers(0, 5), min_size=1, max_size=3),
)
def test_verdicts_read_the_alternatives(c, noise, seed, chosen):
    """Determined = in every alternative, uncertain = in some, a floor for each uncertain
    term and none other; the first alternative is within reach (margin 0 or more)."""
    G, b = _system(c, noise, seed)
    found = judge(G, b, sorted(chosen), seed=seed)
    supports = [set(a.support) for a in found.alternatives]
    assert supports and found.alternatives[0].margin >= 0
    union, common = set().union(*supports), set.intersection(*supports)
    assert found.verdicts == {
        j: ("determined" if j in common else "uncertain") for j in sorted(union)
    }
    assert set(found.floors) == union - common
    assert all(f > 0 for f in found.floors.values())


def test_an_equation_that_explains_little_determines_nothing():
    """The best equation leaves most of b unexplained: no candidate is excluded."""
    from symweak.discover._verdicts import judge_equation

    rng = np.random.default_rng(0)
    G = rng.normal(size=(300, 8))
    b = 0.3 * G[:, 0] + rng.normal(size=300)  # 0.3 of signal in unit noise
    lib = [parse_equation(f"u_t = {t}").terms[0] for t in
           ("u", "u^2", "u^3", "u_x", "u_xx", "u_xxx", "u_xxxx", "d_x(u^2)")]  # fmt: skip
    record = FitRecord(lhs="u_t", residual=0.9, method="mstls")
    lhs = parse_equation("u_t = u").lhs
    coef = np.zeros(8)
    coef[0] = 0.3
    judge_equation(lhs, lib, G, b, coef, record, how="terms", constraints=None, seed=0)
    assert record.alternatives[0]["held_out"] > 0.5
    assert record.verdicts == {t.short(): "uncertain" for t in lib}
    assert record.excluded == {}
    res = Discovery(
        System([parse_equation("u_t = 0.3*u")]), history=History(fits=[record]),
        settings={"coords": ["t", "x"]},
    )  # fmt: skip
    assert str(res).splitlines()[1] == (
        "uncertain: u, u^2, u^3, u_x, u_xx, u_xxx and 2 more (the data cannot tell; see "
        "res.alternatives)"
    )
    assert res.warnings()[-1].startswith("u_t: these data determine no term and exclude none of 8")


def test_a_stand_in_beside_a_best_support_whose_neighbours_were_not_scored(monkeypatch):
    """The search stops after ``STEPS`` rounds; a collinear stand-in beside the best support
    found in the last round is scored when it is listed (it raised KeyError)."""
    import symweak.regress._verdict as verdict

    rng = np.random.default_rng(3)
    G = rng.normal(size=(300, 4))
    G[:, 3] = G[:, 0] + 0.01 * rng.normal(size=300)  # column 3 stands in for column 0
    b = G[:, 0] + 0.5 * G[:, 1] + 0.1 * rng.normal(size=300)
    monkeypatch.setattr(verdict, "STEPS", 0)
    found = judge(G, b, [0, 1], seed=0)
    stand_ins = [a for a in found.alternatives if a.reason == "stand-in"]
    assert [a.support for a in stand_ins] == [(0, 1, 3)]
    assert np.isfinite(stand_ins[0].score)
    assert found.verdicts == {0: "determined", 1: "determined", 3: "uncertain"}


def test_the_search_also_starts_from_the_selections_own_support():
    """Two steps from a support far from the best ({3, 4, 5} against b = G_0 + 0.1 G_1 +
    noise) the search never reaches {0}, and six supports are left within reach of the best
    it found; started from {0} as well it finds {0} and only that."""
    rng = np.random.default_rng(0)
    G = rng.normal(size=(300, 6))
    b = G[:, 0] + 0.1 * G[:, 1] + 0.5 * rng.normal(size=300)
    far = judge(G, b, [3, 4, 5], seed=0, floors=False)
    assert len(far.alternatives) == 6 and far.verdicts[3] == "uncertain"
    both = judge(G, b, [3, 4, 5], seed=0, floors=False, start=[[0]])
    assert both.verdicts == {0: "determined"}
    assert [a.support for a in both.alternatives] == [(0,)]


@pytest.mark.parametrize(
    "equation, expected",
    [
        (
            "u_t = -2.6638*u + 3.1698*sin(u) + 0.0492*u_xx + 0.0501*u_yy",
            "u_t: sin(u) and u largely cancel (together 0.506*u - 0.528*u^3 + … to third "
            "order): sin(u) may be standing in for a polynomial these data cannot tell it "
            "from; compare res.alternatives.",
        ),
        (
            "u_t = 2*u - 2.2*tanh(u) + 0.1*u^3",
            "u_t: tanh(u) and u largely cancel (together -0.2*u + 0.833*u^3 + … to third "
            "order): tanh(u) may be standing in for a polynomial these data cannot tell it "
            "from; compare res.alternatives.",
        ),
        ("u_t = -1.381*u - 1.029*v + 2.537*sin(u)", None),  # 1.16 of 2.54 is left: no
        ("u_t = 0.6*sin(u) + 0.08*u_xx", None),
        ("u_t = -0.3*u + 0.08*d_x(sin(u))", None),  # another multi-index: not its series
    ],
)
def test_a_function_beside_cancelling_terms_of_its_own_series_is_named(equation, expected):
    """Allen–Cahn 2-D's bistable reaction read as −2.66 u + 3.17 sin u: a cubic written with
    sin u, which a person should not read as a sine law."""
    from symweak.discover._readings import cancelling

    assert cancelling(parse_equation(equation)) == expected
    res = _result()
    res.system = System([parse_equation(equation)])
    assert (expected in res.warnings()) == (expected is not None)


def test_a_term_too_small_to_matter_is_excluded_above_its_floor(monkeypatch):
    """Nearly clean data (σ 0.005) holding 0.002 of column 1: the data fit about as well
    with it as without, but would detect it only above 0.0021, 0.2 % of b, under
    NEGLIGIBLE (1 %): it is excluded above that floor, not uncertain."""
    import symweak.regress._negligible as negligible

    G, b = _system(0.002, noise=0.005, seed=2)
    found = judge(G, b, [0], seed=0)
    assert found.verdicts == {0: "determined"}
    assert [a.support for a in found.alternatives] == [(0,)]
    assert found.floors == {}
    assert found.excluded[1] == pytest.approx(0.00214, rel=0.02)
    monkeypatch.setattr(negligible, "NEGLIGIBLE", 0.0)
    found = judge(G, b, [0], seed=0)
    assert found.verdicts == {0: "determined", 1: "uncertain"}
    assert found.floors[1] == pytest.approx(0.00214, rel=0.02)


def test_only_an_added_term_of_a_fit_alternative_is_negligible():
    """Column 2 only adds to the alternative (0,) and holds 0.1 % of b at its floor: its
    alternative goes and it is excluded. Column 1 holds 5 % (kept); column 3 is a stand-in
    (kept); column 4 adds to (0, 1), which goes, but also comes with a swap, (1, 4), whose
    (1,) is no alternative (it stays uncertain); column 0 is in the best support (kept)."""
    from symweak.regress import Alternative, Judgement
    from symweak.regress._negligible import drop_negligible

    supports = [((0,), "fit"), ((0, 1), "fit"), ((0, 2), "fit"), ((0, 3), "stand-in"),
                ((1, 4), "fit"), ((0, 1, 4), "fit")]  # fmt: skip
    alternatives = [Alternative(s, np.zeros(5), 0.1, 0.0, 0.0, why) for s, why in supports]
    verdicts = {0: "uncertain", 1: "uncertain", 2: "uncertain", 3: "uncertain", 4: "uncertain"}
    floors = {0: 0.001, 1: 0.05, 2: 0.001, 3: 0.001, 4: 0.001}
    out = Judgement(dict(verdicts), list(alternatives), dict(floors))
    moved = drop_negligible(out, (0,), np.ones(5))
    assert moved == {2: 0.001}
    assert [a.support for a in out.alternatives] == [(0,), (0, 1), (0, 3), (1, 4)]
    assert out.verdicts == {0: "uncertain", 1: "uncertain", 3: "uncertain", 4: "uncertain"}
    assert out.floors == {0: 0.001, 1: 0.05, 3: 0.001, 4: 0.001}
