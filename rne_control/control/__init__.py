"""Control layer: trajectories, control laws, limits, ramps and the state watchdog.

Pure Python/numpy on top of :mod:`rne_control.dynamics`; no ROS imports.
"""
from .laws import (BASES, BASE_VELOCITY_SOURCES, MODES, SPLIT_PARTS, BaseState, ControlLaw,
                   default_gains, quat_to_matrix)
from .limits import EffortLimiter, check_limits
from .plants.elastic import ElasticPlant
from .ramp import OffsetRamp, Ramp
from .tolerances import GoalTracker, Tolerances, resolve_tolerance
from .trajectory import PreparedTrajectory, TrajectoryError, TrajectoryGenerator
from .watchdog import FRESH, NO_STATE, ON_STALE, STALE, Watchdog

__all__ = [
    "BASES", "BASE_VELOCITY_SOURCES", "MODES", "SPLIT_PARTS", "BaseState", "ControlLaw", "default_gains",
    "quat_to_matrix", "EffortLimiter", "check_limits", "OffsetRamp", "Ramp", "PreparedTrajectory",
    "TrajectoryError", "TrajectoryGenerator", "FRESH", "NO_STATE", "ON_STALE", "STALE", "Watchdog", "ElasticPlant",
    "GoalTracker", "Tolerances", "resolve_tolerance",
]
