"""Gough-Stewart platforms with U-P-S legs (Khalil 2010, §5).

kinematics.py: inverse kinematics, the inverse Jacobian J_p^-1 and forward kinematics by
Newton-Raphson; dynamics.py: inverse dynamics by eq. (66), Gamma = J_p^T [F_p + sum_i J_vi^T J_i^-T
Gamma_i], each leg by the tree's RNE, and forward dynamics by solving the Cartesian model; api.py:
the public functions below, on a :class:`~rne_control.model.parallel.ParallelModel`.
"""
from .api import (parallel_coriolis_torques, parallel_forward_dynamics, parallel_gravity_torques,
                  parallel_inverse_dynamics, parallel_joint_forward_dynamics, parallel_joint_inverse_dynamics,
                  parallel_mass_matrix, platform_forward_kinematics, platform_inverse_kinematics, platform_jacobian)

__all__ = ["platform_inverse_kinematics", "platform_forward_kinematics", "platform_jacobian",
           "parallel_inverse_dynamics", "parallel_forward_dynamics", "parallel_joint_inverse_dynamics",
           "parallel_joint_forward_dynamics", "parallel_gravity_torques", "parallel_coriolis_torques",
           "parallel_mass_matrix"]
