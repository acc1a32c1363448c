"""A corpus of bad inputs a new user meets, each with the exact message it must get, before
any training starts; and the odd-but-valid inputs that must be accepted unchanged.

Message tables drive the tests (as in test_data.py and test_grammar.py): a case is a label,
a function that builds the input and hands it to symweak, the error class, and the text the
message must contain.
"""

from __future__ import annotations

import logging
import os
import threading

import numpy as np
import pytest

import symweak
from symweak import DataError, GrammarError, Observations, SymweakError
from symweak.discover._problem import Problem
from symweak.surrogate import Surrogate

RNG = np.random.default_rng(0)
N = 300
T = RNG.uniform(0.0, 1.0, N)
X = RNG.uniform(0.0, 1.0, N)
U = np.sin(6.0 * X - 3.0 * T)


def _heat():
    """A result to simulate (u_t = 0.1 u_xx)."""
    from symweak.discover import Discovery
    from symweak.ir import System

    return Discovery(
        System([symweak.parse_equation("u_t = 0.1*u_xx")]), coords=("t", "x"), fields=("u",)
    )


def _means() -> Observations:
    return symweak.data.scratch_assay(20_000, replicates=False)


def obs(**fields) -> Observations:
    return Observations({"t": T, "x": X}, fields or {"u": U})


def discover(data, **kw):
    return symweak.discover(data, **{"ops": "+,-,*", "lhs": "u_t", "progress": False, **kw})


def grid(values, **axes):
    return Observations.from_grid(values, **axes)


G34 = {"t": [0.0, 1.0, 2.0], "x": [0.0, 1.0, 2.0, 3.0]}

