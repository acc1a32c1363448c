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
    "adam",
    "announce",
    "deferred_interrupts",
    "interactive",
    "profiler_range",
    "train_loop",
]

log = logging.getLogger("symweak")


def adam(params, **options):
    """Adam with the multi-tensor (``foreach``) update on every device: one kernel per
    operation for all parameters instead of one per parameter. Torch picks it on CUDA only;
    on the CPU the per-parameter loop was 0.9 ms of a 7 ms training step (20 tensors)."""
    import torch

    return torch.optim.Adam(params, foreach=True, **options)


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

    def offer(self, loss: float, phase: str = "", epoch: int = 0) -> bool:
        """Keep the current parameters if ``loss`` is the lowest so far; True when kept."""
        if loss < self.loss:
            self.loss, self.phase, self.epoch = float(loss), phase, int(epoch)
            self.state = self._copy()
            return True
        return False

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
