"""The forward response learner: learnable Gaussian embedding + lightweight MLP."""

from ._data import DataTerm as DataTerm
from ._data import held_out_term as held_out_term
from ._data import split_points as split_points
from ._embedding import GaussianEmbedding as GaussianEmbedding
from ._model import FEW_VALUES as FEW_VALUES
from ._model import MLP as MLP
from ._model import Surrogate as Surrogate
from ._model import choose_device as choose_device
from ._model import plain_mlp_like as plain_mlp_like
from ._noise import axis_lengths as axis_lengths
from ._noise import estimate_noise as estimate_noise
from ._noise import neighbour_correlation as neighbour_correlation
from ._noise import noise_readings as noise_readings
