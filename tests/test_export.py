"""Export targets: each is rendered, imported/compiled, run, and compared with SymPy."""

import ctypes
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest
import sympy
import torch

import symweak
from symweak import Discovery, SymweakError, System
from symweak.bench import generate
from symweak.export import render

t, x, y = sympy.symbols("t x y")

BURGERS = "u_t = -0.5*d_x(u^2) + 0.1*u_xx"
# A 2-D system with a product, a sine and a mixed derivative, to exercise every code path.
SYSTEM_2D = "u_t = 0.3*d_xy(u*v) - 1.5*sin(u) + 0.2*v_yy ; v_t = 0.7*u_xx + 0.25*d_y(v^3)"


def module_from(code: str):
    mod = types.ModuleType("generated")
    exec(compile(code, "<generated>", "exec"), mod.__dict__)
    return mod


def system(text: str, coords="t,x", fields=("u",)) -> System:
    return System(
        [symweak.parse_equation(s, coords=coords, fields=list(fields)) for s in text.split(";")]
    )


def exact_rhs(sys_: System, coords, values: dict):
    """SymPy's own evaluation of the strong form at analytic fields."""
    out = {}
    syms = [sympy.Symbol(c) for c in coords]
    for eq in sys_:
        rhs = eq.strong().rhs
        rhs = rhs.subs({sympy.Function(f)(*syms): expr for f, expr in values.items()}).doit()
        out[eq.lhs.field_names[0]] = rhs
    return out


def periodic_grid(n, lo, hi):
    return np.linspace(lo, hi, n, endpoint=False)


def test_numpy_target_matches_sympy_spectral_and_fd():
    sys_ = system(BURGERS)
    xs = periodic_grid(128, 0, 2 * np.pi)
    u = sympy.sin(x) + 0.5 * sympy.cos(2 * x)
    ref = sympy.lambdify(x, exact_rhs(sys_, "tx", {"u": u})["u"])(xs)
    vals = sympy.lambdify(x, u)(xs)
    spectral = module_from(render(sys_, "numpy", "tx", periodic=["x"]))
    got = spectral.rhs({"u": vals}, {"x": xs[1] - xs[0]})["u"]
    assert np.max(np.abs(got - ref)) < 1e-12
    fd = module_from(render(sys_, "numpy", "tx", accuracy=6))
    xf = np.linspace(0.3, 2.5, 400)  # not periodic: one-sided stencils at the ends
    got = fd.rhs({"u": sympy.lambdify(x, u)(xf)}, {"x": xf[1] - xf[0]})["u"]
    ref = sympy.lambdify(x, exact_rhs(sys_, "tx", {"u": u})["u"])(xf)
    assert np.max(np.abs(got - ref)) < 1e-7


@pytest.fixture(scope="module")
def grid2d():
    xs = periodic_grid(48, 0, 2 * np.pi)
    ys = periodic_grid(40, 0, 2 * np.pi)
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    fields = {"u": 0.6 * sympy.sin(x) * sympy.cos(y), "v": sympy.cos(x + 2 * y) + 0.3}
    sys_ = system(SYSTEM_2D, "t,x,y", "uv")
    ref = {
        k: sympy.lambdify((x, y), v)(X, Y) + 0 * X
        for k, v in exact_rhs(sys_, "txy", fields).items()
    }
    vals = {k: sympy.lambdify((x, y), v)(X, Y) + 0 * X for k, v in fields.items()}
    spacing = {"x": xs[1] - xs[0], "y": ys[1] - ys[0]}
    return sys_, vals, ref, spacing


def test_numpy_target_2d_system(grid2d):
    sys_, vals, ref, spacing = grid2d
    mod = module_from(render(sys_, "numpy", "txy", periodic=["x", "y"]))
    got = mod.rhs(vals, spacing)
    for k in ("u", "v"):
        assert np.max(np.abs(got[k] - ref[k])) < 1e-10
    assert mod.LHS == {"u": 1, "v": 1}


