"""Where a run's time goes: ``symweak bench profile NAME``, one discovery under torch.profiler,
its operations grouped by phase (the training loops and the final fit name their ranges,
:func:`symweak._trainer.profiler_range`).

Per phase: its seconds, the operations dispatched from Python (top-level ``aten::`` calls:
each is at least one kernel launch), their number per epoch, the CPU time inside them, and on
a GPU the kernels launched and the time the GPU was busy with them. A phase whose CPU time in
operations is far below its seconds is bound by Python and dispatch, not by arithmetic.
"""

from __future__ import annotations

import bisect
import time

__all__ = ["phase_table", "profile_report"]

_WARMUP = "surrogate"


def _phase(name: str) -> str:
    """A range's phase: the warm-up's loops (one per kernel count) are one phase."""
    name = name.removeprefix("symweak:")
    return "warm-up" if name.startswith(_WARMUP) else name


def phase_table(events) -> dict[str, dict[str, float]]:
    """``{phase: {"ops", "cpu_s", "kernels", "gpu_s"}}`` from a profiler's ``events()``:
    each top-level ``aten::`` operation counted in the innermost ``symweak:`` range holding
    its start (outside every range: "other")."""
    ranges = sorted(
        (e.time_range.start, e.time_range.end, _phase(e.name))
        for e in events
        if e.name.startswith("symweak:")
    )
    starts = [r[0] for r in ranges]
    table: dict[str, dict[str, float]] = {}
    for e in events:
        if not e.name.startswith("aten::"):
            continue
        parent = e.cpu_parent
        if parent is not None and parent.name.startswith("aten::"):
            continue  # called by another operation, not from Python
        start = e.time_range.start
        where = "other"
        i = bisect.bisect_right(starts, start) - 1
        while i >= 0:  # innermost: the latest-starting range that still holds it
            lo, hi, name = ranges[i]
            if lo <= start <= hi:
                where = name
                break
            i -= 1
        row = table.setdefault(where, {"ops": 0, "cpu_s": 0.0, "kernels": 0, "gpu_s": 0.0})
        row["ops"] += 1
        row["cpu_s"] += e.cpu_time_total / 1e6
        row["kernels"] += _kernels(e)
        row["gpu_s"] += getattr(e, "device_time_total", 0.0) / 1e6
    return table


def _kernels(event) -> int:
    """Kernels launched by an operation and the operations it called."""
    count = len(getattr(event, "kernels", ()) or ())
    for child in event.cpu_children:
        count += _kernels(child)
    return count


def profile_report(name: str, ratio: float, noise: float, seed: int, options: dict) -> list[str]:
    """Profile one discovery of benchmark system ``name`` (``ratio`` of its grid as shuffled
    point columns, noise ``noise``, the system's own ``ops`` and rules, ``options`` on
    top), after one short unprofiled run that pays the process's first-use costs (imports,
    lazily built tables). Returns the report as text lines."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from ..discover import discover
    from ._speed import columns
    from ._systems import generate, get_system

    system = get_system(name)
    obs = generate(system.name)
    if ratio < 1.0:
        obs = obs.sample(ratio, seed=seed)
    if noise > 0.0:
        obs = obs.add_noise(noise, seed=seed)
    obs = columns(obs, seed=seed)
    kw = {"lhs": system.lhs, "ops": system.ops, "seed": seed, "progress": False}
    if system.rules:
        kw["constraints"] = system.rules
    kw.update(options)
    short = {"warmup_epochs": 5, "search_epochs": 2, "prune_epochs": 2, "tune_epochs": 2}
    discover(obs, **{**kw, **short})
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        res = discover(obs, **kw)
        wall = time.perf_counter() - start
    table = phase_table(prof.events())
    device = next(res.surrogate.parameters()).device if res.surrogate is not None else "cpu"
    lines = [
        f"{system.title}: {len(obs)} points as columns, r = {ratio:g}, σ = {noise:g}, seed {seed}; "
        f"device {device}, torch threads {torch.get_num_threads()}",
        f"result: {res.short(4)}",
        f"{wall:.1f} s under the profiler (slower than without it)",
        "| phase | s | epochs | ops | ops / epoch | CPU in ops (s) | GPU kernels | GPU busy (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    seconds = {("warm-up" if k == "warmup" else k): v for k, v in res.history.seconds().items()}
    epochs = {
        ("warm-up" if k == "warmup" else k): getattr(rec, "epochs", None)
        for k, rec in res.history.phases.items()
    }
    order = [*seconds, *(p for p in table if p not in seconds)]
    for phase in order:
        row = table.get(phase, {"ops": 0, "cpu_s": 0.0, "kernels": 0, "gpu_s": 0.0})
        n = epochs.get(phase)
        per = f"{row['ops'] / n:.0f}" if n else "-"
        secs = f"{seconds[phase]:.1f}" if phase in seconds else "-"
        lines.append(
            f"| {phase} | {secs} | {n if n else '-'} | {row['ops']} | {per} | "
            f"{row['cpu_s']:.1f} | {row['kernels']} | {row['gpu_s']:.2f} |"
        )
    return lines
