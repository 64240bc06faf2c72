"""Control laws on the recursive Newton-Euler core, through the one :class:`~rne_control.control.plant.Plant`
interface that every kind of model offers (tree on a fixed, moving or free-floating base, closed loop,
parallel platform, elastic joints), so the law never branches on the kind of model.

``mode`` selects which terms enter one inverse-dynamics call of the plant; on a
tree, ``base`` selects which RNE variant is called (fixed, moving or
free-floating base):

================  ==============  ===========================  =======  ======================================
mode              joint velocity  joint acceleration           gravity  base terms (moving / free-floating)
================  ==============  ===========================  =======  ======================================
computed_torque   measured        qdd_d + Kd e_dot + Kp e      yes      twist and acceleration (measured/solved)
gravity           0               0                            yes      twist and acceleration (measured/solved)
coriolis          measured        0                            no       twist; acceleration none / solved
gravity_coriolis  measured        0                            yes      twist and acceleration (measured/solved)
off               -               -                            -        zero output
================  ==============  ===========================  =======  ======================================

and the task-space modes ``cartesian_impedance`` and ``operational_space`` on a tree on a fixed base
(:mod:`rne_control.control.task`: the pose of an end-effector frame, its target, a null-space posture).

with e = q_d - q and e_dot = qd_d - qd. ``computed_torque`` is one
``inverse_dynamics`` call (no explicit mass matrix). The compensation modes
(``gravity``, ``coriolis``, ``gravity_coriolis``) add an optional PD term
``hold_kp e + hold_kd e_dot`` (zero gains by default). With
``friction=True`` the model's friction ``Fs sign(qd) + Fv qd`` of the
velocity the mode uses is added (the inverse-dynamics call's own friction term).

Every feedback term is multiplied by ``feedback_scale`` (0..1), which the
node ramps from 0 to 1 at activation so that only the feedback terms ramp in
while the feed-forward applies at once.

:meth:`ControlLaw.compute` writes into the preallocated ``ControlLaw.tau``
(the plant's ``joint_names`` order) and does not allocate on a fixed-base tree.
:meth:`ControlLaw.split` decomposes the same torque into inertial, Coriolis,
gravity, feedback, friction and base parts (several extra RNE calls: use it
at a lower rate, e.g. for the controller state topic).
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

import numpy as np

from . import _kernels as K
from .plant import Plant
from .plants import make_plant
from .plants.tree import BASE_VELOCITY_SOURCES
from .task import TASK_MODES, TaskSpace
from .task.settings import DEFAULTS as TASK_DEFAULTS, task_settings

JOINT_MODES = ("computed_torque", "gravity", "coriolis", "gravity_coriolis", "off")
MODES = JOINT_MODES + TASK_MODES
BASES = ("fixed", "moving", "free_floating")

# per mode: (uses measured velocity, uses gravity)
_MODE_TERMS = {
    "computed_torque": (True, True),
    "gravity": (False, True),
    "coriolis": (True, False),
    "gravity_coriolis": (True, True),
    "off": (False, False),
    "cartesian_impedance": (True, True),
    "operational_space": (True, True),
}

SPLIT_PARTS = ("inertial", "coriolis", "gravity", "feedback", "friction", "base")


def default_gains(n: int, omega: float = 10.0, zeta: float = 1.0):
    """kp = omega^2, kd = 2 zeta omega per joint (defaults: 100 1/s^2 and 20 1/s)."""
    return np.full(n, omega * omega), np.full(n, 2.0 * zeta * omega)


class BaseState:
    """Measured state of a moving or free-floating base.

    ``orientation`` (x, y, z, w) base -> world; ``twist`` = [v; w] of the base
    origin in the base frame; ``accel`` = d/dt of that twist (spatial, the
    dynamics library's convention). Use :meth:`set_classical_accel` to set it
    from a classical acceleration of the base origin (as in
    geometry_msgs/AccelStamped).
    """

    def __init__(self):
        self.orientation = np.array([0.0, 0.0, 0.0, 1.0])
        self.twist = np.zeros(6)
        self.accel = np.zeros(6)
        self.classical_accel = np.zeros(6)
        self.have_odometry = False
        self.have_accel = False

    def set_odometry(self, orientation, twist) -> None:
        o = np.asarray(orientation, dtype=float)
        nrm = float(np.linalg.norm(o))
        if nrm == 0.0 or not np.all(np.isfinite(o)):
            raise ValueError("base orientation must be a finite non-zero quaternion")
        self.orientation[:] = o / nrm
        self.twist[:] = twist
        self.have_odometry = True
        self._update_accel()

    def set_classical_accel(self, linear, angular) -> None:
        self.classical_accel[:3] = linear
        self.classical_accel[3:] = angular
        self.have_accel = True
        self._update_accel()

    def _update_accel(self) -> None:
        # spatial accel: vdot = a_origin - w x v ; wdot unchanged
        v = self.twist[:3]
        w = self.twist[3:]
        a = self.classical_accel
        self.accel[:3] = a[:3] - np.cross(w, v)
        self.accel[3:] = a[3:]


class ControlLaw:
    """The torque laws of the module docstring on one :class:`~rne_control.control.plant.Plant`.

    ``ControlLaw(model)`` wraps a model in its plant (:func:`~rne_control.control.plants.make_plant`, every
    actuated joint controlled). Arrays (gains, desired state, ``tau``) are in the plant's ``joint_names``
    order (N); the measured state given to :meth:`compute` is in its ``state_names`` order.
    """

    def __init__(self, plant):
        if not isinstance(plant, Plant):
            plant = make_plant(plant)
        self.plant = plant
        n = self.n = plant.n
        self.kp, self.kd = default_gains(n)
        self.hold_kp = np.zeros(n)
        self.hold_kd = np.zeros(n)
        self.mode = "computed_torque"
        self.friction = False
        self.gravity = np.array(plant.model_gravity, dtype=float)
        self.task = None             # the TaskSpace of the task-space modes (enable_task)
        self.tau = np.zeros(n)
        self._zero = np.zeros(n)
        self._qdd = np.zeros(n)
        self._tmp = np.zeros(n)

    # ------------------------------------------------------------ settings
    @property
    def base(self) -> str:
        return self.plant.base

    @property
    def model_gravity(self) -> np.ndarray:
        return self.plant.model_gravity

    @property
    def base_velocity_source(self) -> str:
        """``odometry`` | ``momentum``: where a free-floating base's twist comes from."""
        return getattr(self.plant, "base_velocity_source", "odometry")

    @base_velocity_source.setter
    def base_velocity_source(self, source: str) -> None:
        if source not in BASE_VELOCITY_SOURCES:
            raise ValueError("unknown base_velocity_source %r (one of %s)" % (source, ", ".join(BASE_VELOCITY_SOURCES)))
        self.plant.base_velocity_source = source

    def set_mode(self, mode: str) -> None:
        """One of MODES; a task-space mode on a law without a task space enables it (:meth:`enable_task`,
        the default frame and settings)."""
        if mode not in MODES:
            raise ValueError("unknown mode %r (one of %s)" % (mode, ", ".join(MODES)))
        if mode in TASK_MODES and self.task is None:
            self.enable_task()
        if mode in TASK_MODES:
            self.task.configure(mode, self._task_settings or self._task_defaults(mode))
        self.mode = mode

    def _task_defaults(self, mode):
        """The task values' defaults (rne_control.control.task.settings) as a settings snapshot."""
        s = SimpleNamespace(mode=mode, base="fixed", friction_compensation=self.friction)
        task_settings(s, TASK_DEFAULTS, self.plant)
        return s

    _task_settings = None

    def enable_task(self, frame: Optional[str] = None, settings=None) -> TaskSpace:
        """The task space of the end-effector ``frame`` (default: the child link of the last controlled joint)
        with the task values of the Settings ``settings`` (default: their defaults): ``self.task``. Raises
        TaskError (a ValueError) naming the frame, or saying why the plant has none."""
        self.task = TaskSpace(self.plant, frame)
        self._task_settings = settings
        return self.task

    def configure_task(self, settings) -> None:
        """The task values of the Settings ``settings`` for the task-space modes (installed at once in one)."""
        self._task_settings = settings
        if self.mode in TASK_MODES:
            self.task.configure(self.mode, settings)

    def set_base(self, base: str, base_state: Optional[BaseState] = None) -> None:
        """One of the plant's ``bases``; a moving or free-floating base reads ``base_state``."""
        if base not in BASES:
            raise ValueError("unknown base %r (one of %s)" % (base, ", ".join(BASES)))
        self.plant.set_base(base, base_state if base_state is not None or base == "fixed" else BaseState())

    def set_gravity(self, gravity=None) -> None:
        """Gravity (m/s^2, world frame); None: the gravity the model was loaded with."""
        g = self.plant.model_gravity if gravity is None else gravity
        g = np.asarray(g, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError("gravity must be 3 finite values")
        self.gravity = g.copy()
        self.plant.set_gravity(g)

    def hold_torque(self, out=None):
        """Gravity torques at the state last set (no velocity or feedback terms): the stale-state hold."""
        out = self.tau if out is None else out
        return self.plant.gravity_torques(out)

    # ------------------------------------------------------------- compute
    def compute(self, q, qd, q_d, qd_d, qdd_d, feedback_scale: float = 1.0,
                base_state: Optional[BaseState] = None, t: float = 0.0):
        """Torque of the current law into ``self.tau`` (returned).

        ``q``, ``qd``: the measured state in the plant's ``state_names`` order (NaN: an optional joint not
        measured); it is set on the plant first, which raises :class:`~rne_control.control.plant.StateError`
        if it cannot accept it. ``q_d``, ``qd_d``, ``qdd_d``: the desired controlled coordinates.
        ``base_state``: replaces the plant's measured base state, if given. ``t`` (s): the time at which a
        task-space mode samples its shaped target (the desired joint state is then unused)."""
        plant = self.plant
        if base_state is not None and plant.base != "fixed":
            plant.base_state = base_state
        mode = self.mode
        tau = self.tau
        s = float(feedback_scale)
        if mode in TASK_MODES:
            return self.task.compute(q, qd, t, s, tau)
        if mode == "computed_torque":
            return plant.computed_torque(q, qd, q_d, qd_d, qdd_d, self.kp, self.kd, s, self.friction, self._qdd, tau)
        plant.set_state(q, qd)
        if mode == "off":
            tau.fill(0.0)
            return tau
        q, qd = plant.q, plant.qd
        if mode == "gravity":
            plant.gravity_torques(tau)
        elif mode == "coriolis":
            plant.coriolis_torques(tau)
            if self.friction:
                K.blend_offset(tau, plant.friction_torques(self._tmp), 1.0)
        else:  # gravity_coriolis
            plant.inverse_dynamics(self._zero, self.friction, tau)
        K.add_pd(q_d, q, qd_d, qd, self.hold_kp, self.hold_kd, s, tau)
        return tau

    def split(self, q, qd, q_d, qd_d, qdd_d, feedback_scale: float = 1.0,
              base_state: Optional[BaseState] = None, out: Optional[dict] = None, total=None,
              t: float = 0.0) -> dict:
        """Decompose the law's torque into ``SPLIT_PARTS`` (dict of (N,) arrays).

        The parts sum to :meth:`compute`'s torque. ``base`` holds what a moving or free-floating base adds
        beyond the other terms (zero on a fixed base). ``total``: that torque, when :meth:`compute` has
        just returned it for these arguments (the plant holds their state): it is not computed again.
        Allocates; not for the hot path.
        """
        n = self.n
        if out is None:
            out = {k: np.zeros(n) for k in SPLIT_PARTS}
        for v in out.values():
            v.fill(0.0)
        mode = self.mode
        if total is None:
            total = self.compute(q, qd, q_d, qd_d, qdd_d, feedback_scale, base_state, t).copy()
        if mode == "off":
            return out
        plant = self.plant
        q, qd = plant.q, plant.qd
        s = float(feedback_scale)
        use_vel, use_grav = _MODE_TERMS[mode]
        if use_grav:
            plant.gravity_torques(out["gravity"])
        if use_vel:
            plant.coriolis_torques(out["coriolis"])
            if self.friction:
                plant.friction_torques(out["friction"])
        if mode in TASK_MODES:        # the task-space and null-space terms: what is left
            out["feedback"][:] = total - out["gravity"] - out["coriolis"] - out["friction"]
        elif mode == "computed_torque":  # M(q) (rotor inertia included) times each acceleration term
            feedback = s * (self.kd * (qd_d - qd) + self.kp * (q_d - q))
            if plant.base == "fixed":   # M x = ID(x) - ID(0) without friction: the RNE the cycle has compiled
                h = plant.inverse_dynamics(self._zero, False, np.zeros(self.n))
                out["inertial"][:] = plant.inverse_dynamics(qdd_d, False, np.zeros(self.n)) - h
                out["feedback"][:] = plant.inverse_dynamics(feedback, False, np.zeros(self.n)) - h
            else:                       # a free-floating base's ID is not linear in the joints' M alone
                M = plant.mass_matrix()
                out["inertial"][:] = M @ qdd_d
                out["feedback"][:] = M @ feedback
        else:
            out["feedback"][:] = s * (self.hold_kp * (q_d - q) + self.hold_kd * (qd_d - qd))
        rest = total - sum(out[k] for k in SPLIT_PARTS if k != "base")
        if plant.base == "fixed":
            # numerical round-off only: fold it into the largest term so the parts still sum exactly
            out["coriolis" if use_vel else "gravity"] += rest
        else:
            out["base"][:] = rest
        return out
