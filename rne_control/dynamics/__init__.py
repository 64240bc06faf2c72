"""Dynamics of the four kinds of model, on the kernel arrays laid out in rne_control.model.layout.

- trees (this folder): the recursive Newton-Euler algorithm (rnea.py), gravity (gravity.py), the
  composite-rigid-body mass matrix (crba.py), the articulated-body forward dynamics (aba.py)
  (Featherstone 2008, chapters 5-7; Khalil 2010, §3), the generalized momentum and Coriolis transpose
  (momentum_coriolis.py), frame kinematics (frames.py) and state integration (integrate.py);
- closed_loop/: closed-loop robots, the loops closed on the equivalent tree (Khalil §2.2, §4);
- parallel/: Gough-Stewart platforms (Khalil §5);
- elastic/: trees with lumped elasticity (Khalil §6);
- floating/: floating-base trees, moving, free-floating and forward (Khalil §7).

primitives.py holds the spatial-vector helpers, kernel flags, status codes and JIT decorators that the
kernels of every kind share. Each public function takes the fast path, the direct call of a one-sample
kernel (direct.py), and falls back to the checked path (calls.py): conversion, validation, stacking
and the status codes turned into exceptions. api.py and frame_api.py hold the tree functions.
"""
from .api import (coriolis_torques, coriolis_transpose_torques, forward_dynamics, generalized_momentum, gravity_torques,
                  inverse_dynamics, mass_matrix, momentum_and_coriolis_transpose)
from .frame_api import frame_bias_acceleration, frame_jacobian, frame_pose
from .calls import SingularMassMatrixError
from .closed_loop import (LoopClosureError, closed_loop_coriolis_torques, closed_loop_forward_dynamics,
                          closed_loop_gravity_torques, closed_loop_inverse_dynamics, closed_loop_mass_matrix,
                          loop_jacobian, solve_loops)
from .elastic import (elastic_coriolis_torques, elastic_forward_dynamics, elastic_gravity_torques,
                      elastic_inverse_dynamics)
from .floating import (base_twist_from_momentum, floating_forward_dynamics, free_floating_inverse_dynamics,
                       moving_base_inverse_dynamics)
from .parallel import (parallel_coriolis_torques, parallel_forward_dynamics, parallel_gravity_torques,
                       parallel_inverse_dynamics, parallel_joint_forward_dynamics, parallel_joint_inverse_dynamics,
                       parallel_mass_matrix, platform_forward_kinematics, platform_inverse_kinematics,
                       platform_jacobian)

PARALLEL = ["platform_inverse_kinematics", "platform_forward_kinematics", "platform_jacobian",
            "parallel_inverse_dynamics", "parallel_forward_dynamics", "parallel_joint_inverse_dynamics",
            "parallel_joint_forward_dynamics", "parallel_gravity_torques", "parallel_coriolis_torques",
            "parallel_mass_matrix"]
__all__ = ["inverse_dynamics", "gravity_torques", "coriolis_torques", "mass_matrix", "forward_dynamics",
           "generalized_momentum", "coriolis_transpose_torques", "momentum_and_coriolis_transpose", "frame_pose",
           "frame_jacobian", "frame_bias_acceleration",
           "SingularMassMatrixError", "moving_base_inverse_dynamics", "free_floating_inverse_dynamics",
           "base_twist_from_momentum", "floating_forward_dynamics", "LoopClosureError", "solve_loops",
           "loop_jacobian", "closed_loop_inverse_dynamics", "closed_loop_gravity_torques",
           "closed_loop_coriolis_torques", "closed_loop_mass_matrix", "closed_loop_forward_dynamics",
           "elastic_inverse_dynamics", "elastic_forward_dynamics", "elastic_gravity_torques",
           "elastic_coriolis_torques"] + PARALLEL
