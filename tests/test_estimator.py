"""PDEDiscoverer: the scikit-learn protocol around discover()."""

import numpy as np
import pytest

import symweak
from symweak import PDEDiscoverer, SymweakError
from symweak.bench import generate


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def test_params_round_trip_and_clone_keeps_identity():
    est = PDEDiscoverer(ops="id,^2,*", lhs="u_t", n_tests=500, eta=(0.1, 0.3))
    params = est.get_params()
    assert params == {
        "ops": "id,^2,*",
        "lhs": "u_t",
        "seed": 0,
        "constraints": None,
        "method": "auto",
        "progress": False,
        "n_tests": 500,
        "eta": (0.1, 0.3),
    }
    twin = type(est)(**est.get_params(deep=False))  # what sklearn.base.clone does
    assert all(twin.get_params()[k] is v for k, v in params.items())
    assert est.set_params(kernels=64, seed=3) is est
    assert est.get_params()["kernels"] == 64 and est.seed == 3
    assert repr(est).startswith("PDEDiscoverer(ops='id,^2,*', lhs='u_t', seed=3,")


def test_sklearn_clone_when_installed():
    base = pytest.importorskip("sklearn.base")
    est = PDEDiscoverer(lhs="u_t", n_tests=300)
    copy = base.clone(est)
    assert copy is not est and copy.get_params() == est.get_params()


def test_unknown_names_fail_at_once():
    with pytest.raises(SymweakError, match=r"PDEDiscoverer: unknown option\(s\) \['kernelz'\]"):
        PDEDiscoverer(kernelz=3)
    with pytest.raises(SymweakError, match="PDEDiscoverer: unknown parameter `n_test`"):
        PDEDiscoverer().set_params(n_test=3)
    with pytest.raises(SymweakError, match="not fitted yet"):
        PDEDiscoverer().equations()


def test_fit_equals_discover_and_reports_like_pysindy(capsys):
    obs = generate("burgers").add_noise(0.1, seed=0)
    est = PDEDiscoverer(lhs="u_t", n_tests=500).fit(obs)
    same = symweak.discover(obs, lhs="u_t", n_tests=500, progress=False)
    assert est.result_.ir == same.ir and est.coefficients_ == same.coefficients
    assert est.equations() == [same.short(4)]
    est.print(precision=3)
    assert capsys.readouterr().out == same.short(3) + "\n"
    # the same from arrays
    again = PDEDiscoverer(lhs="u_t", n_tests=500).fit(dict(obs.coords), fields=dict(obs.fields))
    assert again.result_.ir == same.ir
    # the discovered Burgers equation reproduces the clean data closely
    clean = generate("burgers")
    assert 0.95 < est.score(clean) <= 1.0
    with pytest.raises(SymweakError, match="This result has no surrogate"):
        est.predict(t=[1.0], x=[0.0])


def test_fit_with_a_bad_option_value_fails_before_training():
    obs = generate("burgers")
    with pytest.raises(SymweakError, match="n_tests must be an integer >= 1, got 0"):
        PDEDiscoverer(lhs="u_t", n_tests=0).fit(obs)
    with pytest.raises(SymweakError, match=r"fit\(coords, fields=...\) takes the coordinates"):
        PDEDiscoverer().fit(np.zeros(3), fields={"u": np.zeros(3)})
