"""Dynamics algorithms on a Model: RNE, gravity, Coriolis, CRBA, ABA, and the floating-base models."""
from .api import coriolis_torques, forward_dynamics, gravity_torques, inverse_dynamics, mass_matrix
from .calls import SingularMassMatrixError
from .closed_loop_api import (LoopClosureError, closed_loop_coriolis_torques, closed_loop_forward_dynamics,
                              closed_loop_gravity_torques, closed_loop_inverse_dynamics, closed_loop_mass_matrix,
                              loop_jacobian, solve_loops)
from .elastic_api import (elastic_coriolis_torques, elastic_forward_dynamics, elastic_gravity_torques,
                          elastic_inverse_dynamics)
from .floating_api import (base_twist_from_momentum, floating_forward_dynamics, free_floating_inverse_dynamics,
                           moving_base_inverse_dynamics)
from .parallel_api import (parallel_coriolis_torques, parallel_forward_dynamics, parallel_gravity_torques,
                           parallel_inverse_dynamics, parallel_joint_forward_dynamics, parallel_joint_inverse_dynamics,
                           parallel_mass_matrix, platform_forward_kinematics, platform_inverse_kinematics,
                           platform_jacobian)

PARALLEL = ["platform_inverse_kinematics", "platform_forward_kinematics", "platform_jacobian",
            "parallel_inverse_dynamics", "parallel_forward_dynamics", "parallel_joint_inverse_dynamics",
            "parallel_joint_forward_dynamics", "parallel_gravity_torques", "parallel_coriolis_torques",
            "parallel_mass_matrix"]
__all__ = ["inverse_dynamics", "gravity_torques", "coriolis_torques", "mass_matrix", "forward_dynamics",
           "SingularMassMatrixError", "moving_base_inverse_dynamics", "free_floating_inverse_dynamics",
           "base_twist_from_momentum", "floating_forward_dynamics", "LoopClosureError", "solve_loops",
           "loop_jacobian", "closed_loop_inverse_dynamics", "closed_loop_gravity_torques",
           "closed_loop_coriolis_torques", "closed_loop_mass_matrix", "closed_loop_forward_dynamics",
           "elastic_inverse_dynamics", "elastic_forward_dynamics", "elastic_gravity_torques",
           "elastic_coriolis_torques"] + PARALLEL
