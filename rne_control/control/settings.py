"""The run-time settings of a control cycle: one validated snapshot of the values a user may change
while the controller runs (mode, base, gains, gravity, payload, friction compensation, effort limits,
state timeout, on_stale, ramp time, the momentum observer's and the collision reaction's settings, the
task-space laws' (:mod:`rne_control.control.task.settings`)). A ``ValueError`` names the value and why; the
running settings stay.
``rne_controller`` declares them as ROS parameters (:mod:`rne_control.ros.controller.settings`).
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .collision import REACTIONS, CollisionError, per_joint
from .laws import BASE_VELOCITY_SOURCES, BASES, MODES, default_gains
from .limits import check_limits, model_limits
from .observer import WRENCH_DAMPING, ObserverError, check_gain
from .task import settings as task
from .task.law import default_frame
from .watchdog import ON_STALE

TORQUE_SOURCES = ("commanded", "measured")
# the defaults derived from each joint's effort limit; where that limit is infinite, none (+inf): no
# collision test on that joint (``collision_off``), and no damping, so that ``damp`` is refused there
THRESHOLD_FRACTION = 0.2   # default collision threshold: this fraction of each joint's effort limit
DAMP_TIME = 0.1            # s: default collision.damping D = DAMP_TIME x effort limit (per rad/s or m/s)

# the run-time values' defaults (None: derived from the plant, see Settings)
DEFAULTS = {"mode": "computed_torque", "base": "fixed", "base_velocity_source": "odometry", "kp": None, "kd": None,
            "hold_kp": None, "hold_kd": None, "gravity": None, "payload_link": "", "payload_mass": 0.0,
            "payload_com": [0.0, 0.0, 0.0], "payload_inertia": [0.0] * 6, "friction_compensation": False,
            "effort_limits": None, "state_timeout": 0.05, "on_stale": "hold", "ramp_time": 0.5,
            "observer.enabled": True, "observer.gain": [50.0], "observer.torque_source": "commanded",
            "observer.wrench_frame": "", "observer.wrench_damping": WRENCH_DAMPING,
            "collision.thresholds": None, "collision.reaction": "none", "collision.damping": None,
            "collision.reflex_gain": [1.0], **task.DEFAULTS}
_RAMPED = ("mode", "base", "base_velocity_source", "kp", "kd", "hold_kp", "hold_kd", "gravity", "payload",
           "friction_compensation") + task.RAMPED


def _finite_array(name, v, size):
    a = np.asarray(v, dtype=float).reshape(-1)
    if size is not None and a.size != size:
        raise ValueError("%s needs %d values, got %d" % (name, size, a.size))
    if not np.all(np.isfinite(a)):
        raise ValueError("%s must be finite (no NaN or inf)" % name)
    return a



class Settings:
    """A validated snapshot of the run-time parameters (arrays in ``joints`` order)."""

    def __init__(self, values: dict, plant, period: Optional[float] = None):
        """``values``: parameter name -> value (None: unset); ``plant``: the controller's plant; ``period``:
        the nominal cycle time (s), against which the observer's gain is checked (K_O T < 1)."""
        nc = plant.n
        self.mode = values["mode"]
        if self.mode not in MODES:
            raise ValueError("unknown mode %r (one of %s)" % (self.mode, ", ".join(MODES)))
        self.base = values["base"]
        if self.base not in BASES:
            raise ValueError("unknown base %r (one of %s)" % (self.base, ", ".join(BASES)))
        if self.base not in plant.bases:
            raise ValueError("base %r needs a floating-base tree model: start the node with floating_base: true "
                             "(or base: %s), or use a model file with 'base: floating' (the %s model %r offers %s)"
                             % (self.base, self.base, plant.kind, plant.name, ", ".join(plant.bases)))
        self.base_velocity_source = values["base_velocity_source"]
        if self.base_velocity_source not in BASE_VELOCITY_SOURCES:
            raise ValueError("unknown base_velocity_source %r (one of %s)"
                             % (self.base_velocity_source, ", ".join(BASE_VELOCITY_SOURCES)))
        kp0, kd0 = default_gains(nc)
        self.kp = kp0 if values["kp"] is None else _finite_array("kp", values["kp"], nc)
        self.kd = kd0 if values["kd"] is None else _finite_array("kd", values["kd"], nc)
        z = np.zeros(nc)
        self.hold_kp = z if values["hold_kp"] is None else _finite_array("hold_kp", values["hold_kp"], nc)
        self.hold_kd = z.copy() if values["hold_kd"] is None else _finite_array("hold_kd", values["hold_kd"], nc)
        for name in ("kp", "kd", "hold_kp", "hold_kd"):
            if np.any(getattr(self, name) < 0):
                raise ValueError("%s must not be negative" % name)
        self.gravity = (np.array(plant.model_gravity, dtype=float) if values["gravity"] is None
                        else _finite_array("gravity", values["gravity"], 3))
        link = values["payload_link"]
        mass = float(values["payload_mass"])
        if not math.isfinite(mass) or mass < 0:
            raise ValueError("payload_mass must be finite and >= 0 (got %r)" % mass)
        com = _finite_array("payload_com", values["payload_com"], 3)
        inertia = _finite_array("payload_inertia", values["payload_inertia"], 6)
        ixx, iyy, izz, ixy, ixz, iyz = inertia
        Imat = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        if np.any(inertia != 0.0) and np.min(np.linalg.eigvalsh(Imat)) <= 0.0:
            raise ValueError("payload_inertia is not positive definite (eigenvalues %s)"
                             % np.round(np.linalg.eigvalsh(Imat), 6).tolist())
        if link:
            known = set(plant.link_names)
            if link not in known:
                raise ValueError("payload_link %r is not a link of the model (links: %s)"
                                 % (link, ", ".join(sorted(known))))
        self.payload = (link, mass, tuple(com), tuple(inertia)) if (link and mass > 0.0) else None
        self.friction_compensation = bool(values["friction_compensation"])
        if values["effort_limits"] is None:
            self.effort_limits = model_limits(plant.effort_limits)
        else:
            self.effort_limits = check_limits(values["effort_limits"], nc)
        self.state_timeout = float(values["state_timeout"])
        if not (self.state_timeout > 0.0) or math.isinf(self.state_timeout):
            raise ValueError("state_timeout must be a positive finite number of seconds")
        self.on_stale = values["on_stale"]
        if self.on_stale not in ON_STALE:
            raise ValueError("unknown on_stale %r (one of %s)" % (self.on_stale, ", ".join(ON_STALE)))
        self.ramp_time = float(values["ramp_time"])
        if not (self.ramp_time >= 0.0) or math.isinf(self.ramp_time):
            raise ValueError("ramp_time must be a finite number of seconds >= 0")
        self._observer_settings(values, plant, period)
        task.task_settings(self, values, plant)

    def _observer_settings(self, values, plant, period) -> None:
        """observer.* and collision.* (see rne_control.control.external)."""
        nc = plant.n
        self.observer_enabled = bool(values["observer.enabled"])
        self.observer_available = not plant.rigid_tree_unavailable
        try:
            self.observer_gain = check_gain(values["observer.gain"], nc)
        except ObserverError as e:
            raise ValueError("observer.%s" % e) from None
        if period is not None and np.any(self.observer_gain * period >= 1.0):
            raise ValueError("observer.gain %g 1/s times the cycle time %g s must be < 1 (at most %g 1/s at "
                             "this rate)" % (self.observer_gain.max(), period, 1.0 / period))
        self.torque_source = values["observer.torque_source"]
        if self.torque_source not in TORQUE_SOURCES:
            raise ValueError("unknown observer.torque_source %r (one of %s)"
                             % (self.torque_source, ", ".join(TORQUE_SOURCES)))
        self.wrench_damping = float(values["observer.wrench_damping"])
        if not (self.wrench_damping >= 0.0) or math.isinf(self.wrench_damping):
            raise ValueError("observer.wrench_damping must be finite and >= 0 (got %r)" % self.wrench_damping)
        frame = values["observer.wrench_frame"]
        if self.observer_available:
            model = plant.rigid_tree()[0]
            if not frame:
                frame = default_frame(model, plant.joint_names[-1])
            elif frame not in model.link_frames:
                raise ValueError("observer.wrench_frame %r is not a frame the controlled joints move (frames: %s)"
                                 % (frame, ", ".join(sorted(model.link_frames))))
        self.wrench_frame = frame
        limits = self.effort_limits      # > 0, +inf where a joint has none: the derived defaults are +inf there
        try:
            self.collision_thresholds = (THRESHOLD_FRACTION * limits if values["collision.thresholds"] is None
                                         else per_joint("collision.thresholds", values["collision.thresholds"], nc,
                                                        positive=True))
            self.collision_damping = (DAMP_TIME * limits if values["collision.damping"] is None
                                      else per_joint("collision.damping", values["collision.damping"], nc, False))
            self.collision_reflex_gain = per_joint("collision.reflex_gain", values["collision.reflex_gain"], nc,
                                                   positive=False)
        except CollisionError as e:
            raise ValueError(str(e)) from None
        self.collision_reaction = values["collision.reaction"]
        if self.collision_reaction not in REACTIONS:
            raise ValueError("unknown collision.reaction %r (one of %s)"
                             % (self.collision_reaction, ", ".join(REACTIONS)))
        if self.collision_reaction != "none" and not (self.observer_enabled and self.observer_available):
            raise ValueError("collision.reaction %r needs the momentum observer, which is %s"
                             % (self.collision_reaction, "disabled (observer.enabled)" if self.observer_available
                                else "not available: " + plant.rigid_tree_unavailable))
        undamped = [j for j, d in zip(plant.joint_names, self.collision_damping) if not math.isfinite(d)]
        if self.collision_reaction == "damp" and undamped:
            raise ValueError("collision.reaction damp needs a finite collision.damping for every controlled joint; "
                             "%s ha%s no finite effort limit to derive it from: set collision.damping"
                             % (", ".join(undamped), "s" if len(undamped) == 1 else "ve"))
        # the joints without a collision test (no finite effort limit and no collision.thresholds given)
        self.collision_off = tuple(j for j, x in zip(plant.joint_names, self.collision_thresholds)
                                   if math.isinf(x))

    @classmethod
    def of(cls, plant, period: Optional[float] = None, **values) -> "Settings":
        """The settings of ``plant`` with ``values`` changed from :data:`DEFAULTS` (dotted names as
        ``**{"observer.gain": 20.0}``)."""
        unknown = set(values) - set(DEFAULTS)
        if unknown:
            raise ValueError("unknown setting(s) %s (known: %s)" % (sorted(unknown), ", ".join(DEFAULTS)))
        return cls({**DEFAULTS, **values}, plant, period)

    def law_differs(self, other: Optional["Settings"]) -> bool:
        if other is None:
            return True
        for k in _RAMPED:
            a, b = getattr(self, k), getattr(other, k)
            if isinstance(a, np.ndarray):
                if not np.array_equal(a, b):
                    return True
            elif a != b:
                return True
        return False
