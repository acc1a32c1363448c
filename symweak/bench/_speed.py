"""Speed figures quoted in the closing notes: assembly and surrogate step times."""

from __future__ import annotations

import time

import numpy as np
import torch

__all__ = ["columns", "scattered", "speed_report", "user_data_report"]


def _median_time(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times[1:]))


def speed_report(three_d: bool = False) -> list[str]:
    """Assembly (S = 20, K = 1000) and surrogate forward+backward step times, as text lines."""
    from ..weak import TestFunctionSet, WeakAssembler

    lines = [f"torch threads: {torch.get_num_threads()}"]
    t = np.linspace(0, 10, 101)
    x = np.linspace(-8, 8, 256, endpoint=False)
    tests = TestFunctionSet.random({"t": (0, 10), "x": (x[0], x[-1])}, 1000, seed=0)
    asm = WeakAssembler({"t": t, "x": x}, tests, {"t": 1, "x": 4})
    F = torch.randn(20, 101, 256, dtype=torch.float64)
    alphas = [(0, i % 5) for i in range(20)]
    ms = 1e3 * _median_time(lambda: asm.integrate(F, alphas))
    lines.append(f"assembly 101x256, S=20, K=1000: {ms:.0f} ms")
    if three_d:
        lines += _assembly_3d()
    lines += _surrogate_steps()
    if three_d:
        lines.append(_surrogate_3d_memory())
    return lines