# ----------------------------------------------------------------- observations in memory
IN_MEMORY = [
    (
        "points on one line",
        lambda: Observations({"t": T, "x": 2.0 * T + 1.0}, {"u": U}),
        DataError,
        "All 300 points lie on one line in (t, x) (x = 2 t + 1): a PDE in t, x needs points "
        "spread over a region of that space, not along a line (e.g. one probe moving at "
        "constant speed). Add points off it.",
    ),
    (
        "points on one plane in 2-D",
        lambda: Observations({"t": T, "x": X, "y": T + X}, {"u": U}),
        DataError,
        "All 300 points lie on one plane in (t, x, y): a PDE in t, x, y needs points spread",
    ),
    (
        "boolean field",
        lambda: obs(u=U > 0),
        DataError,
        "Field 'u' holds booleans (True/False), not measurements; pass numbers "
        "(u.astype(float) if 0 and 1 are what you mean).",
    ),
    (
        "boolean coordinate",
        lambda: Observations({"t": T, "x": X > 0.5}, {"u": U}),
        DataError,
        "Coordinate 'x' holds booleans (True/False)",
    ),
    (
        "field of 1e-200",
        lambda: obs(u=U * 1e-200),
        DataError,
        "Field 'u' has values only up to 1e-200 in magnitude; symweak works in float64 and "
        "products of such values underflow to 0 (limit 1e-100). Rescale it first "
        "(e.g. u * 1e+200); the discovered coefficients then refer to the rescaled variable.",
    ),
    (
        "coordinate spanning 1e-200",
        lambda: Observations({"t": T * 1e-200, "x": X}, {"u": U}),
        DataError,
        "Coordinate 't' spans only 9.97e-201; symweak works in float64 and powers of such "
        "spacings underflow (limit 1e-100). Rescale it first (e.g. t * 1e+200)",
    ),
    (
        "coordinate with a huge offset",
        lambda: Observations({"t": 1e9 + T * 1e-6, "x": X}, {"u": U}),
        DataError,
        "Coordinate 't' spans 9.54e-07 around 1e+09: float64 keeps only about 1 digit(s) of "
        "the differences between points. Subtract an offset first (e.g. t - t.min()); the "
        "equation does not change.",
    ),
    (
        "time as Unix seconds on the network path",
        lambda: symweak.discover(
            Observations({"t": 1.7e9 + 600 * T, "x": X}, {"u": U}),
            ops="+,-,*",
            method="network",
            progress=False,
        ),
        DataError,
        "Coordinate 't' spans 598 around 1.7e+09: the network method trains in float32, which "
        "places t there only to within 128 (more than 0.1% of its span), so nearby values "
        "merge. Subtract an offset first (e.g. t - t.min()); the equation does not change.",
    ),
    (
        "a surrogate of time as Unix seconds",
        lambda: Surrogate.for_observations(Observations({"t": 1.7e9 + 600 * T, "x": X}, {"u": U})),
        DataError,
        "Coordinate 't' spans 598 around 1.7e+09: the network method trains in float32",
    ),
    (
        "complex coordinate",
        lambda: Observations({"t": T + 0j, "x": X}, {"u": U}),
        DataError,
        "Coordinate 't' is complex; coordinates must be real.",
    ),
    (
        "coordinate as a column vector",
        lambda: Observations({"t": T[:, None], "x": X}, {"u": U}),
        DataError,
        "Coordinate 't' has shape (300, 1); scattered observations need 1-D arrays of equal "
        "length (use Observations.from_grid for gridded data).",
    ),
    (
        "scalar coordinate",
        lambda: Observations({"t": 1.0, "x": X}, {"u": U}),
        DataError,
        "Coordinate 't' has shape (); scattered observations need 1-D arrays",
    ),
    (
        "field as a column vector",
        lambda: obs(u=U[:, None]),
        DataError,
        "Field 'u' has shape (300, 1); scattered observations need 1-D arrays, one value per point",
    ),
    (
        "empty arrays",
        lambda: Observations({"t": [], "x": []}, {"u": []}),
        DataError,
        "No observations: the arrays are empty.",
    ),
    (
        "a single point",
        lambda: Observations({"t": [0.5], "x": [0.1]}, {"u": [1.0]}),
        DataError,
        "Coordinate 't' has zero extent: every point has t = 0.5.",
    ),
    (
        "field of Python objects",
        lambda: obs(u=np.array(list(U), dtype=object)),
        DataError,
        "Field 'u' is not numeric (dtype object); pass numbers.",
    ),
    (
        "numbers written as text",
        lambda: obs(u=[f"{v:.3f}" for v in U]),
        DataError,
        "Field 'u' is not numeric (dtype <U6); pass numbers.",
    ),
    (
        "timestamps as the time coordinate",
        lambda: Observations({"t": np.arange(N).astype("datetime64[s]"), "x": X}, {"u": U}),
        DataError,
        "Coordinate 't' is not numeric (dtype datetime64[s]); pass numbers.",
    ),
    (
        "coordinates as a list",
        lambda: Observations([T, X], {"u": U}),
        DataError,
        "Observations(coords=..., fields=...) take mappings of names to arrays, e.g. "
        "Observations(coords={'t': t, 'x': x}, fields={'u': u}).",
    ),
    (
        "fields as a bare array",
        lambda: Observations({"t": T, "x": X}, U),
        DataError,
        "take mappings of names to arrays",
    ),
    (
        "a field named like a coordinate",
        lambda: Observations({"t": T, "x": X}, {"x": U}),
        DataError,
        "['x'] is used both as a coordinate and as a field; rename one.",
    ),
    (
        "an infinite coordinate",
        lambda: Observations({"t": T, "x": np.r_[X[:-1], np.inf]}, {"u": U}),
        DataError,
        "Coordinate 'x' has 1 non-finite value(s) (0 NaN, 1 inf); the first is at point 299",
    ),
    (
        "NaN in the clean values only",
        lambda: Observations({"t": T, "x": X}, {"u": U}, clean={"u": np.r_[np.nan, U[1:]]}),
        DataError,
        "Clean field 'u' has 1 non-finite value(s) (1 NaN, 0 inf); the first is at point 0",
    ),
    (
        "grid axis with NaN",
        lambda: grid(np.ones((3, 4)), t=[0.0, np.nan, 2.0], x=G34["x"]),
        DataError,
        "Grid axis 't' has 1 non-finite value(s) (1 NaN, 0 inf)",
    ),
    (
        "grid axis given as a row matrix",
        lambda: grid(np.ones((3, 4)), t=[[0.0, 1.0, 2.0]], x=G34["x"]),
        DataError,
        "Grid axis 't' has shape (1, 3); an axis is a 1-D array of the t values of the grid "
        "(e.g. t=np.linspace(0, 1, 101)).",
    ),
    (
        "grid with one place",
        lambda: grid(np.ones((3, 1)), t=G34["t"], x=[0.0]),
        DataError,
        "Grid axis 'x' has 1 value(s); it needs at least 2.",
    ),
    (
        "grid with an extra dimension",
        lambda: grid(np.ones((3, 4, 2)), **G34),
        DataError,
        "Field 'u' has shape (3, 4, 2) but the axes (t, x) give (3, 4).",
    ),
    (
        "sampling ratio NaN",
        lambda: obs().sample(float("nan")),
        DataError,
        "Sampling ratio must be a number in (0, 1], got nan.",
    ),
    (
        "sampling seed as text",
        lambda: obs().sample(0.5, seed="a"),
        DataError,
        "seed must be an integer, got 'a'.",
    ),
    (
        "negative noise seed",
        lambda: obs().add_noise(0.1, seed=-3),
        DataError,
        "seed must be a non-negative integer below 2**63, got -3; use e.g. seed=3.",
    ),
    ("noise NaN", lambda: obs().add_noise(float("nan")), DataError, "Noise level must be a finite"),
    (
        "noise on a field that is zero everywhere",
        lambda: obs(u=np.zeros(N)).add_noise(0.1),
        DataError,
        "Field 'u' is zero everywhere: noise relative to its root mean square (sigma_NR) would "
        "be zero too. Add noise of a size of your own (u + s * rng.standard_normal(n)), or "
        "check that 'u' is the right field.",
    ),
    (
        "a shipped assay that is not shipped",
        lambda: symweak.data.scratch_assay(5000),
        DataError,
        "No scratch assay with 5000 cells per well is shipped; choose one of 10000, 20000.",
    ),
    (
        "an axis both periodic and mirrored",
        lambda: _heat().simulate(_means(), periodic=["x"], mirror=["x"]),
        DataError,
        "An axis cannot be both periodic and mirrored: ['x'].",
    ),
    (
        "time mirrored",
        lambda: _heat().simulate(_means(), mirror=["t"]),
        DataError,
        "mirror names 't'; the data's space axes are ['x'].",
    ),
    (
        "a coordinate listed twice in symmetric:",
        lambda: symweak.parse_constraints("symmetric: x, x", coords="t,x", fields=["u"]),
        GrammarError,
        "`x` is listed twice in `symmetric:`.",
    ),
    (
        "cells per well as text",
        lambda: symweak.data.scratch_assay("10000"),
        DataError,
        "No scratch assay with '10000' cells per well is shipped; choose one of 10000, 20000.",
    ),
    (
        "five snapshots for a fifth time derivative",
        lambda: discover(symweak.data.scratch_assay(10_000), lhs="u_ttttt"),
        DataError,
        "The data have 5 distinct time(s) (0, 12, 24, 36, 48); `u_ttttt` needs the field at 8 "
        "or more times (weak-form integrals over t need points along t).",
    ),
    (
        "noise inf",
        lambda: obs().add_noise(float("inf")),
        DataError,
        "Noise level must be a finite number, got inf.",
    ),
]

