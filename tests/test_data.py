import logging
from pathlib import Path

import numpy as np
import pytest

import symweak
from symweak import DataError, Observations
from symweak.data import Grid, observations_from_arrays, rms

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def grid_obs(nt=11, nx=16, complex_field=False):
    t = np.linspace(0.0, 1.0, nt)
    x = np.linspace(-1.0, 1.0, nx, endpoint=False)
    T, X = np.meshgrid(t, x, indexing="ij")
    u = np.sin(np.pi * X) * np.exp(-T)
    if complex_field:
        u = u + 1j * np.cos(np.pi * X)
    return Observations.from_grid(u, t=t, x=x), (t, x, u)


# ----------------------------------------------------------------- construction
def test_from_grid_keeps_grid_and_values():
    obs, (t, x, u) = grid_obs()
    assert len(obs) == t.size * x.size
    assert obs.is_full_grid and obs.grid.shape == (11, 16)
    assert obs.coord_names == ("t", "x") and obs.field_names == ("u",)
    np.testing.assert_array_equal(obs.to_grid("u"), u)
    np.testing.assert_array_equal(obs.coords["x"][:16], x)
    assert obs.bounds == {"t": (0.0, 1.0), "x": (-1.0, x[-1])}
    assert obs.ratio == 1.0


def test_scattered_contract_and_copy():
    t = np.array([0.0, 0.5, 1.0, 1.0])
    x = np.array([0.0, 0.1, 0.2, 0.3])
    u = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    obs = Observations(coords={"x": x, "t": t}, fields={"u": u})
    assert obs.coord_names == ("t", "x")  # time first
    assert len(obs) == 4 and not obs.is_full_grid
    assert obs.fields["u"].dtype == np.float64
    u[0] = 99.0
    assert obs.fields["u"][0] == 1.0  # a copy: the user's array is not shared


def test_sample_and_noise_follow_the_paper():
    obs, _ = grid_obs(nt=21, nx=40)
    s = obs.sample(0.1, seed=3)
    assert len(s) == round(0.1 * 21 * 40)
    assert s.grid == obs.grid and not s.is_full_grid
    np.testing.assert_array_equal(s.fields["u"], obs.fields["u"][s.grid_index])
    again = obs.sample(0.1, seed=3)
    np.testing.assert_array_equal(again.grid_index, s.grid_index)
    assert not np.array_equal(obs.sample(0.1, seed=4).grid_index, s.grid_index)
    noisy = s.add_noise(0.5, seed=1)
    np.testing.assert_array_equal(noisy.clean["u"], s.fields["u"])
    # ũ = u + σ rms(u) ε with ε from default_rng(seed).standard_normal
    eps = np.random.default_rng(1).standard_normal(len(s))
    np.testing.assert_allclose(noisy.fields["u"], s.fields["u"] + 0.5 * rms(s.fields["u"]) * eps)
    assert noisy.meta["noise"] == 0.5


def test_split_complex():
    obs, (_, _, u) = grid_obs(complex_field=True)
    split = obs.split_complex({"u": ("p", "q")})
    assert split.field_names == ("p", "q")
    np.testing.assert_array_equal(split.to_grid("p"), u.real)
    np.testing.assert_array_equal(split.to_grid("q"), u.imag)
    assert obs.split_complex().field_names == ("ure", "uim")


