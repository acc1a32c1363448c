import numpy as np
import pytest

from symweak import SymweakError
from symweak.regress import lstsq, mstls, stlsq, tls_refit


def problem(noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((400, 12)) * np.logspace(-2, 2, 12)  # badly scaled columns
    xi = np.zeros(12)
    xi[[1, 4, 9]] = [2.0, -0.5, 0.01]
    b = G @ xi + noise * rng.standard_normal(400) * np.linalg.norm(G @ xi) / 20
    return G, b, xi


def test_lstsq_exact_on_scaled_columns():
    G, b, xi = problem()
    fit = lstsq(G, b)
    np.testing.assert_allclose(fit.coef, xi, atol=1e-10)
    assert fit.residual < 1e-12


def test_stlsq_removes_small_terms_and_keeps_forced_ones():
    G, b, _ = problem(noise=0.05)
    fit = stlsq(G, b, threshold=0.01)
    assert set(fit.support) == {1, 4, 9}
    forced = stlsq(G, b, threshold=0.01, keep=[0])
    assert 0 in set(forced.support)


@pytest.mark.parametrize("criterion", ["wsindy", "elbow", "bic", "log"])
def test_model_selection_without_truth(criterion):
    G, b, xi = problem(noise=0.05)
    fit = mstls(G, b, criterion=criterion)
    assert set(fit.support) == {1, 4, 9}
    np.testing.assert_allclose(fit.coef[[1, 4, 9]], xi[[1, 4, 9]], rtol=0.05)
    assert fit.path and fit.method == f"mstls[{criterion}]"


def test_bad_systems_are_reported():
    with pytest.raises(SymweakError, match="underdetermined"):
        lstsq(np.ones((3, 5)), np.ones(3))
    with pytest.raises(SymweakError, match="NaN or inf"):
        lstsq(np.full((5, 2), np.nan), np.ones(5))
    with pytest.raises(SymweakError, match="criterion must be"):
        mstls(np.eye(4), np.ones(4), criterion="aic")


def test_log_criterion_keeps_a_nearly_collinear_term():
    # Chafee-Infante-like: column 1 is almost -column 0 (u_xx ~ -u), the truth uses all three
    rng = np.random.default_rng(1)
    u = rng.standard_normal(300)
    G = np.column_stack(
        [u, -u + 0.05 * rng.standard_normal(300), u**3 / 8, rng.standard_normal(300)]
    )
    xi = np.array([-1.0, 1.0, 1.0, 0.0])
    b = G @ xi + 1e-4 * rng.standard_normal(300)
    plain = mstls(G, b, criterion="wsindy")
    assert list(plain.support) != [0, 1, 2]  # a fixed cost per term drops the small ones
    fit = mstls(G, b, criterion="log")
    assert list(fit.support) == [0, 1, 2]
    np.testing.assert_allclose(fit.coef[:3], xi[:3], rtol=1e-2)
    with pytest.raises(SymweakError, match="penalty must be a positive number"):
        mstls(G, b, criterion="log", penalty=0.0)


def test_swap_refine_finds_the_pair_a_greedy_start_misses():
    from symweak.regress import swap_refine

    rng = np.random.default_rng(2)
    a, c, e = rng.standard_normal((3, 200))
    d = a + c + 0.3 * rng.standard_normal(200)  # best single column, not in the truth
    G = np.column_stack([a, c, d, e])
    b = a + c
    assert swap_refine(G, b, (2, 3)) == (0, 1)
    assert swap_refine(G, b, (0, 1)) == (0, 1)  # already best: unchanged
    assert swap_refine(G, b, (2, 3), keep=[2]) == (0, 2)  # a kept term is never swapped out


def test_term_complexity_counts_a_function_as_its_argument_plus_a_quarter():
    import sympy

    from symweak.ir import Term
    from symweak.regress import term_complexity

    t, x = sympy.symbols("t x")
    u, v = sympy.Function("u")(t, x), sympy.Function("v")(t, x)
    lib = [
        Term(u**3, ()),
        Term(u**2, "x"),
        Term(sympy.sin(u), ()),
        Term(v * sympy.sin(u), "x"),
        Term(sympy.exp(u**2), ()),
    ]
    # each application of sin/exp adds FUNCTION_WEIGHT = 0.25 (nested ones count twice)
    assert list(term_complexity(lib, "degree")) == [3.0, 2.0, 1.25, 2.25, 2.25]
    assert list(term_complexity(lib[:2], "degree+order")) == [3.0, 2.5]
    assert list(term_complexity(lib, "degree:0.25")) == [1.5, 1.25, 1.25, 1.5, 1.5]
    assert list(term_complexity(lib, "degree:0")) == [1.0, 1.0, 1.25, 1.25, 1.25]
    nested = Term(sympy.sin(u + sympy.sin(u) / 10), "xx")
    assert list(term_complexity([nested], "degree:0.25")) == [1.5]
    assert term_complexity(lib, "terms") is None


@pytest.mark.parametrize("how", ["degree:", "degree:-1", "degree:x", "degree:nan", "size"])
def test_term_complexity_rejects_a_bad_weight(how):
    from symweak.regress import term_complexity

    if how == "size":
        message = "complexity must be 'terms', 'degree', 'degree:w' or 'degree+order', got 'size'."
    else:
        message = f"complexity 'degree:w' needs a number w >= 0 (e.g. 'degree:0.25'), got {how!r}."
    with pytest.raises(SymweakError) as err:
        term_complexity([], how)
    assert str(err.value) == message


@pytest.mark.parametrize("size, kept", [(3e-4, False), (3e-2, True)])
def test_log_criterion_ignores_contributions_below_a_tenth_of_a_percent(size, kept):
    # 60 test functions, 3 true columns, one column z that adds `size` of ‖b‖, and 50 more
    # columns: the complete library spans b almost exactly (residual ~0), so without a
    # minimum floor any tiny improvement is a large factor on the log scale
    rng = np.random.default_rng(0)
    G = rng.normal(size=(60, 54))
    b = G[:, :3] @ np.array([1.0, -2.0, 0.5])
    z = G[:, 3]
    b = b + size * np.linalg.norm(b) / np.linalg.norm(z) * z
    fit = mstls(G, b, criterion="log")
    expected = [0, 1, 2, 3] if kept else [0, 1, 2]
    assert fit.support.tolist() == expected
    assert fit.coef[:3] == pytest.approx([1.0, -2.0, 0.5], rel=2e-3)


def errors_in_variables(scale, seed=0):
    """b = A c exactly, then the same relative error on every column and on b."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((2000, 2))
    c = np.array([-0.5, 0.1])
    b = A @ c
    noisy = A + scale * rng.standard_normal(A.shape) * np.linalg.norm(A, axis=0) / 2000**0.5
    b = b + scale * rng.standard_normal(b.size) * np.linalg.norm(b) / 2000**0.5
    return noisy, b, c


def test_tls_refit_undoes_the_shrinkage_of_noisy_columns():
    A, b, c = errors_in_variables(0.3)
    ls = lstsq(A, b)
    tls = tls_refit(A, b, ls)
    # least squares shrinks both coefficients by about 1/(1 + 0.3²) = 0.92
    np.testing.assert_allclose(ls.coef / c, [0.92, 0.92], atol=0.02)
    np.testing.assert_allclose(tls.coef, c, rtol=0.02)
    assert tls.method == "lstsq+tls"
    # the refit is no least-squares solution: its residual is larger, and is reported
    assert tls.residual > ls.residual
    assert tls.residual == pytest.approx(np.linalg.norm(A @ tls.coef - b) / np.linalg.norm(b))


def test_tls_refit_agrees_with_least_squares_on_clean_data():
    G, b, xi = problem()
    fit = mstls(G, b, criterion="log")
    tls = tls_refit(G, b, fit)
    assert tls.method == "mstls[log]+tls"
    np.testing.assert_allclose(tls.coef, fit.coef, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(tls.coef, xi, rtol=1e-8, atol=1e-12)


def test_tls_refit_leaves_a_support_that_explains_little_alone():
    A, b, _ = errors_in_variables(0.3)
    rng = np.random.default_rng(1)
    b = b + 3 * rng.standard_normal(b.size) * np.linalg.norm(b) / 2000**0.5
    ls = lstsq(A, b)
    assert tls_refit(A, b, ls) is ls  # the error estimate is too close to the signal
    assert tls_refit(A, b, ls, gap=1.0) is not ls


def test_family_swaps_replace_one_function_throughout():
    from symweak.regress import family_swaps

    # columns: (F, alpha) = sin u under x, xx, xxxx; u under x, xx, xxxx; u^2 under x
    families = [("s", 1), ("s", 2), ("s", 4), ("u", 1), ("u", 2), ("u", 4), ("u2", 1)]
    out = family_swaps([(6, 1, 2)], families)
    # sin u -> u in both of its terms (u2 has no xx/xxxx column: no move); u2 -> s or u
    assert (2, 4, 5) not in out and (4, 5, 6) in out
    assert (0, 1, 2) in out and (1, 2, 3) in out
    assert len(out) == 3
    # a kept column is never replaced
    assert family_swaps([(1, 6)], families, keep=[6]) == [(4, 6)]


def test_mstls_refuses_families_of_the_wrong_length():
    from symweak.regress import mstls

    G = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(SymweakError, match=r"families needs one \(F, alpha\) key per candidate"):
        mstls(G, G[:, 0], criterion="log", families=[("u", 1)])
