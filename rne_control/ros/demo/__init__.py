"""``rne_demo`` (:mod:`.cli`): rne_sim and rne_controller driven through a demo trajectory twice, comparing
two control laws (:mod:`.robots`, :mod:`.motions`, :mod:`.session`, :mod:`.node`, :mod:`.report`); with
``--identify``, before and after identifying the robot (:mod:`.identify`); with ``--collision``, the 7-DOF arm
pressing into a contact plane without and with a collision reaction (:mod:`.collision`,
:mod:`.collision_report`); with ``--cartesian``, the 7-DOF arm in Cartesian impedance under a wrench, through
a 0.3 m / 90 degree target step and pressing with 10 N (:mod:`.cartesian`, :mod:`.cartesian_report`).

The names that the module ``rne_control.ros.demo`` had before it became this package (``main``,
``config_plant``, ``out_and_back``, ...) still resolve, with a DeprecationWarning naming their new module.
"""
import importlib
import warnings

_MOVED = {"main": "cli", "TIME_BUDGET": "cli", "ROBOTS": "robots", "config_plant": "robots",
          "mass_diagonal": "robots", "out_and_back": "motions", "platform_sines": "motions",
          "pose_coordinates": "motions", "task_coordinates": "motions", "TASK_LABELS": "motions",
          "TASK_UNITS": "motions", "Session": "session"}


def __getattr__(name):
    where = _MOVED.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"{__name__}.{name} moved to {__name__}.{where}.{name}", DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(f"{__name__}.{where}"), name)