def test_torch_target_matches_and_is_differentiable(grid2d):
    sys_, vals, ref, spacing = grid2d
    mod = module_from(render(sys_, "torch", "txy", periodic=["x", "y"]))
    rhs = mod.RHS(spacing)
    fields = {k: torch.tensor(v, requires_grad=True) for k, v in vals.items()}
    got = rhs(fields)
    for k in ("u", "v"):
        assert np.max(np.abs(got[k].detach().numpy() - ref[k])) < 1e-10
    (got["u"] ** 2).sum().backward()
    assert fields["v"].grad is not None and torch.isfinite(fields["v"].grad).all()
    fd = module_from(render(sys_, "torch", "txy"))  # finite differences agree with NumPy's
    np_fd = module_from(render(sys_, "numpy", "txy"))
    a = fd.RHS(spacing)({k: torch.tensor(v) for k, v in vals.items()})["v"].numpy()
    b = np_fd.rhs(vals, spacing)["v"]
    assert np.max(np.abs(a - b)) < 1e-9


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_target_compiles_and_matches(grid2d, tmp_path):
    sys_, vals, ref, spacing = grid2d
    src = tmp_path / "rhs.c"
    src.write_text(render(sys_, "c", "txy"))
    lib = tmp_path / "librhs.so"
    subprocess.run(
        [
            "cc",
            "-std=c99",
            "-O2",
            "-Wall",
            "-Werror",
            "-shared",
            "-fPIC",
            str(src),
            "-o",
            str(lib),
            "-lm",
        ],
        check=True,
    )
    so = ctypes.CDLL(str(lib))
    n = vals["u"].shape
    ins = [np.ascontiguousarray(vals[k]) for k in ("u", "v")]
    outs = [np.zeros(n), np.zeros(n)]
    P = ctypes.POINTER(ctypes.c_double)
    fields = (P * 2)(*[a.ctypes.data_as(P) for a in ins])
    out = (P * 2)(*[a.ctypes.data_as(P) for a in outs])
    for periodic in ([1, 1], [0, 0]):
        rc = so.symweak_rhs(
            fields,
            out,
            (ctypes.c_int * 2)(*n),
            (ctypes.c_double * 2)(spacing["x"], spacing["y"]),
            (ctypes.c_int * 2)(*periodic),
        )
        assert rc == 0
        mod = module_from(render(sys_, "numpy", "txy"))  # the same FD stencils in NumPy
        if periodic == [1, 1]:  # wrap-around FD of accuracy 4 (h = 0.16; v^3 holds k_y = 6)
            for k, o in zip("uv", outs):
                assert np.max(np.abs(o - ref[k])) < 2e-2 * max(1, np.max(np.abs(ref[k])))
        else:
            want = mod.rhs(vals, spacing)
            for k, o in zip("uv", outs):
                assert np.max(np.abs(o - want[k])) < 1e-9


def test_latex_target():
    text = render(system(BURGERS), "latex", "tx")
    assert "\\partial_{t} u = -0.5 \\partial_{x}\\left(u^{2}\\right) + 0.1 \\partial_{xx} u" in text
    assert "$\\partial_{t} u$ & $\\partial_{xx} u$ & $0.1$ \\\\" in text
    assert text.startswith("\\documentclass{article}")
    two = render(system(SYSTEM_2D, "t,x,y", "uv"), "latex", "txy")
    assert "\\begin{cases}" in two


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_compiles(tmp_path):
    (tmp_path / "eq.tex").write_text(render(system(SYSTEM_2D, "t,x,y", "uv"), "latex", "txy"))
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "eq.tex"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "eq.pdf").exists()


def test_export_errors():
    with pytest.raises(SymweakError, match="Unknown export target 'fortran'"):
        render(system(BURGERS), "fortran", "tx")
    with pytest.raises(SymweakError, match="accuracy must be an even number"):
        render(system(BURGERS), "numpy", "tx", accuracy=3)
    with pytest.raises(SymweakError, match=r"periodic names unknown axes \['y'\]"):
        render(system(BURGERS), "numpy", "tx", periodic=["y"])
    res = Discovery(system(BURGERS), coords=("t", "x"), fields=("u",))
    with pytest.raises(SymweakError, match=r"Cannot tell the export target from 'eq\.txt'"):
        res.export("eq.txt")