# ----------------------------------------------------------------- discover() requests
REQUESTS = [
    (
        "observations at two times",
        lambda: discover(Observations({"t": np.repeat([0.0, 1.0], N // 2), "x": X}, {"u": U})),
        DataError,
        "The data have 2 distinct time(s) (0, 1); `u_t` needs the field at 4 or more times "
        "(weak-form integrals over t need points along t). Add observations at more times.",
    ),
    (
        "second time derivative from four times",
        lambda: discover(
            Observations({"t": np.repeat([0.0, 1.0, 2.0, 3.0], N // 4), "x": X}, {"u": U}),
            lhs="u_tt",
        ),
        DataError,
        "The data have 4 distinct time(s) (0, 1, 2, 3); `u_tt` needs the field at 5 or more",
    ),
    (
        "a field that is zero everywhere",
        lambda: discover(obs(u=np.zeros(N))),
        DataError,
        "Field 'u' is constant (every value is 0): there is no dynamics to identify for `u_t`.",
    ),
    ("seed 1.5", lambda: discover(obs(), seed=1.5), SymweakError, "seed must be an integer"),
    (
        "seed 2**70",
        lambda: discover(obs(), seed=2**70),
        SymweakError,
        "seed must be a non-negative integer below 2**63, got 1180591620717411303424",
    ),
    ("seed True", lambda: discover(obs(), seed=True), SymweakError, "got True."),
    (
        "progress as text",
        lambda: discover(obs(), progress="yes"),
        SymweakError,
        "progress must be True or False, got 'yes'.",
    ),
    (
        "empty operator list",
        lambda: discover(obs(), ops=""),
        GrammarError,
        'The operator list is empty; give at least one operator, e.g. "+,-,*,sin".',
    ),
    (
        "operators as a number",
        lambda: discover(obs(), ops=5),
        GrammarError,
        "Expected text to parse, got int.",
    ),
    ("empty lhs", lambda: discover(obs(), lhs=""), GrammarError, "The expression is empty."),
    (
        "misspelt option",
        lambda: discover(obs(), epochz=3),
        SymweakError,
        "Unknown option `epochz`. Known options: activation,",
    ),
    (
        "constraint without a colon",
        lambda: discover(obs(), constraints="keep("),
        GrammarError,
        "A statement needs `:` after its keyword, e.g. `lhs: u_t`.",
    ),
    (
        "a term kept and forbidden",
        lambda: discover(obs(), constraints="keep: u_xx\nforbid: u_xx"),
        GrammarError,
        "`u_xx` is both in `forbid:` and in `keep:`; remove it from one of the two.",
    ),
    (
        "terms added and forbidden",
        lambda: discover(obs(), constraints="add: u_xx, u^3\nforbid: u^3, u_xx"),
        GrammarError,
        "`u_xx`, `u^3` are both in `forbid:` and in `add:`; remove them from one of the two.",
    ),
    (
        "lhs= and lhs: differ",
        lambda: discover(obs(), lhs="u_t", constraints="lhs: u_tt"),
        SymweakError,
        "lhs='u_t' and the constraints' `lhs: u_tt` differ; give the left-hand side once "
        "(either place is enough).",
    ),
    (
        "symmetric in time",
        lambda: discover(obs(), constraints="symmetric: t"),
        GrammarError,
        "`symmetric:` takes space coordinates (here: x); not t (time has a direction).",
    ),
    (
        "too few points",
        lambda: discover(Observations({"t": T[:15], "x": X[:15]}, {"u": U[:15]})),
        DataError,
        "Only 15 observations for a PDE in t, x: the network method needs at least 60 (10 per "
        "coefficient of a quadratic in the coordinates",
    ),
    (
        "no data",
        lambda: discover(None),
        DataError,
        "discover() takes Observations, a file path or an xarray object, got NoneType.",
    ),
]


@pytest.mark.parametrize(
    "make, error, message",
    [pytest.param(*case[1:], id=case[0]) for case in IN_MEMORY + REQUESTS],
)
def test_bad_input_gets_its_message_before_training(make, error, message):
    with pytest.raises(error) as info:
        make()
    assert message in str(info.value)


# ----------------------------------------------------------------- files
def _write(path, content: bytes | str):
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode) as fh:
        fh.write(content)
    return path


FILES = [
    ("a directory", lambda d: d, {}, "is a directory; give the data file inside it."),
    (
        "a directory named like a data file",
        lambda d: (d / "run.npz").mkdir() or d / "run.npz",
        {},
        "run.npz is a directory; give the data file inside it.",
    ),
    (
        "an empty .npz",
        lambda d: np.savez(d / "e.npz") or d / "e.npz",
        {},
        "e.npz: no time coordinate; expected an array named 't' (or 'tt'). Arrays found: [].",
    ),
    (
        "an .npz of pickled objects",
        lambda d: np.savez(d / "o.npz", t=np.array([1, "a"], dtype=object)) or d / "o.npz",
        {},
        "o.npz: not a readable .npz file (ValueError: Object arrays cannot be loaded when "
        "allow_pickle=False)",
    ),
    (
        "an .npz with other names",
        lambda d: np.savez(d / "k.npz", a=T, b=X) or d / "k.npz",
        {},
        "k.npz: no time coordinate; expected an array named 't' (or 'tt'). Arrays found: "
        "['a', 'b'].",
    ),
    (
        "text named .h5",
        lambda d: _write(d / "f.h5", "not hdf5"),
        {},
        "f.h5: not a readable HDF5 file (",
    ),
    (
        "garbage named .parquet",
        lambda d: _write(d / "f.parquet", b"PAR1garbage"),
        {},
        "f.parquet: not a readable .parquet table (ArrowInvalid:",
    ),
    (
        "garbage named .mat",
        lambda d: _write(d / "f.mat", b"garbage"),
        {},
        "f.mat: not a readable MATLAB file (",
    ),
    (
        "garbage named .nc",
        lambda d: _write(d / "f.nc", b"garbage"),
        {},
        "f.nc: not a readable netCDF file (",
    ),
    (
        "a table of coordinates only",
        lambda d: _write(d / "c.csv", "t,x\n0,0\n1,1\n"),
        {},
        "c.csv: no field column: the columns ['t', 'x'] are all coordinates or not numeric. "
        "Add the measured values as a column, or name it with fields='u'.",
    ),
    (
        "a Latin-1 table",
        lambda d: _write(d / "l.csv", "t,x,u\n0,0,1\n1,1,\xe9\n".encode("latin-1")),
        {},
        "l.csv: not UTF-8 text (it holds byte 0xe9); save it as UTF-8, or pass the file's "
        "encoding, e.g. encoding='latin-1'.",
    ),
    (
        "an unknown encoding",
        lambda d: _write(d / "l.csv", "t,x,u\n0,0,1\n"),
        {"encoding": "klingon"},
        "l.csv: unknown encoding 'klingon'.",
    ),
    (
        "a file over the size limit",
        lambda d: np.savez(d / "big.npz", t=T, x=X, u=U) or d / "big.npz",
        {"max_bytes": 1000},
        "KiB; symweak reads a whole file into memory and refuses files over "
        "1000 bytes (max_bytes). Subsample it first (e.g. a fraction of the rows), or pass "
        "max_bytes=None to load it anyway",
    ),
    (
        "an encoding for an .npz",
        lambda d: np.savez(d / "n.npz", t=T, x=X, u=U) or d / "n.npz",
        {"encoding": "latin-1"},
        "n.npz: load() option(s) ['encoding'] do not apply to .npz files",
    ),
]


@pytest.mark.parametrize(
    "make, options, message", [pytest.param(*case[1:], id=case[0]) for case in FILES]
)
def test_bad_files_name_the_file_and_the_fix(tmp_path, make, options, message):
    path = make(tmp_path)
    with pytest.raises(DataError) as info:
        symweak.load(path, **options)
    assert message in str(info.value)


# ----------------------------------------------------------------- odd but valid
def test_mixed_dtypes_are_widened_exactly():
    t = T.astype(np.float32)
    x = (X * 1000).astype(np.int16)
    u = U.astype(np.float16)
    got = Observations({"t": t, "x": x}, {"u": u})
    assert all(a.dtype == np.float64 for a in (*got.coords.values(), got.fields["u"]))
    np.testing.assert_array_equal(got.coords["t"], t.astype(np.float64))
    np.testing.assert_array_equal(got.coords["x"], x.astype(np.float64))
    np.testing.assert_array_equal(got.fields["u"], u.astype(np.float64))


@pytest.mark.parametrize("ext", [".NPZ", ".MAT"])
def test_paths_that_are_not_utf8_and_upper_case_extensions(tmp_path, ext):
    raw = os.fsencode(str(tmp_path)) + b"/caf\xe9" + ext.encode()  # Latin-1 é: not UTF-8
    name = os.fsdecode(raw)
    obs().save(name)
    for source in (name, raw):
        back = symweak.load(source)
        np.testing.assert_array_equal(back.fields["u"], U)
    assert sorted(os.listdir(os.fsencode(str(tmp_path)))) == [b"caf\xe9" + ext.encode()]


def test_latin1_table_with_its_encoding(tmp_path):
    path = _write(tmp_path / "station.csv", "t,x,u,note\n0,0,1,\xe9t\xe9\n1,1,2,\n2,0.5,3,\n")
    (tmp_path / "station.csv").write_bytes(path.read_text().encode("latin-1"))
    got = symweak.load(tmp_path / "station.csv", encoding="latin-1")
    np.testing.assert_array_equal(got.fields["u"], [1.0, 2.0, 3.0])
    assert got.meta["unused_columns"] == ["note"]


def test_no_size_limit_when_asked(tmp_path):
    np.savez(tmp_path / "big.npz", t=T, x=X, u=U)
    got = symweak.load(tmp_path / "big.npz", max_bytes=None)
    np.testing.assert_array_equal(got.fields["u"], U)


def test_concurrent_saves_to_one_file_leave_one_whole_version(tmp_path):
    path = tmp_path / "run.npz"
    versions = [obs(u=U + k) for k in range(4)]
    errors = []

    def writer(k):
        try:
            for _ in range(10):
                versions[k].save(path)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert [p.name for p in tmp_path.iterdir()] == ["run.npz"]  # no temporary file left
    got = symweak.load(path).fields["u"]
    assert any(np.array_equal(got, U + k) for k in range(4))


def test_complex_field_with_real_lhs_is_split_with_a_note(caplog):
    data = obs(u=U * (1 + 0.5j))
    with caplog.at_level(logging.WARNING, logger="symweak"):
        problem = Problem.build(data, "+,-,*", "u_t", 0)
    assert problem.obs.field_names == ("ure", "uim")
    assert [t.short() for t in problem.lhs] == ["ure_t", "uim_t"]
    assert (
        "symweak: complex field(s) split into real and imaginary parts (u = ure + i uim) with "
        "the U(1) hypothesis; left-hand sides u_t -> ure_t, uim_t" in caplog.text
    )


def test_coefficients_take_short_names_and_say_which_exist():
    from symweak.discover import Discovery
    from symweak.ir import System

    res = Discovery(
        System([symweak.parse_equation("u_t = -0.5*d_x(u^2) + 0.1*u_xx")]),
        coords=("t", "x"),
        fields=("u",),
    )
    assert res.coefficients["u_xx"] == 0.1 and res.coefficients["d_x(u^2)"] == -0.5
    assert "u_xx" in res.coefficients and res.coefficients.get("u") is None
    with pytest.raises(KeyError, match=r"'u' is not a term of this equation; its terms are "
                       r"d_x\(u\^2\), u_xx\."):  # fmt: skip
        res.coefficients["u"]


def test_cli_refuses_what_the_api_refuses_before_any_work(tmp_path, capsys):
    from symweak.cli import main

    assert main(["bench", "data", "burgers", "--ratio", "2", "--out", str(tmp_path / "a.npz")]) == 2
    assert "Sampling ratio must be in (0, 1], got 2.0. Use 0.1 for 10 %." in capsys.readouterr().err
    assert (
        main(["bench", "data", "burgers", "--noise", "-1", "--out", str(tmp_path / "b.npz")]) == 2
    )
    assert "Noise level must be >= 0, got -1.0. Use 0.2 for 20 %." in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    missing = tmp_path / "no" / "run.json"
    assert main(["discover", str(tmp_path / "absent.npz"), "--out", str(missing)]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"symweak: error: Cannot save to {missing}: the folder {missing.parent} does not exist. "
        "Create it or choose another --out."
    )


def test_cli_constraints_are_text_or_a_file(tmp_path):
    from symweak.cli import _constraint_text

    spec = tmp_path / "spec.txt"
    spec.write_text("forbid: u\n", encoding="utf-8")
    assert _constraint_text(str(spec)) == "forbid: u\n"
    assert _constraint_text("forbid: u") == "forbid: u"
    assert _constraint_text(None) is None
    with pytest.raises(
        SymweakError, match=r"--constraints names nothere\.txt, which does not exist"
    ):
        _constraint_text("nothere.txt")


def test_zoo_rows_show_four_significant_digits():
    from symweak._bench_command import display_equation

    stored = "u_t = -0.30003706971504884*u + 0.123456789*u_xx\nv_t = 2.000049*u"
    assert display_equation(stored) == "u_t = -0.3*u + 0.1235*u_xx\nv_t = 2*u"
    assert display_equation("not an equation") == "not an equation"


def test_forcing_the_grid_method_on_six_snapshots_warns(caplog):
    from symweak.discover._api import warn_coarse_grid

    x = np.linspace(0, 1, 64)
    t = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    six = Observations.from_grid(np.sin(x[None] - t[:, None]), t=t, x=x)
    with caplog.at_level(logging.WARNING, logger="symweak"):
        text = warn_coarse_grid(six)
    assert text == (
        "symweak: method='grid' on a lattice whose t axis is too coarse or uneven to integrate "
        "test functions on (6 points: each support spans a handful of nodes); expect a poor "
        "equation. method='auto' takes the network method for these data."
    )
    assert text in caplog.text
    assert warn_coarse_grid(obs()) is None  # scattered points: the grid method refuses them


def test_ctrl_c_during_the_final_fit_is_held_until_it_ends(caplog):
    import signal

    from symweak._trainer import deferred_interrupts

    # Python's own Ctrl-C handler, whatever the runner inherited (a job started in the
    # background with `&` ignores SIGINT)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with (
            caplog.at_level(logging.WARNING, logger="symweak"),
            deferred_interrupts("the final fit") as held,
        ):
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)  # a second press is held too
            done = True
        assert done and held["interrupted"]
        assert caplog.text.count("interrupted during the final fit; finishing it") == 1
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_coords_name_columns_the_file_has(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("time_h,pos,u\n0,0,1\n0,1,2\n1,0,1\n1,1,2\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        symweak.load(path, coords="time_h,foo")
    assert str(info.value) == (
        "a.csv: coords= names column(s) ['foo']; the file has ['time_h', 'pos', 'u']."
    )
    ok = symweak.load(path, coords="time_h,pos")
    assert ok.coord_names == ("t", "x") and ok.field_names == ("u",)
