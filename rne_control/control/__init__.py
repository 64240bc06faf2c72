"""Control layer: trajectories, control laws, limits, ramps and the state watchdog.

Pure Python/numpy on top of :mod:`rne_control.dynamics`; no ROS imports.
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
