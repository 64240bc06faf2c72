"""The task-space run-time settings: defaults and validation (one snapshot, part of
:class:`~rne_control.control.settings.Settings`). A ``ValueError`` names the value and why."""
from __future__ import annotations

import math

import numpy as np

from .law import DAMPING_DESIGNS, PROJECTORS, TASK_MODES, task_unavailable

DEFAULTS = {"cartesian_stiffness": [200.0, 200.0, 200.0, 20.0, 20.0, 20.0], "cartesian_damping_ratio": [1.0],
            "damping_design": "double_diagonalization", "cartesian_kp": [100.0], "cartesian_kd": [20.0],
            "nullspace_stiffness": [10.0], "nullspace_damping_ratio": [1.0], "nullspace_projector": "dynamic",
            "nullspace_posture": None, "error_clip": [0.1, 0.5], "max_cartesian_velocity": [0.25, 1.0],
            "singular_damping": 0.05, "max_effort_rate": 1000.0}
# the values whose change blends the command from the old law to the new one
RAMPED = ("cartesian_stiffness", "cartesian_damping_ratio", "damping_design", "cartesian_kp", "cartesian_kd",
          "nullspace_stiffness", "nullspace_damping_ratio", "nullspace_projector", "error_clip", "singular_damping")


def _values(name, v, sizes, lower=0.0, strict=False, one=True):
    """``v`` as a float array of one of ``sizes`` (with ``one``, one value repeated to the largest), finite and
    >= lower (> lower with ``strict``)."""
    a = np.asarray(v, dtype=float).reshape(-1)
    if one and a.size == 1 and max(sizes) > 1:
        a = np.full(max(sizes), a[0])
    if a.size not in sizes:
        allowed = sorted({1, *sizes}) if one else sorted(sizes)
        raise ValueError("%s needs %s values, got %d" % (name, " or ".join(str(s) for s in allowed),
                                                        np.asarray(v).size))
    if not np.all(np.isfinite(a)):
        raise ValueError("%s must be finite (no NaN or inf)" % name)
    if np.any(a <= lower) if strict else np.any(a < lower):
        raise ValueError("%s must be %s %g (got %s)" % (name, ">" if strict else ">=", lower, a.tolist()))
    return a


def task_settings(s, values, plant) -> None:
    """Validate the task-space values into the Settings ``s`` (its mode and base already checked)."""
    n = plant.n
    s.cartesian_stiffness = _values("cartesian_stiffness", values["cartesian_stiffness"], (6,))
    s.cartesian_damping_ratio = _values("cartesian_damping_ratio", values["cartesian_damping_ratio"], (6,),
                                        strict=True)
    s.damping_design = values["damping_design"]
    if s.damping_design not in DAMPING_DESIGNS:
        raise ValueError("unknown damping_design %r (one of %s)" % (s.damping_design, ", ".join(DAMPING_DESIGNS)))
    s.cartesian_kp = _values("cartesian_kp", values["cartesian_kp"], (6,))
    s.cartesian_kd = _values("cartesian_kd", values["cartesian_kd"], (6,))
    s.nullspace_stiffness = _values("nullspace_stiffness", values["nullspace_stiffness"], (n,))
    s.nullspace_damping_ratio = _values("nullspace_damping_ratio", values["nullspace_damping_ratio"], (n,))
    s.nullspace_projector = values["nullspace_projector"]
    if s.nullspace_projector not in PROJECTORS:
        raise ValueError("unknown nullspace_projector %r (one of %s)" % (s.nullspace_projector, ", ".join(PROJECTORS)))
    posture = values["nullspace_posture"]
    if posture is not None and len(posture) == 0:
        posture = None
    if posture is not None:
        posture = np.asarray(posture, dtype=float).reshape(-1)
        if posture.size != n or not np.all(np.isfinite(posture)):
            raise ValueError("nullspace_posture needs %d finite values (%s), got %s"
                             % (n, ", ".join(plant.joint_names), posture.tolist()))
    s.nullspace_posture = posture
    s.error_clip = _values("error_clip", values["error_clip"], (2,), strict=True, one=False)
    s.max_cartesian_velocity = _values("max_cartesian_velocity", values["max_cartesian_velocity"], (2,), one=False)
    if (s.max_cartesian_velocity[0] > 0) != (s.max_cartesian_velocity[1] > 0):
        raise ValueError("max_cartesian_velocity: both limits > 0 (shaped targets) or both 0 (targets step), got %s"
                         % s.max_cartesian_velocity.tolist())
    s.singular_damping = float(values["singular_damping"])
    if not (s.singular_damping >= 0.0) or math.isinf(s.singular_damping):
        raise ValueError("singular_damping must be finite and >= 0 (got %r)" % s.singular_damping)
    s.max_effort_rate = float(values["max_effort_rate"])
    if not (s.max_effort_rate >= 0.0) or math.isinf(s.max_effort_rate):
        raise ValueError("max_effort_rate must be finite and >= 0 (N m/s; 0: no limit), got %r" % s.max_effort_rate)
    if s.mode in TASK_MODES:
        why = task_unavailable(plant)
        if why:
            raise ValueError("mode %s is not available for the %s model %r: %s" % (s.mode, plant.kind, plant.name, why))
        if s.base != "fixed":
            raise ValueError("mode %s needs base: fixed (got %s): the task-space laws are for a fixed base"
                             % (s.mode, s.base))
