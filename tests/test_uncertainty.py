"""Bootstrap intervals and the Pareto front on synthetic weak systems with known support."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from symweak import SymweakError
from symweak.discover._history import FitRecord
from symweak.discover._settings import INTERVAL_PRECISION
from symweak.discover._verdicts import widen_to_precision
from symweak.grammar import parse_equation
from symweak.regress import bootstrap_intervals, drop_one, pareto_front

TRUE = np.array([1.0, -0.5, 0.1, 0.0, 0.0, 0.0])


def draw(rng, k=120, noise=0.05):
    G = rng.standard_normal((k, TRUE.size))
    G[:, 3] = G[:, 0] + 0.3 * rng.standard_normal(k)  # a spurious column close to a true one
    return G, G @ TRUE + noise * rng.standard_normal(k)


def test_intervals_cover_the_true_coefficients():
    rng = np.random.default_rng(0)
    hits = []
    for draw_seed in range(200):
        G, b = draw(rng)
        lo, hi = bootstrap_intervals(G, b, [0, 1, 2], resamples=100, seed=draw_seed, tls=False)
        hits.extend((lo[j] <= TRUE[j] <= hi[j]) for j in (0, 1, 2))
        assert lo[3] == hi[3] == 0.0  # outside the support
    coverage = np.mean(hits)
    assert 0.90 <= coverage <= 0.99, coverage  # 95 % intervals: neither too narrow nor vacuous


def test_pareto_front_is_monotone_and_holds_the_true_support():
    rng = np.random.default_rng(1)
    G, b = draw(rng, k=200)
    front = pareto_front(G, b, chosen=[0, 1, 2], seed=0)
    sizes = [p.complexity for p in front]
    held = [p.held_out for p in front]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    assert all(a > b for a, b in itertools.pairwise(held))  # each step earns its term
    assert [p.support for p in front if p.chosen] == [(0, 1, 2)]
    true = next(p for p in front if p.chosen)
    # larger supports fit the held-out rows' noise only: less than 2 % better
    assert all(p.held_out > 0.98 * true.held_out for p in front if p.complexity > 3)
    np.testing.assert_allclose(true.coef[:3], TRUE[:3], atol=0.02)
    assert [p.support for p in front][:2] == [(0,), (0, 1)]


def test_bad_settings_are_named():
    G, b = draw(np.random.default_rng(2))
    with pytest.raises(SymweakError, match=r"level must be in \(0, 1\), got 1.5"):
        bootstrap_intervals(G, b, [0], level=1.5)
    with pytest.raises(SymweakError, match="resamples must be at least 10, got 3"):
        bootstrap_intervals(G, b, [0], resamples=3)


def test_tied_equations_get_intervals_from_their_joint_design():
    """Two equations tied by a pair rule (B's coefficient = k × A's) share one joint fit;
    their intervals come from that design, the partner's being k times the shared one, and
    the envelope widens them to hold the support refitted on another variant."""
    from symweak.grammar import parse_terms
    from symweak.regress import fit_equations, mstls, refit_support, tied_intervals

    ut, vt = parse_terms("u_t, v_t", coords="t,x", fields=["u", "v"])
    lib_a = parse_terms("u, v^3, u_xx", coords="t,x", fields=["u", "v"])
    lib_b = parse_terms("v, u^3, v_xx", coords="t,x", fields=["u", "v"])
    ties = [(ut, vt, [(lib_a[0], lib_b[0], -1.0), (lib_a[2], lib_b[2], -1.0)])]
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(300, 3)), rng.normal(size=(300, 3))
    b_a = A @ [1.0, 0.0, -0.5] + 0.05 * rng.normal(size=300)
    b_b = B @ [-1.0, 0.0, 0.5] + 0.05 * rng.normal(size=300)
    designs = {ut: (lib_a, A, b_a), vt: (lib_b, B, b_b)}
    results = fit_equations(designs, ties, lambda G, b, lib: mstls(G, b))
    assert {t.short() for t in results[ut][0]} == {"u", "u_xx"}
    fits = {lhs: fit for lhs, (_, fit) in results.items()}

    def interval_fn(G, b, support):
        return bootstrap_intervals(G, b, support, resamples=200, seed=0, tls=False)

    ci = tied_intervals(designs, ties, fits, interval_fn)
    (lo, hi), (lo2, hi2) = ci[ut][lib_a[0]], ci[ut][lib_a[2]]
    assert lo < 1.0 < hi and hi - lo < 0.02
    assert lo2 < -0.5 < hi2
    assert ci[vt] == {lib_b[0]: (-hi, -lo), lib_b[2]: (-hi2, -lo2)}
    # another variant whose u-coefficient is 1.1: the envelope reaches it
    shifted = {ut: (lib_a, A, b_a + 0.1 * A[:, 0]), vt: (lib_b, B, b_b - 0.1 * B[:, 0])}
    refit = lambda G, b, s: refit_support(G, b, s, tls=False)  # noqa: E731
    wide = tied_intervals(designs, ties, fits, interval_fn, [(shifted, refit)])
    assert wide[ut][lib_a[0]][0] == lo and wide[ut][lib_a[0]][1] == pytest.approx(1.1, abs=0.01)
    assert wide[vt][lib_b[0]] == (-wide[ut][lib_a[0]][1], -lo)
    # inclusion probabilities of the joint columns go to both equations' terms
    from symweak.regress import tied_probabilities

    # joint columns: u, v^3, u_xx (tied to v, -, v_xx), then v_t's untied u^3
    fits[ut].probabilities = np.array([1.0, 0.1, 0.9, 0.2])
    probs = tied_probabilities(designs, ties, fits)
    assert probs[ut] == {lib_a[0]: 1.0, lib_a[1]: 0.1, lib_a[2]: 0.9}
    assert probs[vt] == {lib_b[0]: 1.0, lib_b[2]: 0.9, lib_b[1]: 0.2}
    # the Pareto front of joint supports, split per equation, the partner's k times
    from symweak.regress import tied_pareto

    fronts = tied_pareto(
        designs, ties, fits, lambda G, b, chosen, terms: pareto_front(G, b, chosen=chosen)
    )
    (chosen_u,) = [p for p in fronts[ut] if p["chosen"]]
    (chosen_v,) = [p for p in fronts[vt] if p["chosen"]]
    assert set(chosen_u["terms"]) == {lib_a[0], lib_a[2]}
    assert chosen_v["terms"] == {lib_b[0]: -chosen_u["terms"][lib_a[0]],
                                 lib_b[2]: -chosen_u["terms"][lib_a[2]]}  # fmt: skip
    assert chosen_u["terms"][lib_a[0]] == pytest.approx(1.0, abs=0.01)
    assert [p["held_out"] for p in fronts[ut]] == [p["held_out"] for p in fronts[vt]]


def test_pareto_front_judges_the_chosen_support_less_each_term():
    # a spurious term chosen beside the true ones: the chosen support less that term is a
    # candidate of its own (the greedy paths are cut to one term here, so it can come from
    # nowhere else); it is on the front, and the chosen one is still marked
    rng = np.random.default_rng(3)
    G = rng.standard_normal((300, 5))
    b = G @ np.array([0.0, 0.0, 1.0, -0.5, 0.0]) + 0.02 * rng.standard_normal(300)
    front = pareto_front(G, b, chosen=[0, 2, 3], seed=0, tls=False, max_terms=1)
    assert [p.support for p in front] == [(2,), (2, 3), (0, 2, 3)]
    assert [p.chosen for p in front] == [False, False, True]
    truth = front[1]
    assert truth.held_out <= front[2].held_out
    np.testing.assert_allclose(truth.coef[[2, 3]], [1.0, -0.5], atol=0.01)


def test_drop_one_prices_each_kept_term_on_the_fronts_halves():
    # a strong term, a weak one (2 % of b) and a spurious one: without the strong term
    # most of b is left, without the weak one a little more than with it, without the
    # spurious one nothing changes; the values are the front's on the same halves
    rng = np.random.default_rng(4)
    G = rng.standard_normal((400, 4))
    b = G @ np.array([1.0, 0.0, 0.02, 0.0]) + 0.005 * rng.standard_normal(400)
    chosen = [0, 2, 3]
    without = drop_one(G, b, chosen, seed=0, tls=False)
    front = pareto_front(G, b, chosen=chosen, seed=0, tls=False, max_terms=1)
    held = {p.support: p.held_out for p in front}
    own = held[(0, 2, 3)]
    assert set(without) == {0, 2, 3}
    assert without[0] > 0.99  # b is the first column
    assert 2 * own < without[2] < 0.05  # the weak term: small, but the data need it
    assert without[3] == pytest.approx(own, rel=0.02)  # the spurious one: not needed
    assert without[3] == held[(0, 2)]  # the same halves and fit as the front's
    assert drop_one(G, b, [0], seed=0, tls=False) == {0: 1.0}  # nothing left to explain b
    assert drop_one(G, b, [], seed=0) == {}


def test_intervals_reach_the_precision_floor_around_the_shown_coefficient():
    assert INTERVAL_PRECISION == 0.02
    shown = parse_equation("u_t = -0.5*d_x(u^2) + 0.1*u_xx", coords="t,x")
    fit = FitRecord(
        lhs="u_t",
        residual=0.01,
        method="mstls",
        # a clean fit's bootstrap: far narrower than the method's own bias; a wide one
        intervals={"d_x(u^2)": [-0.5004, -0.4999], "u_xx": [0.05, 0.2], "u": [0.0, 0.1]},
    )
    widen_to_precision([shown], [fit])
    assert fit.intervals["d_x(u^2)"] == pytest.approx([-0.51, -0.49])
    assert fit.intervals["u_xx"] == [0.05, 0.2]  # already wider: unchanged
    assert fit.intervals["u"] == [0.0, 0.1]  # not in the shown equation: unchanged
    other = FitRecord(lhs="v_t", residual=0.0, method="mstls", intervals={"u": [1.0, 1.0]})
    widen_to_precision([shown], [other])  # no equation for v_t: nothing to widen around
    assert other.intervals == {"u": [1.0, 1.0]}


def test_noisy_data_widen_the_precision_floor_with_the_noise_estimate():
    """Noise / std 0.1: the floor is 2 % + 0.5 × 10 % = 7 % of the coefficient."""
    from symweak.discover._settings import INTERVAL_NOISE_SHARE

    assert INTERVAL_NOISE_SHARE == 0.5
    shown = parse_equation("u_t = -0.5*d_x(u^2) + 0.1*u_xx", coords="t,x")
    fit = FitRecord(
        lhs="u_t", residual=0.01, method="mstls",
        intervals={"d_x(u^2)": [-0.52, -0.49], "u_xx": [0.05, 0.2]},
    )  # fmt: skip
    widen_to_precision([shown], [fit], noise=0.1)
    assert fit.intervals["d_x(u^2)"] == pytest.approx([-0.535, -0.465])
    assert fit.intervals["u_xx"] == [0.05, 0.2]
