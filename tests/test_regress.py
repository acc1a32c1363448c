import numpy as np
import pytest

from symweak import SymweakError
from symweak.regress import lstsq, mstls, stlsq


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


@pytest.mark.parametrize("criterion", ["wsindy", "elbow", "bic"])
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
