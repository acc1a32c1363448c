"""Speed figures quoted in the closing notes: assembly and surrogate step times."""

from __future__ import annotations

import time

import numpy as np
import torch

__all__ = ["speed_report"]


def _median_time(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times[1:]))


def speed_report(three_d: bool = False) -> list[str]:
    """Assembly (S = 20, K = 1000) and surrogate forward+backward step times, as text lines."""
    from ..surrogate import DataTerm, Surrogate
    from ..weak import TestFunctionSet, WeakAssembler
    from ._systems import generate

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
    if three_d:
        # a fresh process, so that the peak RSS is the surrogate's alone
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
        lines.append(f"surrogate 101x300x150 grid forward+backward (checkpointed slabs): {result}")
    return lines