# ----------------------------------------------------------------- validation
T4 = np.array([0.0, 0.5, 1.0, 1.5])
X4 = np.array([0.0, 0.2, 0.1, 0.3])  # not on one line with T4
BAD = [
    (
        lambda: Observations({"t": T4, "x": X4}, {"u": np.array([1.0, np.nan, 2.0, np.inf])}),
        "Field 'u' has 2 non-finite value(s) (1 NaN, 1 inf); the first is at point 1 (t=0.5, x=0.2)",
    ),
    (
        lambda: Observations({"t": T4, "x": X4[:3]}, {"u": np.ones(4)}),
        "Arrays have different lengths: 'x' has 3 values but 't' has 4",
    ),
    (
        lambda: Observations({"t": T4, "x": np.zeros(4)}, {"u": np.ones(4)}),
        "Coordinate 'x' has zero extent: every point has x = 0.",
    ),
    (
        lambda: Observations({"time": T4, "x": X4}, {"u": np.ones(4)}),
        "Coordinate name 'time' is not a single letter. symweak writes derivatives as u_xx, so "
        "each coordinate must be one letter (t, x, y, z, ...). Map it with rename={'time': 't'} "
        "(Observations, load).",
    ),
    (
        lambda: Observations({"t": T4, "lon": X4}, {"u": np.ones(4)}),
        "Map it with rename={'lon': 'x'}",
    ),
    (
        lambda: Observations({"time": T4, "x": X4}, {"u": np.ones(4)}, rename={"Time": "t"}),
        "rename= names ['Time'], which are neither coordinates (['time', 'x']) nor fields (['u']).",
    ),
    (
        lambda: Observations({"s": T4, "x": X4}, {"u": np.ones(4)}),
        "No time coordinate: coordinates are ['s', 'x']",
    ),
    (
        lambda: Observations({"t": T4, "x": X4}, {"u_x": np.ones(4)}),
        "may contain only letters and digits",
    ),
    (
        lambda: Observations({"t": T4, "x": X4}, {}),
        "No fields given",
    ),
    (
        lambda: Observations({"t": T4, "x": X4}, {"u": np.array(["a", "b", "c", "d"])}),
        "Field 'u' is not numeric",
    ),
    (
        lambda: Observations.from_grid(np.ones((3, 4)), t=[0, 1, 1], x=[0, 1, 2, 3]),
        "Grid axis 't' is not strictly increasing: t[1] = 1 and t[2] = 1",
    ),
    (
        lambda: Observations.from_grid(np.ones((4, 3)), t=[0, 1, 2], x=[0, 1, 2, 3]),
        "Field 'u' has shape (4, 3) but the axes (t, x) give (3, 4). It looks transposed: pass u.T.",
    ),
    (
        lambda: Observations.from_grid(np.full((3, 4), np.nan), t=[0, 1, 2], x=[0, 1, 2, 3]),
        "Field 'u' has 12 non-finite value(s) (12 NaN, 0 inf); the first is at index (0, 0) (t=0, x=0)",
    ),
    (
        lambda: Observations({"t": T4, "x": X4}, {"u": np.ones(4)}).field("w"),
        "Unknown field 'w'; the observations have ['u'].",
    ),
    (
        lambda: Observations({"t": T4, "x": X4}, {"u": np.ones(4)}).coord("y"),
        "Unknown coordinate 'y'; the observations have ['t', 'x'].",
    ),
    (lambda: grid_obs()[0].sample(0.0), "Sampling ratio must be in (0, 1], got 0.0."),
    (lambda: grid_obs()[0].sample(0.5).sample(0.9), "asks for 158 points but only 88 are observed"),
    (lambda: grid_obs()[0].add_noise(-1), "Noise level must be >= 0, got -1."),
    (
        lambda: symweak.load("data.txt"),
        "Unsupported file type '.txt' for data.txt; supported: .npz, .mat, .h5, .hdf5, .nc, "
        ".csv, .parquet",
    ),
    (
        lambda: symweak.data.require_points(5, 20, "20 library terms"),
        "Only 5 observation(s) for 20 unknowns",
    ),
    (
        lambda: Observations({"t": T4, "x": X4}, {"u": np.array([1.0, 2.0, 1e300, 3.0])}),
        "Field 'u' has values up to 1e+300 in magnitude; symweak works in float64 and powers "
        "of such values overflow (limit 1e+100). Rescale it first (e.g. u / 1e+300)",
    ),
    (
        lambda: Observations({"t": T4, "x": X4 * 1e200}, {"u": np.ones(4)}),
        "Coordinate 'x' has values up to 3e+199 in magnitude",
    ),
    (
        lambda: Observations.from_grid(np.full((3, 4), -1e250), t=[0, 1, 2], x=[0, 1, 2, 3]),
        "Field 'u' has values up to 1e+250 in magnitude",
    ),
]


@pytest.mark.parametrize("make, message", BAD)
def test_bad_input_is_reported_before_anything_runs(make, message):
    with pytest.raises(DataError) as info:
        make()
    assert message in str(info.value)


