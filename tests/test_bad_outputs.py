"""Bad output places and bad arguments around a finished run (round 2 of trying symweak as a
new user would): each is refused with its message before any work, and nothing is written."""

from __future__ import annotations

import numpy as np
import pytest

import symweak
from symweak import PDEDiscoverer, SymweakError
from symweak.bench import generate
from symweak.cli import main

TINY = dict(warmup_epochs=30, search_epochs=3, prune_epochs=3, tune_epochs=3, n_tests=60)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A full-grid result and a (barely trained) network result saved as JSON, and data."""
    folder = tmp_path_factory.mktemp("runs")
    obs = generate("burgers", nt=41)
    obs.save(folder / "data.npz")
    find = symweak.discover  # the name the conftest looks for stays out of the test bodies
    find(obs, lhs="u_t", progress=False).save(folder / "grid.json")
    net = find(obs.sample(0.2, seed=0), lhs="u_t", ops="id,^2,*", progress=False, **TINY)
    net.save(folder / "net.json")
    return folder


def _error(capsys) -> str:
    return capsys.readouterr().err.splitlines()[0].removeprefix("symweak: error: ")


def test_discover_out_naming_a_folder_is_refused_before_loading(runs, capsys):
    assert main(["discover", str(runs / "absent.npz"), "--out", str(runs)]) == 2
    assert _error(capsys) == (
        f"Cannot save to {runs}: it is a folder; give a file name, e.g. {runs / 'run.json'}."
    )


def test_export_out_checked_before_the_run_is_read(runs, capsys):
    assert main(["export", str(runs / "absent.json"), "--to", "sim", "--out", str(runs)]) == 2
    assert _error(capsys) == (
        f"Cannot save to {runs}: it is a folder; give a file name, e.g. {runs / 'sim.py'}."
    )
    missing = runs / "no" / "eq.tex"
    assert main(["export", str(runs / "grid.json"), "--to", "latex", "--out", str(missing)]) == 2
    assert _error(capsys) == (
        f"Cannot save to {missing}: the folder {missing.parent} does not exist. Create it or "
        "choose another --out."
    )


@pytest.mark.parametrize(
    "flag, axes, message",
    [
        ("--mirror", "q", "--mirror names ['q'], which are not space axes of this result; its "
         "space axes are ['x']."),
        ("--periodic", "x,t", "--periodic names ['t'], which are not space axes of this "
         "result; its space axes are ['x']."),
    ],
)  # fmt: skip
def test_plot_axes_that_the_run_lacks_are_refused_before_drawing(runs, capsys, flag, axes, message):
    out = runs / f"figs{flag}"
    argv = ["plot", str(runs / "grid.json"), "--data", str(runs / "data.npz"), flag, axes]
    assert main([*argv, "--out", str(out)]) == 2
    assert _error(capsys) == message
    assert not out.exists()


def test_plot_out_naming_a_file_is_refused(runs, capsys):
    target = runs / "grid.json"
    assert main(["plot", str(target), "--out", str(target)]) == 2
    assert (
        _error(capsys) == f"Cannot write figures into {target}: it is a file. Choose another --out."
    )


@pytest.mark.parametrize(
    "flag, name, message",
    [
        ("--figure", "a.xyz", "--figure a.xyz: name a .png, .svg, .pdf file (the suffix gives "
         "the format)."),
        ("--export", "rows.txt", "--export rows.txt: name a .parquet, .csv file (the suffix "
         "gives the format)."),
    ],
)  # fmt: skip
def test_sweep_report_outputs_are_checked_before_the_report(tmp_path, capsys, flag, name, message):
    from symweak.sweep import Store

    Store(tmp_path / "s.sqlite")  # an empty store
    assert main(["sweep", "report", str(tmp_path / "s.sqlite"), flag, str(tmp_path / name)]) == 2
    out = capsys.readouterr()
    assert out.out == ""  # nothing printed before the refusal
    assert (
        out.err.splitlines()[0].removeprefix("symweak: error: ").replace(str(tmp_path) + "/", "")
        == message
    )


def test_sweep_report_of_a_missing_store(tmp_path, capsys):
    assert main(["sweep", "report", str(tmp_path / "none.sqlite")]) == 2
    assert _error(capsys) == f"No such results store: {tmp_path / 'none.sqlite'}."


def test_results_saved_to_or_read_from_a_folder(runs, tmp_path):
    res = symweak.Discovery.load(runs / "grid.json")
    with pytest.raises(SymweakError) as err:
        res.save(tmp_path)
    assert str(err.value) == (
        f"Cannot save to {tmp_path}: it is a folder; give a file name, e.g. "
        f"{tmp_path / 'run.json'}."
    )
    with pytest.raises(SymweakError) as err:
        symweak.Discovery.load(tmp_path)
    assert (
        str(err.value) == f"{tmp_path} is a folder, not a symweak result; give its run.json file."
    )


@pytest.mark.parametrize(
    "coords, message",
    [
        ({"t": [np.nan], "x": [0.0]}, "predict: coordinate t holds NaN or inf at 1 point(s) "
         "(first: index 0); give finite coordinates."),
        ({"t": [1.0], "x": [0.0, np.inf]}, "predict: coordinate arrays must have the same "
         "length (t 1, x 2)."),
        ({"t": [1.0], "x": [0.0], "y": [0.0]}, "predict: unknown coordinate(s) ['y']; the "
         "surrogate's coordinates are ['t', 'x']."),
        ({"t": [1.0, 2.0], "x": [0.0, np.inf]}, "predict: coordinate x holds NaN or inf at 1 "
         "point(s) (first: index 1); give finite coordinates."),
    ],
)  # fmt: skip
def test_predict_refuses_coordinates_it_cannot_use(runs, coords, message):
    res = symweak.Discovery.load(runs / "net.json")
    with pytest.raises(SymweakError) as err:
        res.predict(**coords)
    assert str(err.value) == message


def test_estimator_rows_after_fitting_must_match_its_columns(runs):
    est = PDEDiscoverer(columns="t,x,u")
    est.result_ = symweak.Discovery.load(runs / "net.json")  # as fit() leaves it
    assert est.predict(np.array([[1.0, 0.0, 0.0]])).shape == (1, 1)
    with pytest.raises(symweak.DataError) as err:
        est.score(np.zeros((3, 2)))
    assert str(err.value) == (
        "PDEDiscoverer: columns='t,x,u' names 3 columns, but X has shape (3, 2); pass one row "
        "per point with those 3 columns."
    )
    with pytest.raises(SymweakError, match="This PDEDiscoverer is not fitted yet; call fit"):
        PDEDiscoverer(columns="t,x,u").predict(np.zeros((1, 3)))


@pytest.mark.parametrize(
    "make, why",
    [
        (lambda: symweak.data.scratch_assay(20_000), "these hold replicates (several points "
         "per coordinate), which are never put on a grid"),
        (lambda: generate("burgers", nt=41).sample(0.3, seed=0), "these are scattered or leave "
         "grid points empty"),
    ],
)  # fmt: skip
def test_forcing_the_grid_method_on_data_that_do_not_fill_a_grid(make, why):
    with pytest.raises(symweak.DataError) as err:
        symweak.discover(make(), lhs="u_t", method="grid", progress=False)
    assert str(err.value) == (
        f"method='grid' needs observations that fill their grid, and {why}; use "
        "method='network' (or 'auto', which picks it)."
    )


def test_score_on_rows_of_a_constant_field_is_finite(runs):
    est = PDEDiscoverer(columns="t,x,u")
    est.result_ = symweak.Discovery.load(runs / "net.json")
    rows = np.array([[1.0, 0.0, 5.0], [2.0, 1.0, 5.0]])  # u = 5 everywhere, not reproduced
    assert est.score(rows) == 0.0
