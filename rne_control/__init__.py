"""rne_control: model-based joint torque control on a recursive Newton-Euler dynamics core.

The library (model, dynamics, control) works without ROS; only ``rne_control.ros`` imports rclpy.
"""
from .model import InputError, Model, ModelError, load_dh, load_model, load_urdf
from .dynamics import (SingularMassMatrixError, coriolis_torques, forward_dynamics, gravity_torques,
                       inverse_dynamics, mass_matrix)
from .dynamics import (base_twist_from_momentum, floating_forward_dynamics, free_floating_inverse_dynamics,
                       moving_base_inverse_dynamics)
from .identification import (base_parameters, differentiate, excitation_trajectory, identify, parameter_names,
                             parameter_vector, regressor)

__version__ = "0.1.0"
__all__ = ["Model", "ModelError", "InputError", "SingularMassMatrixError", "load_urdf", "load_dh", "load_model",
           "inverse_dynamics", "gravity_torques", "coriolis_torques", "mass_matrix", "forward_dynamics",
           "moving_base_inverse_dynamics", "free_floating_inverse_dynamics", "base_twist_from_momentum",
           "floating_forward_dynamics", "regressor", "parameter_vector", "parameter_names", "base_parameters",
           "excitation_trajectory", "identify", "differentiate"]
