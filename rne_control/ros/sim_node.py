"""Deprecated: ``rne_sim`` moved to :mod:`rne_control.ros.sim.node`; this module re-exports it with a
DeprecationWarning."""
import warnings

from .sim.node import NODE_NAME, SimNode, main

__all__ = ["NODE_NAME", "SimNode", "main"]

warnings.warn("rne_control.ros.sim_node moved to rne_control.ros.sim.node", DeprecationWarning, stacklevel=2)