# ----------------------------------------------------------------- files
@pytest.mark.parametrize("ext", [".npz", ".mat", ".h5", ".nc"])
@pytest.mark.parametrize("kind", ["grid", "scattered", "complex"])
def test_save_load_round_trip(tmp_path, ext, kind):
    obs, _ = grid_obs(complex_field=(kind == "complex"))
    if kind == "scattered":
        obs = obs.sample(0.3, seed=0).add_noise(0.1, seed=0)
    path = tmp_path / f"data{ext}"
    obs.save(path)
    back = symweak.load(path)
    assert back.coord_names == obs.coord_names and back.field_names == obs.field_names
    for name in obs.coord_names:
        np.testing.assert_array_equal(back.coords[name], obs.coords[name])
    for name in obs.field_names:
        np.testing.assert_array_equal(back.fields[name], obs.fields[name])
    assert back.is_full_grid == obs.is_full_grid
    if kind == "scattered":
        np.testing.assert_array_equal(back.grid_index, obs.grid_index)
        np.testing.assert_array_equal(back.clean["u"], obs.clean["u"])
        assert back.meta["noise"] == 0.1


def test_pdefind_layout_decided_by_shape(tmp_path, caplog):
    import scipy.io

    t = np.linspace(0, 1, 5)
    x = np.linspace(0, 1, 7)
    u = np.arange(35.0).reshape(7, 5)  # (x, t) as in PDE-FIND's burgers.mat
    scipy.io.savemat(tmp_path / "b.mat", {"t": t[:, None], "x": x[None, :], "usol": u + 1e-12j})
    with caplog.at_level(logging.INFO, logger="symweak.data"):
        obs = symweak.load(tmp_path / "b.mat")
    assert obs.meta["layout"] == "u (7, 5) read as (x, t)"
    assert "read as (x, t)" in caplog.text
    np.testing.assert_array_equal(obs.to_grid("u"), u.T)
    assert obs.fields["u"].dtype == np.float64
    assert any("imaginary part is round-off" in n for n in obs.meta["notes"])
    kept = symweak.load(tmp_path / "b.mat", keep_complex=True)
    assert kept.fields["u"].dtype == np.complex128


def test_ambiguous_layout_needs_a_hint():
    t = np.linspace(0, 1, 6)
    x = np.linspace(0, 1, 6)
    u = np.arange(36.0).reshape(6, 6)
    with pytest.raises(DataError, match="ambiguous; pass layout='t,x'"):
        observations_from_arrays({"t": t, "x": x, "usol": u})
    obs = observations_from_arrays({"t": t, "x": x, "usol": u}, layout="x,t")
    np.testing.assert_array_equal(obs.to_grid("u"), u.T)


def test_xarray_objects():
    xr = pytest.importorskip("xarray")
    t = np.linspace(0, 1, 4)
    x = np.linspace(0, 2, 5)
    u = np.random.default_rng(0).standard_normal((5, 4))
    da = xr.DataArray(u, dims=("x", "t"), coords={"x": x, "t": t}, name="w")
    obs = symweak.load(da)
    assert obs.field_names == ("w",) and obs.coord_names == ("t", "x")
    np.testing.assert_array_equal(obs.to_grid("w"), u.T)
    ds = xr.Dataset({"u": (("time", "x"), u.T)}, coords={"time": t, "x": x})
    with pytest.raises(DataError, match="rename the time dimension"):
        symweak.load(ds)
    assert symweak.load(ds, rename={"time": "t"}).field_names == ("u",)


def test_grid_helpers():
    g = Grid({"t": np.array([0.0, 1.0, 2.0]), "x": np.array([0.0, 0.5, 2.0])})
    assert g.shape == (3, 3) and g.size == 9
    assert g.is_uniform("t") and not g.is_uniform("x")
    assert g.spacing("t") == 1.0


@pytest.mark.skipif(not (SHARED / "burgers.mat").exists(), reason="../shared/data not present")
def test_classic_files_load():
    obs = symweak.load(SHARED / "burgers.mat")
    assert obs.grid.shape == (101, 256) and obs.meta["layout"] == "u (256, 101) read as (x, t)"
    nls = symweak.load(SHARED / "nls.mat")
    assert nls.grid.shape == (501, 512) and nls.is_complex
    ks = symweak.load(SHARED / "kuramoto_sivishinky.mat")
    assert ks.grid.shape == (251, 1024)


