"""Robot models: URDF and DH/MDH YAML parsed into a compact array description (layout.py): kinematics
fixed for the model's life, gravity and payload swappable at run time (swap.py)."""
from .errors import InputError, LoopClosureError, ModelError, SingularConfigurationError
from .layout import PRISMATIC, REVOLUTE
from .model import Model
from .urdf import load_urdf
from .dh import load_dh
from .load import load_model
from .parallel import ParallelModel
from .parallel_load import load_parallel

__all__ = ["Model", "ModelError", "InputError", "load_urdf", "load_dh", "load_model", "REVOLUTE", "PRISMATIC",
           "ParallelModel", "load_parallel", "LoopClosureError", "SingularConfigurationError"]
