"""Closed-loop robots (Khalil 2010, §2.2 and §4): a tree plus cut joints and mimic couplings.

The loops are closed by Newton-Raphson on the loop-closure equations (eq. 3, closure.py and solve.py);
G = dq/dq_active (eq. 56) and the constraint bias Phi' qd (bias.py) turn the tree's dynamics into the
closed-loop ones, Gamma_c = G^T Gamma_tree (eqs. 55, 57) and A_c qdd_a + H_c = Gamma_c (eq. 58),
computed in kernels.py by the tree's own kernels (rnea, gravity, crba). arrays.py lays out the loop
workspace of a model's ``loops.LK`` (its constants: rne_control.model.layout); api.py holds the
public functions below.
"""
from .api import (LoopClosureError, closed_loop_coriolis_torques, closed_loop_forward_dynamics,
                  closed_loop_gravity_torques, closed_loop_inverse_dynamics, closed_loop_mass_matrix, loop_jacobian,
                  solve_loops)

__all__ = ["LoopClosureError", "solve_loops", "loop_jacobian", "closed_loop_inverse_dynamics",
           "closed_loop_gravity_torques", "closed_loop_coriolis_torques", "closed_loop_mass_matrix",
           "closed_loop_forward_dynamics"]
