"""rne_control: model-based joint torque control on a recursive Newton-Euler dynamics core.

The library (model, dynamics, control) works without ROS; only ``rne_control.ros`` imports rclpy.
"""
from .model import (InputError, LoopClosureError, Model, ModelError, ParallelModel, SingularConfigurationError,
                    load_dh, load_model, load_parallel, load_urdf)
from .dynamics import (SingularMassMatrixError, coriolis_torques, forward_dynamics, gravity_torques,
                       inverse_dynamics, mass_matrix)
from .dynamics import (coriolis_transpose_torques, frame_bias_acceleration, frame_jacobian, frame_pose,
                       generalized_momentum)
from .dynamics import (base_twist_from_momentum, floating_forward_dynamics, free_floating_inverse_dynamics,
                       moving_base_inverse_dynamics)
from .dynamics import (elastic_coriolis_torques, elastic_forward_dynamics, elastic_gravity_torques,
                       elastic_inverse_dynamics)
from .dynamics import (closed_loop_coriolis_torques, closed_loop_forward_dynamics, closed_loop_gravity_torques,
                       closed_loop_inverse_dynamics, closed_loop_mass_matrix, loop_jacobian, solve_loops)
from .dynamics import (parallel_coriolis_torques, parallel_forward_dynamics, parallel_gravity_torques,
                       parallel_inverse_dynamics, parallel_joint_forward_dynamics, parallel_joint_inverse_dynamics,
                       parallel_mass_matrix, platform_forward_kinematics, platform_inverse_kinematics,
                       platform_jacobian)
from .identification import (base_parameters, differentiate, excitation_trajectory, identify, parameter_names,
                             parameter_vector, regressor)

__version__ = "0.1.0"
__all__ = ["Model", "ModelError", "InputError", "SingularMassMatrixError", "load_urdf", "load_dh", "load_model",
           "inverse_dynamics", "gravity_torques", "coriolis_torques", "mass_matrix", "forward_dynamics",
           "generalized_momentum", "coriolis_transpose_torques", "frame_pose", "frame_jacobian",
           "frame_bias_acceleration",
           "moving_base_inverse_dynamics", "free_floating_inverse_dynamics", "base_twist_from_momentum",
           "floating_forward_dynamics", "elastic_inverse_dynamics", "elastic_forward_dynamics",
           "elastic_gravity_torques", "elastic_coriolis_torques",
           "ParallelModel", "load_parallel", "LoopClosureError", "SingularConfigurationError",
           "platform_inverse_kinematics", "platform_forward_kinematics", "platform_jacobian",
           "parallel_inverse_dynamics", "parallel_forward_dynamics", "parallel_joint_inverse_dynamics",
           "parallel_joint_forward_dynamics", "parallel_gravity_torques", "parallel_coriolis_torques",
           "parallel_mass_matrix",
           "regressor", "parameter_vector", "parameter_names", "base_parameters",
           "excitation_trajectory", "identify", "differentiate",
           "solve_loops", "loop_jacobian", "closed_loop_inverse_dynamics", "closed_loop_gravity_torques",
           "closed_loop_coriolis_torques", "closed_loop_mass_matrix", "closed_loop_forward_dynamics"]

from .kernel_cache import install_cache_lock as _install_cache_lock, install_inline_copy as _install_inline_copy, \
    refresh as _refresh_kernel_cache

_install_cache_lock()     # cache saves hold their directory's lock (processes share the cache)
_install_inline_copy()    # numba's inliner copies a callee's IR once, not once per block
_refresh_kernel_cache()   # before any kernel is called: drop cache entries compiled against older helpers
