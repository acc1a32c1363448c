"""The symbolic network with differentiable architecture search, and extraction of terms."""

from ._extract import function_shapes as function_shapes
from ._extract import library_from_network as library_from_network
from ._network import SymNet as SymNet
from ._network import field_scales as field_scales
from ._readback import snap_arguments as snap_arguments