def test_truncated_npz_is_a_clear_error(tmp_path):
    obs = Observations({"t": T4, "x": X4}, {"u": np.arange(4.0)})
    path = tmp_path / "data.npz"
    obs.save(path)
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(DataError, match=r"data.npz: not a readable .npz file \(BadZipFile: "):
        symweak.load(path)
    np.save(tmp_path / "one.npy", np.arange(3.0))
    (tmp_path / "one.npz").write_bytes((tmp_path / "one.npy").read_bytes())
    with pytest.raises(DataError, match=r"^one.npz holds one unnamed array, not named arrays"):
        symweak.load(tmp_path / "one.npz")


def test_saving_is_atomic_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    obs = Observations({"t": T4, "x": X4}, {"u": np.arange(4.0)})
    path = tmp_path / "data.npz"
    obs.save(path)
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        Observations({"t": T4, "x": X4}, {"u": np.ones(4)}).save(path)
    assert path.read_bytes() == before  # the old file is whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npz"]


# ----------------------------------------------------------------- lattices in point columns
def _columns(obs, order):
    return {n: v[order] for n, v in obs.coords.items()}, {
        n: v[order] for n, v in obs.fields.items()
    }


def test_point_columns_of_a_full_grid_are_a_full_grid():
    full, _ = grid_obs()
    order = np.random.default_rng(0).permutation(len(full))
    coords, fields = _columns(full, order)
    obs = Observations(coords, fields)
    assert obs.is_full_grid and obs.lattice_found
    assert obs.grid == full.grid
    np.testing.assert_array_equal(obs.to_grid("u"), full.to_grid("u"))
    # the user's columns are kept as given, in their order
    np.testing.assert_array_equal(obs.coords["x"], coords["x"])
    np.testing.assert_array_equal(obs.fields["u"], fields["u"])
    shape = " × ".join(map(str, full.grid.shape))
    assert repr(obs).startswith(f"<Observations {len(full)} points on a {shape} grid (complete); ")


def test_point_columns_of_a_sample_keep_its_grid():
    full, _ = grid_obs()
    part = full.sample(0.3, seed=1)
    order = np.random.default_rng(1).permutation(len(part))
    obs = Observations(*_columns(part, order))
    assert obs.grid == full.grid and not obs.is_full_grid
    np.testing.assert_array_equal(obs.grid_index, part.grid_index[order])
    assert "53 points on a 11 × 16 grid (30.1% filled); t in [0, 1]" in obs.describe()


def test_lattice_values_equal_within_round_off_and_random_points_stay_scattered():
    full, _ = grid_obs()
    coords = {n: v * (1 + 1e-13 * np.cos(np.arange(v.size))) for n, v in full.coords.items()}
    obs = Observations(coords, dict(full.fields))
    assert obs.is_full_grid
    np.testing.assert_allclose(obs.grid.axes["x"], full.grid.axes["x"], rtol=1e-12)
    rng = np.random.default_rng(2)
    scattered = Observations({"t": rng.uniform(0, 1, 500), "x": rng.uniform(0, 1, 500)},
                             {"u": rng.normal(size=500)})  # fmt: skip
    assert scattered.grid is None and "scattered" in scattered.describe()


# ----------------------------------------------------------------- tables (CSV, Parquet)
@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_tables_round_trip_and_find_their_grid(tmp_path, ext):
    full, _ = grid_obs()
    part = full.sample(0.5, seed=3)
    for obs in (full, part):
        path = tmp_path / f"data{ext}"
        obs.save(path)
        back = symweak.load(path)
        for name in ("t", "x"):
            np.testing.assert_array_equal(back.coords[name], obs.coords[name])
        np.testing.assert_array_equal(back.fields["u"], obs.fields["u"])
        assert back.grid == full.grid and back.is_full_grid == obs.is_full_grid
        assert back.meta["source"] == f"data{ext}"