@pytest.fixture(scope="module")
def burgers(tmp_path_factory):
    import os

    os.environ.setdefault("SYMWEAK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    return generate("burgers", cache=False)


def test_simulate_reproduces_the_data(burgers):
    res = symweak.discover(burgers, progress=False)
    sim = res.simulate(burgers)  # periodic x from the data's metadata: spectral
    assert sim.errors["u"] < 1e-4
    assert sim.fields["u"].shape == burgers.to_grid("u").shape
    wrong = Discovery(system("u_t = -0.5*d_x(u^2) + 0.2*u_xx"), coords=("t", "x"), fields=("u",))
    assert wrong.simulate(burgers).errors["u"] > 50 * sim.errors["u"]


def test_simulate_refuses_auxiliary_fields(burgers):
    res = Discovery(
        system("u_t = -0.5*d_x(u*v)", fields="uv"), coords=("t", "x"), fields=("u", "v")
    )
    obs = symweak.Observations.from_grid(
        t=burgers.grid.axes["t"],
        x=burgers.grid.axes["x"],
        fields={"u": burgers.to_grid("u"), "v": burgers.to_grid("u")},
    )
    with pytest.raises(SymweakError, match="the field\\(s\\) v appear in the equations but"):
        res.simulate(obs)


def test_export_writes_files(tmp_path):
    res = Discovery(system(BURGERS), coords=("t", "x"), fields=("u",))
    path = res.export(tmp_path / "eq.py", periodic=["x"])
    mod = module_from(path.read_text())
    assert mod.PERIODIC == {"x": True}
    assert res.export(tmp_path / "eq.tex").read_text().count("\\partial_{xx} u") == 2


def test_save_load_keeps_the_surrogate(burgers, tmp_path):
    import json

    from symweak.surrogate import Surrogate

    obs = burgers.sample(0.1, seed=0)
    model = Surrogate.for_observations(obs, kernels=40, seed=3)
    model.fit(obs, epochs=5, progress=False)
    res = Discovery(
        system(BURGERS), coords=("t", "x"), fields=("u",), surrogate=model, method="network"
    )
    res.save(tmp_path / "run.json")
    back = Discovery.load(tmp_path / "run.json")
    where = {"t": np.array([0.5, 3.0, 9.0]), "x": np.array([-2.0, 0.0, 5.5])}
    assert np.array_equal(back.predict(**where)["u"], res.predict(**where)["u"])
    assert back.ir == res.ir and back.method == "network"
    data = json.loads((tmp_path / "run.json").read_text())
    data["surrogate"]["state"] = "AAAA" + data["surrogate"]["state"][8:]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(SymweakError, match=r"bad\.json: the saved surrogate cannot be restored"):
        Discovery.load(tmp_path / "bad.json")


def test_latex_table_carries_intervals_and_probabilities():
    from symweak.export import render
    from symweak.grammar import parse_equation
    from symweak.ir import System

    eq = parse_equation("u_t = -0.5*d_x(u^2) + 0.1*u_xx", coords="t,x")
    unc = {
        "u_t": {
            "d_x(u^2)": {"interval": (-0.52, -0.48), "probability": 1.0},
            "u_xx": {"interval": (0.09, 0.11), "probability": 0.85},
        }
    }
    text = render(System([eq]), "latex", ["t", "x"], document=False, uncertainty=unc)
    assert r"equation & term & coefficient & 95\,\% interval & inclusion probability \\" in text
    assert r"$\partial_{t} u$ & $\partial_{xx} u$ & $0.1$ & $[0.09, 0.11]$ & 0.85 \\" in text
    plain = render(System([eq]), "latex", ["t", "x"], document=False)
    assert r"\begin{tabular}{llr}" in plain and "interval" not in plain


def test_exported_simulation_script_has_help(tmp_path):
    res = Discovery(system("u_t = 0.1*u_xx"), coords=("t", "x"), fields=("u",))
    path = res.export(tmp_path / "sim.py", target="sim", periodic=["x"])
    out = subprocess.run(
        [sys.executable, str(path), "--help"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("usage: sim.py [-h] DATA.npz")
    assert "arrays t, x, u on a grid (t, x)" in out.stdout
    bare = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert bare.returncode == 2
    assert "the following arguments are required: DATA.npz" in bare.stderr


def test_latex_sets_field_names_that_are_words_upright():
    eq = symweak.parse_equation(
        "density_t = 0.1*density_xx - density^2 + d_x(density*omega)", fields=["density", "omega"]
    )
    res = Discovery(System([eq]), coords=("t", "x"), fields=("density", "omega"))
    assert res.latex() == (
        r"\partial_{t} \mathrm{density} = -\mathrm{density}^{2} + "
        r"\partial_{x}\left(\mathrm{density} \omega\right) + 0.1 \partial_{xx} \mathrm{density}"
    )
