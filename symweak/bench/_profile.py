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


def _cpu(event) -> bool:
    return str(event.device_type()).endswith("CPU")


def _parents(events) -> dict[int, object]:
    """``{id(event): its innermost enclosing CPU event on the same thread, or None}``
    (what the profiler's parsed events call ``cpu_parent``), by nesting of time ranges."""
    by_thread: dict[int, list] = {}
    for e in events:
        by_thread.setdefault(e.start_thread_id(), []).append(e)
    parents: dict[int, object] = {}
    for mine in by_thread.values():
        mine.sort(key=lambda e: (e.start_ns(), -e.duration_ns()))
        stack: list = []
        for e in mine:
            while stack and stack[-1].start_ns() + stack[-1].duration_ns() < e.start_ns():
                stack.pop()
            parents[id(e)] = stack[-1] if stack else None
            stack.append(e)
    return parents


def _where(ranges: list, starts: list, t: int) -> str:
    """The innermost range (the latest-starting one that still holds ``t``), or "other"."""
    i = bisect.bisect_right(starts, t) - 1
    while i >= 0:
        lo, hi, name = ranges[i]
        if lo <= t <= hi:
            return name
        i -= 1
    return "other"


def phase_table(events) -> dict[str, dict[str, float]]:
    """``{phase: {"ops", "cpu_s", "kernels", "gpu_s"}}`` from the profiler's raw events
    (``prof.profiler.kineto_results.events()``; its parsed ``events()`` take minutes for
    a run's millions): each top-level ``aten::`` operation (the event enclosing it on its
    thread is not one) counted in the innermost ``symweak:`` range holding its start
    (outside every range: "other"); each device kernel in the phase of the CPU event that
    launched it (their correlation ids)."""
    cpu, device = [], []
    for e in events:
        (cpu if _cpu(e) else device).append(e)
    ranges = sorted(
        (e.start_ns(), e.start_ns() + e.duration_ns(), _phase(e.name()))
        for e in cpu
        if e.name().startswith("symweak:")
    )
    starts = [r[0] for r in ranges]
    table: dict[str, dict[str, float]] = {}

    def row(t: int) -> dict:
        zero = {"ops": 0, "cpu_s": 0.0, "kernels": 0, "gpu_s": 0.0}
        return table.setdefault(_where(ranges, starts, t), zero)

    parents = _parents(cpu)
    launched = {e.correlation_id(): e.start_ns() for e in cpu if e.correlation_id()}
    for e in cpu:
        parent = parents[id(e)]
        if not e.name().startswith("aten::") or (
            parent is not None and parent.name().startswith("aten::")
        ):
            continue  # not an operation, or called by another one, not from Python
        r = row(e.start_ns())
        r["ops"] += 1
        r["cpu_s"] += e.duration_ns() / 1e9
    for e in device:
        if e.linked_correlation_id() in launched:
            r = row(launched[e.linked_correlation_id()])
            r["kernels"] += 1
            r["gpu_s"] += e.duration_ns() / 1e9
    return table


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
    table = phase_table(prof.profiler.kineto_results.events())
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
