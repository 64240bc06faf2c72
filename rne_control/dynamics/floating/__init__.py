"""Floating-base trees (Khalil 2010, §7): a mobile base body at the root of the tree.

moving_base.py: the RNE from a prescribed base motion, continued to the base wrench (§7.1);
free_floating.py: inverse dynamics of a free-floating base, Khalil's three passes (§7.2);
floating_aba.py: direct dynamics, the articulated-body algorithm with a free root (§7.3); momentum.py:
the base twist of a given centroidal momentum (conservation of momentum of a free-floating robot);
base_body.py: the base inputs (twist, orientation quaternion) and the base-body solves shared by
these kernels; api.py: the public functions below.
"""
from .api import (base_twist_from_momentum, centroidal_momentum, floating_forward_dynamics,
                  free_floating_inverse_dynamics, moving_base_inverse_dynamics)

__all__ = ["moving_base_inverse_dynamics", "free_floating_inverse_dynamics", "base_twist_from_momentum",
           "floating_forward_dynamics", "centroidal_momentum"]
