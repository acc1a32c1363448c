"""PDEDiscoverer: the scikit-learn protocol around discover()."""

import warnings

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
        "columns": None,
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


#: scikit-learn's checks that fit a random feature matrix: rows of a PDE's observations need
#: their columns named (which is time, which a field), so these do not apply
_NEEDS_NAMED_COLUMNS = "fits random unnamed features; rows of observations need columns='t,x,u'"
_NOT_APPLICABLE = {
    name: _NEEDS_NAMED_COLUMNS
    for name in (
        "check_fit_score_takes_y",
        "check_estimators_overwrite_params",
        "check_dont_overwrite_parameters",
        "check_estimators_fit_returns_self",
        "check_readonly_memmap_input",
        "check_n_features_in_after_fitting",
        "check_positive_only_tag_during_fit",
        "check_estimators_dtypes",
        "check_dtype_object",
        "check_pipeline_consistency",
        "check_estimators_nan_inf",
        "check_estimators_pickle",
        "check_f_contiguous_array_estimator",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_fit2d_1sample",
        "check_fit2d_1feature",
        "check_dict_unchanged",
        "check_fit_idempotent",
        "check_fit_check_is_fitted",
        "check_n_features_in",
        "check_fit2d_predict1d",
    )
}
_NOT_APPLICABLE["check_do_not_raise_errors_in_init_or_set_params"] = (
    "an unknown option name is refused when the estimator is made (it reads **config as "
    "one parameter named `config`)"
)


def test_scikit_learn_check_estimator_where_it_applies():
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    import sklearn

    if tuple(int(p) for p in sklearn.__version__.split(".")[:2]) < (1, 7):
        pytest.skip("check_estimator(callback=...) needs scikit-learn 1.7 or newer")
    ran = {}

    def record(estimator, check_name, exception, status, expected_to_fail, **_):
        ran[check_name] = status

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Estimator PDEDiscoverer does not inherit")
        checks.check_estimator(
            PDEDiscoverer(n_tests=100),
            expected_failed_checks=_NOT_APPLICABLE,
            on_skip=None,
            on_fail=None,
            callback=record,
        )
    failed = sorted(name for name, status in ran.items() if status == "failed")
    assert failed == []
    passed = {name for name, status in ran.items() if status == "passed"}
    assert passed >= {
        "check_complex_data",
        "check_estimator_cloneable",
        "check_estimator_repr",
        "check_estimator_sparse_array",
        "check_estimator_sparse_matrix",
        "check_estimator_sparse_tag",
        "check_estimator_tags_renamed",
        "check_estimators_empty_data_messages",
        "check_estimators_unfitted",
        "check_fit1d",
        "check_get_params_invariance",
        "check_mixin_order",
        "check_no_attributes_set_in_init",
        "check_parameters_default_constructible",
        "check_set_params",
        "check_valid_tag_types",
    }
    assert {ran[name] for name in _NOT_APPLICABLE} == {"xfail"}


@pytest.mark.parametrize(
    "X, columns, message",
    [
        (np.zeros((4, 3)), None, r"a 2-D array of rows needs its columns named, e\.g\. "),
        (np.zeros((4, 3)), "t,x", r"columns='t,x' names 2 columns, but X has shape \(4, 3\)"),
        (np.zeros((4, 2)), "t,x", r"columns='t,x' names only coordinates"),
        (np.zeros((4, 2)), "x,u", r"must name each column once and include the time"),
        (np.zeros((0, 3)), "t,x,u", r"PDEDiscoverer: X has no rows; give one row per observed"),
        (np.array([[0, 1, np.nan]]), "t,x,u", r"1 row\(s\) hold NaN or inf \(first: row 0\)"),
        (np.zeros(3), "t,x,u", r"rows must be a 2-D array \(points × columns\); got shape \(3,\)"),
        (np.zeros((2, 3), complex), "t,x,u", r"Complex data not supported in rows; give the"),
    ],
)
def test_rows_that_cannot_be_observations_are_refused(X, columns, message):
    with pytest.raises(symweak.DataError, match=message):
        PDEDiscoverer(columns=columns).fit(X)


def test_grid_search_cv_splits_points_and_scores_held_out_rows():
    selection = pytest.importorskip("sklearn.model_selection")
    obs = generate("burgers").sample(0.1, seed=0)
    X = np.column_stack([obs.coords["t"], obs.coords["x"], obs.fields["u"]])
    fast = dict(warmup_epochs=150, search_epochs=20, prune_epochs=20, tune_epochs=10)
    est = PDEDiscoverer(ops="id,^2,*", lhs="u_t", columns="t,x,u", n_tests=300, **fast)
    folds = selection.KFold(2, shuffle=True, random_state=0)  # points, not blocks of time
    search = selection.GridSearchCV(est, {"kernels": [4, 128]}, cv=folds).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert search.best_params_ == {"kernels": 128} and scores[1] > 0.99 > scores[0]
    best = search.best_estimator_
    assert best.get_params()["kernels"] == 128 and best.predict(X[:5]).shape == (5, 1)
    assert best.score(X) == pytest.approx(scores[1], abs=0.01)
