"""The typed configuration: presets, overrides, validation, round trip."""

import dataclasses

import pytest

from symweak import Config, SymweakError
from symweak.discover import ENTRIES, PRESETS


def test_presets_differ_only_where_the_methods_were_tuned_differently():
    grid, net = Config.preset("grid"), Config.preset("network")
    assert (grid.tests.n_tests, grid.selection.criterion, grid.selection.complexity) == (
        1000,
        "log",
        "degree:0.25",
    )
    assert (net.tests.n_tests, net.selection.criterion, net.selection.complexity) == (
        250,
        "log",
        "degree:0.25",
    )
    assert grid.tests.scale == net.tests.scale == "cap"
    assert PRESETS == {"grid": {}, "network": {"n_tests": 250}}


def test_overrides_flat_or_dotted_and_the_config_is_frozen():
    cfg = Config.preset("network", kernels=250, **{"training.tune_epochs": 10})
    assert cfg.surrogate.kernels == 250 and cfg.get("tune_epochs") == 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.surrogate.kernels = 64
    with pytest.raises(SymweakError, match=r"Unknown option `surrogate.tune_epochs`"):
        Config.preset("network", **{"surrogate.tune_epochs": 10})


def test_old_scale_names_are_the_new_ones():
    assert Config.preset("grid", scale="hybrid").tests.scale == "cap"
    assert Config.preset("grid", scale="auto").tests.scale == "spectrum"
    with pytest.raises(
        SymweakError, match=r"scale must be one of 'cap', 'paper', 'axis', 'spectrum', got 'x'"
    ):
        Config.preset("grid", scale="x")


def test_to_dict_round_trip_and_unknown_keys():
    cfg = Config.preset("network", kernels=64, eta=[0.1, 0.3], max_order={"x": 3})
    data = cfg.to_dict()
    assert data["method"] == "network" and data["eta"] == [0.1, 0.3] and data["kernels"] == 64
    assert "degree" not in data and "threshold" not in data  # grid-only entries
    assert Config.from_dict(data) == cfg
    with pytest.raises(SymweakError, match=r"Unknown option `kernelz`\. Known options: .*kernels"):
        Config.from_dict({**data, "kernelz": 1})


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("n_tests", 0, "n_tests must be an integer >= 1, got 0"),
        ("eta", (0.4, 0.2), r"eta must be two numbers 0 < η_min <= η_max, got \(0.4, 0.2\)"),
        ("degree", 0, "degree must be an integer >= 1, got 0"),
        ("threshold", -1, "threshold must be None or a number >= 0, got -1"),
        ("debias", "yes", "debias must be True or False, got 'yes'"),
        ("unary", 1, "unary must be True or False, got 1"),
    ],
)
def test_grid_entries_are_checked(name, value, message):
    with pytest.raises(SymweakError, match=message):
        Config.preset("grid", **{name: value})


@pytest.mark.parametrize(
    "value, message",
    [
        (1.0, "shape_tol must be a number in \\[0, 1\\), got 1.0"),
        ("0.1", "shape_tol must be a number in \\[0, 1\\), got '0.1'"),
    ],
)
def test_shape_tol_is_checked(value, message):
    with pytest.raises(SymweakError, match=message):
        Config.preset("network", shape_tol=value)
    assert Config.preset("network", shape_tol=0.01).library.shape_tol == 0.01


def test_every_entry_names_the_methods_that_read_it():
    for name, (section, field) in ENTRIES.items():
        assert set(field.metadata["methods"]) <= {"grid", "network"}, name
        assert field.metadata["doc"], name
        assert section in {f.name for f in dataclasses.fields(Config)}, name
