"""Same seed, same result: torch runs its deterministic algorithms while a network run trains."""

import numpy as np

import symweak


def test_network_runs_with_torch_deterministic_algorithms_and_restores_the_setting(
    monkeypatch,
):
    """Same seed, same result: with two threads some CPU kernels summed in a varying order
    (the KS variant gave three different coefficients from three identical calls)."""
    import pytest
    import torch

    from symweak._seeds import deterministic_torch
    from symweak.discover.network import _warmup

    seen = []

    class Stop(Exception):
        pass

    def warmup(*args, **kwargs):
        seen.append(torch.are_deterministic_algorithms_enabled())
        raise Stop

    monkeypatch.setattr(_warmup, "run", warmup)
    assert not torch.are_deterministic_algorithms_enabled()
    t, x = np.linspace(0.0, 2.0, 41), np.linspace(-5.0, 5.0, 128)
    T, X = np.meshgrid(t, x, indexing="ij")
    obs = symweak.Observations.from_grid(np.exp(-((X - T) ** 2)), t=t, x=x).sample(0.1, seed=0)
    with pytest.raises(Stop):
        symweak.discover(obs, ops="id,^2", lhs="u_t", method="network", progress=False)
    assert seen == [True]
    assert not torch.are_deterministic_algorithms_enabled()  # the user's setting is back
    with deterministic_torch():
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.is_deterministic_algorithms_warn_only_enabled()
    assert not torch.is_deterministic_algorithms_warn_only_enabled()
