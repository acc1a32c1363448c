"""The typed configuration: presets, overrides, validation, round trip."""

import dataclasses
from pathlib import Path

import pytest

from symweak import Config, SymweakError
from symweak.discover import ENTRIES, PRESETS
from symweak.discover._config import REMOVED, options_markdown

DOCS = Path(__file__).resolve().parents[1] / "docs"


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
    assert grid.tests.scales == net.tests.scales == ("cap", "axis")
    assert (grid.tests.scale_switch, net.tests.scale_switch) == (1.5, 3.0)
    assert PRESETS == {"grid": {}, "network": {"n_tests": 250, "scale_switch": 3.0}}


def test_overrides_flat_or_dotted_and_the_config_is_frozen():
    cfg = Config.preset("network", kernels=250, **{"training.tune_epochs": 10})
    assert cfg.surrogate.kernels == 250 and cfg.get("tune_epochs") == 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.surrogate.kernels = 64
    with pytest.raises(SymweakError, match=r"Unknown option `surrogate.tune_epochs`"):
        Config.preset("network", **{"surrogate.tune_epochs": 10})


def test_old_scale_names_are_the_new_ones():
    assert Config.preset("grid", scales=["hybrid", "auto"]).tests.scales == ("cap", "spectrum")
    assert Config.preset("grid", scales="axis").tests.scales == ("axis",)
    with pytest.raises(
        SymweakError,
        match=r"scales must be a non-empty list of 'cap', 'paper', 'axis', 'spectrum', got \('x',\)",
    ):
        Config.preset("grid", scales="x")


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
    "name, message",
    [
        ("shape_tol", r"Option `shape_tol` was removed: it was fixed at its default"),
        ("final_switch", r"Option `final_switch` was removed: pass scale_switch=\.\.\."),
        ("also_scales", r"Option `also_scales` was removed: pass scales=\(FIRST, \*ALSO\)"),
        ("tests.scale", r"Option `scale` was removed: pass scales="),
    ],
)
def test_removed_options_name_what_replaced_them(name, message):
    with pytest.raises(SymweakError, match=message):
        Config.preset("network", **{name: 0.01})


def test_options_are_few_grouped_and_documented():
    assert len(ENTRIES) <= 35
    groups = {section for section, _ in ENTRIES.values()}
    assert groups == {
        "data", "library", "tests", "selection", "surrogate", "training", "reporting"
    }  # fmt: skip
    assert not set(REMOVED) & set(ENTRIES)


def test_options_page_is_generated_from_the_entries():
    page = (DOCS / "options.md").read_text(encoding="utf-8")
    assert page == options_markdown(), "docs/options.md is stale: symweak options --markdown"
    assert "| `scales` | `('cap', 'axis')` | grid, network |" in page


def test_every_entry_names_the_methods_that_read_it():
    for name, (section, field) in ENTRIES.items():
        assert set(field.metadata["methods"]) <= {"grid", "network"}, name
        assert field.metadata["doc"], name
        assert section in {f.name for f in dataclasses.fields(Config)}, name