def test_csv_with_other_column_names(tmp_path, caplog):
    path = tmp_path / "probe.csv"
    path.write_text("time,X,u,station\n0,0,1.5,a\n0,1,2.5,a\n1,0,1.0,b\n1,1,2.0,b\n")
    with pytest.raises(
        DataError,
        match=r"^probe.csv: no time column `t` \(columns: \['time', 'X', 'u', 'station'\]\)\. "
        r"Name the coordinates with coords='time,X' \(time first; renamed t, x, …\) or map them "
        r"with rename=\{'time': 't', 'X': 'x'\} \(on the command line: --coords time,X or "
        r"--rename time=t,X=x\)\.$",
    ):
        symweak.load(path)
    other = tmp_path / "sensors.csv"
    other.write_text("time_s,position_mm,T_K\n0,0,300\n0,1,301\n1,0,300.5\n1,1,301.5\n")
    with pytest.raises(
        DataError, match=r"--coords time_s,position_mm or --rename time_s=t,position_mm=x\)\.$"
    ):
        symweak.load(other)
    own = symweak.load(other, coords="time_s,position_mm", rename={"T_K": "T"})  # own names
    assert own.coord_names == ("t", "x") and own.field_names == ("T",)
    np.testing.assert_array_equal(own.coords["x"], [0, 1, 0, 1])
    with caplog.at_level("INFO", logger="symweak"):
        obs = symweak.load(path, rename={"time": "t", "X": "x"})
    assert obs.field_names == ("u",) and obs.is_full_grid
    np.testing.assert_array_equal(obs.to_grid("u"), [[1.5, 2.5], [1.0, 2.0]])
    assert "probe.csv: columns ['station'] are not used" in caplog.text
    with pytest.raises(DataError, match=r"rename= names column\(s\) \['Time'\]"):
        symweak.load(path, rename={"Time": "t"})


@pytest.mark.parametrize(
    "body",
    [
        "t;x;u\n0;0;1.5\n0;1;2.5\n1;0;1.0\n1;1;2.0\n",  # semicolons
        "t;x;u\n0;0;1,5\n0;1;2,5\n1;0;1,0\n1;1;2,0\n",  # and decimal commas (European locale)
        "t\tx\tu\n0\t0\t1.5\n0\t1\t2.5\n1\t0\t1.0\n1\t1\t2.0\n",  # tabs
    ],
)
def test_csv_separated_by_semicolons_or_tabs(tmp_path, body):
    path = tmp_path / "sheet.csv"
    path.write_text(body)
    obs = symweak.load(path)
    assert obs.coord_names == ("t", "x") and obs.field_names == ("u",)
    np.testing.assert_array_equal(obs.to_grid("u"), [[1.5, 2.5], [1.0, 2.0]])


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "t,x,u\n0,0,1\n0,1,abc\n1,0,2\n",
            "bad.csv: column 'u' holds 'abc', not a number on line 3 (data row 2; 1 such value(s) "
            "in the column). Fill or drop those rows first.",
        ),
        ("t,x,u\n0,0,1\n0,1,\n1,0,2\n", "bad.csv: column 'u' is empty on line 3 (data row 2;"),
        ("t,x,u\n", "bad.csv: the table has a header but no rows."),
        ("t,x,u,u\n0,0,1,1\n", "bad.csv: column name(s) ['u'] appear twice; rename them."),
        ("", "bad.csv: not a readable .csv table (EmptyDataError: "),
    ],
)
def test_bad_tables_name_the_file_column_and_line(tmp_path, body, message):
    path = tmp_path / "bad.csv"
    path.write_text(body)
    with pytest.raises(DataError) as info:
        symweak.load(path)
    assert message in str(info.value)


def test_tables_refuse_complex_fields(tmp_path):
    obs, _ = grid_obs(complex_field=True)
    with pytest.raises(
        DataError, match=r"Tables hold real columns; the field\(s\) \['u'\] are complex"
    ):
        obs.save(tmp_path / "c.csv")
    assert list(tmp_path.iterdir()) == []


def test_rename_maps_names_and_keeps_values():
    obs = Observations({"time": T4, "X": X4}, {"h": np.arange(4.0)}, rename={"time": "t", "X": "x"})
    assert obs.coord_names == ("t", "x") and obs.field_names == ("h",)
    np.testing.assert_array_equal(obs.coords["t"], T4)


def test_a_grid_index_that_repeats_a_point_is_refused():
    obs, _ = grid_obs(nt=5, nx=4)
    s = obs.sample(0.5, seed=0)
    idx = s.grid_index.copy()
    coords = {n: v.copy() for n, v in s.coords.items()}
    ok = Observations(coords, dict(s.fields), grid=s.grid, grid_index=idx)
    np.testing.assert_array_equal(ok.grid_index, idx)
    idx[1] = idx[0]
    with pytest.raises(DataError, match="grid_index repeats a grid point"):
        Observations(coords, dict(s.fields), grid=s.grid, grid_index=idx)
