"""Control layer: the plants, control laws, trajectories, limits, ramps and the state watchdog.

A :class:`Plant` wraps a model of any of the four kinds (plants/: a tree on a fixed, moving or
free-floating base, a closed-loop robot, a Gough-Stewart platform, a tree with elastic joints;
:func:`make_plant` picks it), so that the control law and the ROS nodes never branch on the kind. Every
plant's computed torque follows one template (:meth:`Plant.computed_torque`): its fused kernel
(_fused.py, built on the dynamics kernels and _kernels.py) when it has one for the configuration, else
the composed steps; tree_state.py completes a tree plant's state (uncontrolled, locked and mimic joints).

Pure Python/numpy/numba on top of :mod:`rne_control.dynamics`; no ROS imports.
"""
from .laws import (BASES, BASE_VELOCITY_SOURCES, MODES, SPLIT_PARTS, BaseState, ControlLaw,
                   default_gains)
from .limits import EffortLimiter, check_limits
from .plant import Plant, StateError
from .plants import ClosedLoopPlant, ElasticPlant, ParallelPlant, TreePlant, make_plant
from .ramp import OffsetRamp, Ramp
from .tolerances import GoalTracker, Tolerances, resolve_tolerance
from .trajectory import PreparedTrajectory, TrajectoryError, TrajectoryGenerator
from .watchdog import FRESH, NO_STATE, ON_STALE, STALE, Watchdog

__all__ = [
    "BASES", "BASE_VELOCITY_SOURCES", "MODES", "SPLIT_PARTS", "BaseState", "ControlLaw", "default_gains",
    "EffortLimiter", "check_limits", "OffsetRamp", "Ramp", "PreparedTrajectory",
    "TrajectoryError", "TrajectoryGenerator", "FRESH", "NO_STATE", "ON_STALE", "STALE", "Watchdog",
    "Plant", "StateError", "TreePlant", "ClosedLoopPlant", "ElasticPlant", "ParallelPlant", "make_plant",
    "GoalTracker", "Tolerances", "resolve_tolerance",
]