def _assembly_3d() -> list[str]:
    """The 3-D assembly: narrow supports, then wide ones blocked against per window."""
    from ..weak import TestFunctionSet, WeakAssembler

    lines = []
    axes = {
        "t": np.linspace(0, 20, 101),
        "x": np.linspace(1, 7.5, 300),
        "y": np.linspace(-1.5, 1.5, 150),
    }
    tests3 = TestFunctionSet.random({n: (a[0], a[-1]) for n, a in axes.items()}, 1000, seed=0)
    asm3 = WeakAssembler(axes, tests3, {"t": 1, "x": 2, "y": 2})
    F3 = torch.randn(20, 101, 300, 150, dtype=torch.float64)
    al3 = [(0, i % 3, (i // 3) % 3) for i in range(20)]
    sec = _median_time(lambda: asm3.integrate(F3, al3), 1)
    lines.append(f"assembly 101x300x150, S=20, K=1000: {sec:.2f} s")
    # wide supports (radii eta*L per axis, ~22 % of the grid each) over the dense limit:
    # the blocked dense product against the per-window loop it replaced there
    wide = TestFunctionSet.random(
        {n: (a[0], a[-1]) for n, a in axes.items()}, 250, seed=0, scale="axis"
    )
    asm_w = WeakAssembler(axes, wide, {"t": 1, "x": 2, "y": 2})
    F8, al8 = F3[:8], al3[:8]
    blocked = _median_time(lambda: asm_w.integrate(F8, al8), 1)
    looped = _median_time(lambda: asm_w._windowed(F8, al8), 1)
    lines.append(
        f"assembly 101x300x150, S=8, K=250, axis radii ({100 * asm_w.window_fraction:.0f} % "
        f"of the grid each): {blocked:.2f} s in blocks, {looped:.2f} s per window"
    )
    return lines


def _surrogate_steps() -> list[str]:
    """Surrogate forward+backward steps on Burgers' 10 % points, three ways."""
    from ..surrogate import DataTerm, Surrogate
    from ._systems import generate

    lines = []
    obs = generate("burgers").sample(0.1, seed=0)

    def step(model, data):
        def run():
            model.zero_grad(set_to_none=True)
            data.loss(data.shared()).backward()

        return run

    for label, options in [("diagonal", {}), ("full", {"full": True})]:
        model = Surrogate.for_observations(obs, seed=0, **options)
        on_grid = DataTerm(model, obs, "grid")
        off_grid = DataTerm(model, obs, "points")
        text = (
            f"surrogate {label}: {len(obs)} points via the 101x256 grid "
            f"{1e3 * _median_time(step(model, on_grid), 3):.0f} ms; "
        )
        if not options:
            gathered = DataTerm(model, obs, "gather")
            text += f"gathered {1e3 * _median_time(step(model, gathered), 3):.0f} ms; "
        lines.append(
            text + f"off-grid points {1e3 * _median_time(step(model, off_grid), 3):.0f} ms "
            "(forward+backward)"
        )
    return lines


def _surrogate_3d_memory() -> str:
    """The 3-D surrogate's grid step and peak memory, in a fresh process (so that the peak
    RSS is the surrogate's alone)."""
    import subprocess
    import sys

    code = (
        "import resource, time, torch\n"
        "from symweak.surrogate import Surrogate\n"
        "m = Surrogate({'t': (0, 20), 'x': (1, 7.5), 'y': (-1.5, 1.5)}, ['omega'], seed=0)\n"
        "axes = [torch.linspace(0, 20, 101), torch.linspace(1, 7.5, 300),"
        " torch.linspace(-1.5, 1.5, 150)]\n"
        "start = time.perf_counter()\n"
        "(m.grid(axes) ** 2).mean().backward()\n"
        # VmHWM, not ru_maxrss: the latter keeps the parent's high-water mark across exec
        "hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM')]\n"
        "peak = (int(hwm[0].split()[1]) if hwm else "
        "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024**2\n"
        "print(f'{time.perf_counter() - start:.1f} s, process peak RSS {peak:.2f} GiB')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    result = out.stdout.strip() or out.stderr.strip().splitlines()[-1]
    return f"surrogate 101x300x150 grid forward+backward (checkpointed slabs): {result}"


def columns(obs, seed: int = 0):
    """``obs`` as a user has it: point columns in a shuffled order, no grid metadata."""
    from ..data import Observations

    order = np.random.default_rng(seed).permutation(len(obs))
    return Observations(
        coords={n: np.array(v[order]) for n, v in obs.coords.items()},
        fields={n: np.array(v[order]) for n, v in obs.fields.items()},
    )


def scattered(name: str, n: int, noise: float = 0.0, seed: int = 0):
    """``n`` points at uniformly random coordinates in the system's domain (off any lattice),
    with values interpolated (cubic, periodic axes wrapped) from its simulated grid, then
    noise as in the paper: truly scattered data, as a user's sensors give them."""
    from scipy.interpolate import RegularGridInterpolator

    from ..data import Observations
    from ._systems import generate

    full = generate(name)
    axes = full.grid.axes
    names = list(axes)
    values = {}
    for f in full.field_names:
        grid = np.empty(full.grid.size)
        grid[full.grid_index] = full.fields[f]
        values[f] = grid.reshape(full.grid.shape)
    padded = []
    for i, a in enumerate(axes.values()):
        step = a[1] - a[0]
        if i == 0:
            padded.append(a)
            continue
        # spatial axes of the benchmark systems are periodic: wrap 3 points each side
        period = a[-1] - a[0] + step
        padded.append(np.concatenate([a[-3:] - period, a, a[:3] + period]))
        for f in values:
            v = values[f]
            values[f] = np.concatenate(
                [np.take(v, range(-3, 0), axis=i), v, np.take(v, range(3), axis=i)], axis=i
            )
    rng = np.random.default_rng(seed)
    pts = np.stack([rng.uniform(a[0], a[-1], n) for a in axes.values()], axis=1)
    fields = {f: RegularGridInterpolator(padded, v, method="cubic")(pts) for f, v in values.items()}
    obs = Observations(coords={c: pts[:, i] for i, c in enumerate(names)}, fields=fields)
    return obs.add_noise(noise, seed=seed) if noise > 0 else obs


def _timed_discovery(label: str, obs, ops: str, lhs, constraints=None) -> str:
    from ..discover import discover

    start = time.perf_counter()
    res = discover(obs, ops=ops, lhs=lhs, seed=0, progress=False, constraints=constraints)
    seconds = time.perf_counter() - start
    warm = res.history.phases.get("warmup")
    how = f"{res.method}" + (f", N={warm.kernels}" if warm is not None else "")
    return f"{label}: {seconds:.1f} s ({how}) {res.short(res.digits)}"


def user_data_report(two_d: bool = False) -> list[str]:
    """End-to-end times on data shaped like a user's (point columns, no grid metadata)."""
    from ..surrogate import DataTerm, Surrogate
    from ._systems import generate

    lines = [f"torch threads: {torch.get_num_threads()}"]
    full = generate("burgers")
    lattice = columns(full.sample(0.1, seed=0).add_noise(0.2, seed=0))
    off = scattered("burgers", len(lattice), noise=0.2, seed=0)
    model = Surrogate.for_observations(off, kernels=1000, seed=0)
    data = DataTerm(model, off, "points")  # scattered: the sparse per-box evaluation
    z = model.normalise(data.points)

    def sparse():
        model.zero_grad(set_to_none=True)
        model.head(model.embedding.sparse(data.tiles)).sum().backward()

    def dense():  # every Gaussian at every point
        model.zero_grad(set_to_none=True)
        model.head(model.embedding._points(z)).sum().backward()

    for label, run in (("sparse", sparse), ("dense", dense)):
        lines.append(
            f"surrogate forward+backward, {len(off)} off-lattice points, N=1000 ({label}): "
            f"{1e3 * _median_time(run, 3):.0f} ms"
        )
    ops = "+,-,*,sin"
    lines.append(f"1-D lattice as columns, {lattice!r}")
    lines.append(_timed_discovery("  end to end", lattice, ops, "u_t"))
    lines.append(f"1-D truly scattered, {off!r}")
    lines.append(_timed_discovery("  end to end", off, ops, "u_t"))
    start = time.perf_counter()
    whole = columns(full)
    build = time.perf_counter() - start
    lines.append(f"1-D complete grid as shuffled columns, {whole!r} (read in {build:.1f} s)")
    lines.append(_timed_discovery("  end to end", whole, ops, "u_t"))
    if two_d:
        from ._systems import get_system

        for name, ratio in (("wave", 0.05), ("navier_stokes", 0.1)):
            system = get_system(name)
            obs = columns(generate(name).sample(ratio, seed=0))
            lines.append(f"2-D {name} {ratio:g} as columns, {obs!r}")
            lines.append(
                _timed_discovery("  end to end", obs, system.ops, system.lhs, system.rules or None)
            )
    return lines
