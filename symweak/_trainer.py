"""THE training loop: every optimisation in symweak (the surrogate's warm-up, the network
method's search, prune and tune phases) runs through :func:`train_loop`.

It owns what every loop needs and nothing a model knows: the progress bar and its
post-fix, Ctrl-C (the loop stops and says so; what was learned is kept), timing, and the
lowest-held-out-loss checkpoint (:class:`BestCheckpoint`). It lives below both the
surrogate and the discovery methods so that neither imports the other.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BestCheckpoint",
    "LoopResult",
    "Step",
    "adam",
    "announce",
    "cosine_adam",
    "cuda_graphs",
    "deferred_interrupts",
    "interactive",
    "profiler_range",
    "train_loop",
]

log = logging.getLogger("symweak")


def adam(params, capturable: bool = False, **options):
    """Adam with the multi-tensor (``foreach``) update on every device: one kernel per
    operation for all parameters instead of one per parameter. Torch picks it on CUDA only;
    on the CPU the per-parameter loop was 0.9 ms of a 7 ms training step (20 tensors).
    ``capturable``: its step counts stay on the device, so that a CUDA graph can hold the
    update (:class:`Step`). The fused kernel is faster still on the CPU (0.12 against 0.76 ms
    a step) but rounds otherwise, and results near a cutoff moved (docs/decisions.md)."""
    import torch

    if capturable:
        options["capturable"] = True
    return torch.optim.Adam(params, foreach=True, **options)


def cosine_adam(model, lr: float, epochs: int, graphed: bool):
    """(Adam, ``advance()``): a cosine schedule from ``lr`` down to 5 % of it over
    ``epochs``, ``advance()`` called after each step. For a step captured as a CUDA graph
    (``graphed``) the rate is a tensor on the device that ``advance()`` fills from the
    schedule run on a stand-in optimiser, so that the rates are those of an eager run."""
    import torch

    rate = torch.tensor(lr, device=model.device) if graphed else None
    opt = adam(model.parameters(), lr=lr if rate is None else rate, capturable=graphed)
    driven = opt if rate is None else torch.optim.SGD([torch.zeros(1)], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(
        driven, T_max=max(epochs, 1), eta_min=lr * 0.05
    )

    def advance() -> None:
        if rate is not None:
            driven.step()  # the stand-in has no gradients: nothing moves
            sched.step()
            rate.fill_(sched.get_last_lr()[0])
        else:
            sched.step()

    return opt, advance


def cuda_graphs(device) -> bool:
    """Whether training steps on ``device`` run as replayed CUDA graphs (:class:`Step`): on
    a CUDA device unless the environment sets ``SYMWEAK_CUDA_GRAPHS=0``."""
    import torch

    on = os.environ.get("SYMWEAK_CUDA_GRAPHS", "1").strip() not in ("0", "off", "false")
    return on and torch.device(device).type == "cuda"


class Step:
    """One training step — ``body()``: forward, backward, optimiser step, returning tensors —
    run eagerly, or on CUDA (:func:`cuda_graphs`) captured once as a CUDA graph and replayed.

    A 1-D run's step is several hundred small operations; on a GPU each is a kernel launch
    from Python that costs more than its arithmetic, and a replayed graph launches them all
    at once. The first :attr:`WARMUP` steps run eagerly on a side stream (the optimiser's
    state and the libraries' workspaces are made there, as capture requires); the next step
    is captured and every later one replays it, so the steps run are the same in number and
    kind as eagerly. ``body`` must then read nothing from the host and build no tensor from
    Python values (tests/test_capture.py checks the training steps for both on the CPU), and
    the optimiser must be ``capturable``; ``body``'s outputs are the same tensors after every
    replay, overwritten, so read them before the next call, and nothing may keep a step's
    autograd graph alive past the step (keep detached tensors only). Where the capture
    fails, a line in the log says why and the steps run eagerly from then on."""

    WARMUP = 3

    def __init__(self, body: Callable[[], Any], optimizer, device) -> None:
        self.body, self.optimizer = body, optimizer
        self.graphed = cuda_graphs(device)
        self.graph = None
        self.out: Any = None
        self._eager = 0
        self._side = None

    def __call__(self) -> Any:
        if self.graph is not None:
            self.graph.replay()
            return self.out
        if not self.graphed:
            self.optimizer.zero_grad(set_to_none=True)
            return self.body()
        import torch

        if self._eager < self.WARMUP:
            self._eager += 1
            if self._side is None:  # one stream for every eager step: a parameter's gradient
                # accumulator made on one stream and used on another breaks the capture
                self._side = torch.cuda.Stream()
            side = self._side
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.optimizer.zero_grad(set_to_none=True)
                out = self.body()
            torch.cuda.current_stream().wait_stream(side)
            return out
        graph = torch.cuda.CUDAGraph()
        self.optimizer.zero_grad(set_to_none=True)
        try:
            with torch.cuda.graph(graph):
                out = self.body()
        except Exception as exc:  # any failed capture falls back to eager steps
            log.info("CUDA graph capture failed (%s); the steps run one by one", exc)
            self.graphed = False
            torch.cuda.synchronize()
            return self()
        self.graph, self.out = graph, out
        graph.replay()
        return out


def interactive() -> bool:
    """Whether progress bars can redraw in place: a terminal, or a Jupyter notebook's widget.
    Elsewhere (stderr sent to a file or a CI log) a bar would write a line per refresh."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return False
    if any(c.__module__ == "tqdm.notebook" for c in tqdm.__mro__):
        return True
    stream = sys.stderr
    return bool(getattr(stream, "isatty", None) and stream.isatty())


def announce(text: str, progress: bool = True) -> None:
    """One line for the person waiting (stderr, with ``progress``) and the log."""
    log.info("%s", text)
    if progress:
        print(f"symweak: {text}", file=sys.stderr, flush=True)


@dataclass
class LoopResult:
    """What a loop ran: one record per finished epoch, whether Ctrl-C stopped it, seconds,
    and where its ``stop`` rule ended it."""

    records: list = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    #: the epochs run when ``stop`` ended the loop early, else None
    stopped: int | None = None


def train_loop(
    epochs: int,
    step: Callable[[int], Any],
    *,
    desc: str | None = None,
    progress: bool = False,
    postfix: Callable[[int, Any], dict | None] | None = None,
    every: int = 25,
    stop: Callable[[int], bool] | None = None,
) -> LoopResult:
    """Run ``step(epoch)`` for ``epochs`` epochs and collect what it returns.

    ``progress``: a tqdm bar named ``desc`` where it can redraw in place (a terminal, a
    notebook), else one line when the loop ends (``desc: N epochs in S s``), so that a log
    file gets a line per phase and not one per refresh; ``postfix(epoch, record)`` gives the
    bar's post-fix every ``every`` epochs. Ctrl-C ends the loop after the last finished
    epoch (``interrupted`` is then True and a warning names the phase); nothing is rolled
    back. ``stop(epoch)``, asked after each epoch, ends the loop early when it says True
    (``stopped`` is then the number of epochs run)."""
    out = LoopResult()
    bar = None
    lines = progress and not interactive()
    if progress and not lines:
        from tqdm.auto import tqdm

        bar = tqdm(total=epochs, desc=desc, leave=False, mininterval=0.5)
    start = time.perf_counter()
    # a named range for torch.profiler (`symweak bench profile`); free when none is running
    with profiler_range(desc or "training"):
        try:
            for epoch in range(epochs):
                out.records.append(step(epoch))
                if stop is not None and stop(epoch):
                    out.stopped = epoch + 1
                    break
                if bar is not None:
                    bar.update(1)
                    if postfix is not None and epoch % every == 0:
                        shown = postfix(epoch, out.records[-1])
                        if shown:
                            bar.set_postfix(**shown)
        except KeyboardInterrupt:
            out.interrupted = True
            log.warning("interrupted during %s; going on with what was learned", desc or "training")
        finally:
            if bar is not None:
                bar.close()
            out.seconds = time.perf_counter() - start
    if lines and epochs:
        shown = postfix(len(out.records) - 1, out.records[-1]) if postfix and out.records else None
        extra = "".join(f", {k} {v}" for k, v in (shown or {}).items())
        announce(f"{desc or 'training'}: {len(out.records)} epochs in {out.seconds:.1f} s{extra}")
    return out


def profiler_range(name: str):
    """``torch.profiler.record_function("symweak:" + name)``: what `symweak bench profile`
    groups a run's operations by."""
    from torch.profiler import record_function

    return record_function(f"symweak:{name}")


class BestCheckpoint:
    """The parameters of ``model`` with the lowest loss offered so far (early stopping on a
    held-out loss), with where they were seen (``phase``, ``epoch``)."""

    def __init__(self, model, loss: float = math.inf, phase: str = "", epoch: int = 0) -> None:
        self.model = model
        self.loss, self.phase, self.epoch = float(loss), phase, int(epoch)
        self.state = self._copy()

    def _copy(self) -> dict:
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    def offer(
        self, loss: float, phase: str = "", epoch: int = 0, taken: dict | None = None
    ) -> bool:
        """Keep the current parameters — or those ``taken`` (:meth:`take`) — if ``loss`` is
        the lowest so far; True when kept."""
        if loss < self.loss:
            self.loss, self.phase, self.epoch = float(loss), phase, int(epoch)
            self.state = self._copy() if taken is None else {k: v.clone() for k, v in taken.items()}
            return True
        return False

    def buffers(self) -> dict:
        """Tensors the shape of the model's state, for :meth:`take`."""
        return self._copy()

    def take(self, buffers: dict) -> None:
        """Copy the model's current state into ``buffers`` — inside a training step, before
        the optimiser moves the parameters whose held-out loss the step computed; the loss
        is offered after the step with ``taken=buffers`` (a step replayed as a CUDA graph
        cannot read the loss on the host in the middle)."""
        import torch

        with torch.no_grad():
            for key, value in self.model.state_dict().items():
                buffers[key].copy_(value)

    def restore(self) -> None:
        """Load the kept parameters into the model (those it had when created, when no
        lower loss was offered)."""
        self.model.load_state_dict(self.state)


@contextlib.contextmanager
def deferred_interrupts(what: str) -> Iterator[dict]:
    """Ctrl-C inside the block is held until the block ends (the final fit after training:
    seconds, and the one step that turns what was learned into a result), so that an
    interrupt there still returns the result; ``state["interrupted"]`` says whether one
    came. Outside the main thread (a Dask worker) signals are left alone."""
    state = {"interrupted": False}
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def hold(_signum, _frame):
        if not state["interrupted"]:
            log.warning("interrupted during %s; finishing it to return the result", what)
        state["interrupted"] = True

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)
