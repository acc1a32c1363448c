"""discover(..., surrogates=K): the final fit integrates the mean of K surrogates, each
trained through phases 1-4 with its own child seed."""

import pytest
import torch

import symweak
from symweak._seeds import child_seed
from symweak.discover import Config
from symweak.discover.network._state import NetworkState


class _Constant(torch.nn.Module):
    """A stand-in surrogate: the same value everywhere, derivatives ``slope`` × order."""

    def __init__(self, value: float, slope: float = 0.0) -> None:
        super().__init__()
        self.value, self.slope = value, slope

    def grid(self, axes):
        shape = tuple(len(a) for a in axes)
        return torch.full((*shape, 1), self.value, dtype=torch.float64)

    def grid_jets(self, axes, orders):
        shape = tuple(len(a) for a in axes)
        vals = [self.slope * sum(a) for a in orders]
        J = torch.tensor(vals, dtype=torch.float64).reshape(1, 1, len(orders), 1)
        return J.expand(*shape, len(orders), 1)


class _State:
    mean_grid = NetworkState.mean_grid
    mean_jets = NetworkState.mean_jets

    def __init__(self, own, members):
        self.surrogate, self.members = own, members


def test_mean_grid_averages_the_run_and_its_members():
    axes = [torch.linspace(0, 1, 3), torch.linspace(0, 1, 4)]
    state = _State(_Constant(1.0, 2.0), [_Constant(2.0, 4.0), _Constant(6.0, 9.0)])
    U = state.mean_grid(axes)
    assert U.shape == (3, 4, 1)
    assert torch.allclose(U, torch.full((3, 4, 1), 3.0, dtype=torch.float64))
    # members=False: the run's own surrogate (what the evidence check trains)
    assert torch.allclose(state.mean_grid(axes, members=False), torch.ones(3, 4, 1).double())
    J = state.mean_jets(axes, [(0, 1), (0, 2)])
    assert J.shape == (3, 4, 2, 1)
    assert J[0, 0, :, 0].tolist() == pytest.approx([5.0, 10.0])  # (2 + 4 + 9)/3 × order
    assert state.mean_jets(axes, [(0, 1)], members=False)[0, 0, 0, 0].item() == 2.0
    # without members the run's own values, unchanged
    alone = _State(_Constant(1.5), [])
    assert torch.equal(alone.mean_grid(axes), _Constant(1.5).grid(axes))


@pytest.mark.parametrize("value", [0, -1, 1.5, "2", True])
def test_surrogates_must_be_a_whole_number_of_at_least_one(value):
    with pytest.raises(
        symweak.SymweakError,
        match=r"config option surrogates must be an integer >= 1 or .auto., got ",
    ):
        Config.preset("network", surrogates=value)


def test_surrogates_is_refused_on_the_grid_method():
    import numpy as np

    obs = symweak.Observations.from_grid(
        np.sin(np.linspace(0, 1, 12))[:, None] * np.ones((12, 16)),
        t=np.linspace(0, 1, 12),
        x=np.linspace(0, 1, 16),
    )
    with pytest.raises(symweak.SymweakError, match="surrogates"):
        symweak.discover(obs, ops="+,-,*", lhs="u_t", method="grid", surrogates=2)


def test_network_run_on_the_mean_of_two_surrogates(tmp_path):
    from symweak.bench import generate

    obs = generate("burgers", cache=False, nt=41, nx=96).sample(0.25, seed=0)
    fast = dict(kernels=200, warmup_epochs=300, search_epochs=80, prune_epochs=80, tune_epochs=30)
    res = symweak.discover(
        obs, ops="+,-,*", lhs="u_t", seed=0, progress=False, surrogates=2, **fast
    )
    assert res.history.surrogates == 2
    assert res.settings["surrogates"] == 2
    coefs = {t.short(): c for t, c in res.system[0].coefficients.items()}
    assert set(coefs) == {"d_x(u^2)", "u_xx"}
    assert coefs["d_x(u^2)"] == pytest.approx(-0.5, abs=0.05)
    assert coefs["u_xx"] == pytest.approx(0.1, rel=0.2)
    res.save(tmp_path / "run.json")
    assert symweak.Discovery.load(tmp_path / "run.json").history.surrogates == 2
    assert child_seed(0, "surrogates") > 0


def test_auto_uses_three_surrogates_from_the_noise_threshold():
    from types import SimpleNamespace

    from symweak.discover.network import AUTO_SURROGATES, how_many_surrogates

    def history(noise):
        return SimpleNamespace(phases={"warmup": SimpleNamespace(noise=noise)})

    auto = Config.preset("network", surrogates="auto").surrogate
    assert AUTO_SURROGATES == 3
    assert how_many_surrogates(auto, history({"u": 0.62, "v": 0.1}), None) == 3
    assert how_many_surrogates(auto, history({"u": 0.5}), None) == 3
    assert how_many_surrogates(auto, history({"u": 0.49, "v": float("nan")}), None) == 1
    fixed = Config.preset("network", surrogates=2).surrogate
    assert how_many_surrogates(fixed, history({"u": 0.0}), None) == 2


def test_auto_estimates_the_noise_when_the_warm_up_made_no_estimate():
    from types import SimpleNamespace

    import numpy as np

    from symweak.discover.network import how_many_surrogates

    rng = np.random.default_rng(0)
    t, x = np.meshgrid(np.linspace(0, 1, 40), np.linspace(0, 2 * np.pi, 64), indexing="ij")
    clean = np.sin(x - t)
    noisy = clean + 0.8 * clean.std() * rng.standard_normal(clean.shape)
    auto = Config.preset("network", surrogates="auto").surrogate
    empty = SimpleNamespace(phases={})
    for values, count in ((clean, 1), (noisy, 3)):
        obs = symweak.Observations(
            coords={"t": t.ravel(), "x": x.ravel()}, fields={"u": values.ravel()}
        )
        problem = SimpleNamespace(obs=obs, seed=0)
        assert how_many_surrogates(auto, empty, problem) == count
