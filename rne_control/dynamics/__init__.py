"""Dynamics algorithms on a Model: RNE, gravity, Coriolis, CRBA, ABA, and the floating-base models."""
from .api import coriolis_torques, forward_dynamics, gravity_torques, inverse_dynamics, mass_matrix
from .calls import SingularMassMatrixError

__all__ = ["inverse_dynamics", "gravity_torques", "coriolis_torques", "mass_matrix", "forward_dynamics",
           "SingularMassMatrixError"]
