"""Task-space torque control (no ROS): Cartesian impedance and operational-space control of an end-effector
frame on a tree on a fixed base (law.py; the compiled law in _kernel.py), the shaped target (shaping.py),
the rotations (rotation.py) and the settings (settings.py)."""
from .law import DAMPING_DESIGNS, PROJECTORS, TASK_MODES, TaskError, TaskSpace, task_unavailable

__all__ = ["DAMPING_DESIGNS", "PROJECTORS", "TASK_MODES", "TaskError", "TaskSpace", "task_unavailable"]
