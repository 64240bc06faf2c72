"""Trees with lumped elasticity (Khalil 2010, §6; Khalil & Gautier 2000).

kernels.py: direct dynamics (§6.2), the articulated-body algorithm with the springs' and dampers'
torques at the passive joints, and inverse dynamics (§6.3, eqs. 72-82), Khalil's three recursive passes
giving the rigid joints' torques and the passive joints' accelerations; api.py: the public functions
below.
"""
from .api import elastic_coriolis_torques, elastic_forward_dynamics, elastic_gravity_torques, elastic_inverse_dynamics

__all__ = ["elastic_inverse_dynamics", "elastic_forward_dynamics", "elastic_gravity_torques",
           "elastic_coriolis_torques"]
