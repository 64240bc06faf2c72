"""Control laws on the recursive Newton-Euler core.

``mode`` selects which terms enter one RNE call, ``base`` which RNE variant
is called (fixed, moving or free-floating base):

================  ==============  ===========================  =======  ======================================
mode              joint velocity  joint acceleration           gravity  base terms (moving / free-floating)
================  ==============  ===========================  =======  ======================================
computed_torque   measured        qdd_d + Kd e_dot + Kp e      yes      twist and acceleration (measured/solved)
gravity           0               0                            yes      twist and acceleration (measured/solved)
coriolis          measured        0                            no       twist; acceleration none / solved
gravity_coriolis  measured        0                            yes      twist and acceleration (measured/solved)
off               -               -                            -        zero output
================  ==============  ===========================  =======  ======================================

with e = q_d - q and e_dot = qd_d - qd. ``computed_torque`` is one
``inverse_dynamics`` call (no explicit mass matrix). The compensation modes
(``gravity``, ``coriolis``, ``gravity_coriolis``) add an optional PD term
``hold_kp e + hold_kd e_dot`` (zero gains by default). With
``friction=True`` the model's friction ``Fs sign(qd) + Fv qd`` of the
velocity the mode uses is added (the RNE call's own friction term on a fixed
base).

Every feedback term is multiplied by ``feedback_scale`` (0..1), which the
node ramps from 0 to 1 at activation so that only the feedback terms ramp in
while the feed-forward applies at once.

:meth:`ControlLaw.compute` writes into the preallocated ``ControlLaw.tau``
(model joint order) and does not allocate on a fixed base.
:meth:`ControlLaw.split` decomposes the same torque into inertial, Coriolis,
gravity, feedback, friction and base parts (several extra RNE calls: use it
at a lower rate, e.g. for the controller state topic).
"""
from __future__ import annotations

import inspect
import math
from typing import Optional

import numpy as np

from . import _kernels as K

MODES = ("computed_torque", "gravity", "coriolis", "gravity_coriolis", "off")
BASES = ("fixed", "moving", "free_floating")
BASE_VELOCITY_SOURCES = ("odometry", "momentum")

# per mode: (uses measured velocity, uses gravity, uses base acceleration on a moving base)
_MODE_TERMS = {
    "computed_torque": (True, True, True),
    "gravity": (False, True, True),
    "coriolis": (True, False, False),
    "gravity_coriolis": (True, True, True),
    "off": (False, False, False),
}

SPLIT_PARTS = ("inertial", "coriolis", "gravity", "feedback", "friction", "base")


def default_gains(n: int, omega: float = 10.0, zeta: float = 1.0):
    """kp = omega^2, kd = 2 zeta omega per joint (defaults: 100 1/s^2 and 20 1/s)."""
    return np.full(n, omega * omega), np.full(n, 2.0 * zeta * omega)


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w) (base -> world)."""
    x, y, z, w = (float(v) for v in q)
    nrm = math.sqrt(x * x + y * y + z * z + w * w)
    if nrm == 0.0:
        return np.eye(3)
    x, y, z, w = x / nrm, y / nrm, z / nrm, w / nrm
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


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


def _friction_coefficients(model, inverse_dynamics):
    """(Fs, Fv) per joint, probed through inverse_dynamics (friction is diagonal)."""
    n = model.n
    q = np.zeros(n)
    z = np.zeros(n)
    g0 = np.zeros(3)
    one = np.ones(n)
    f1 = (np.asarray(inverse_dynamics(model, q, one, z, gravity=g0, friction=True))
          - np.asarray(inverse_dynamics(model, q, one, z, gravity=g0, friction=False)))
    f2 = (np.asarray(inverse_dynamics(model, q, 2 * one, z, gravity=g0, friction=True))
          - np.asarray(inverse_dynamics(model, q, 2 * one, z, gravity=g0, friction=False)))
    fv = f2 - f1
    fs = 2 * f1 - f2
    fv[np.abs(fv) < 1e-12] = 0.0
    fs[np.abs(fs) < 1e-12] = 0.0
    return fs, fv


class ControlLaw:
    """The torque laws of the module docstring for one model (all joints of it).

    Arrays are in ``model.joint_names`` order. Gains are per model joint; give
    zero gains to joints you do not control.
    """

    def __init__(self, model, dynamics=None):
        if dynamics is None:
            dynamics = default_dynamics()
        self.dyn = dynamics
        self.model = model
        n = self.n = model.n
        self._id = dynamics.inverse_dynamics
        self._g = dynamics.gravity_torques
        self._c = dynamics.coriolis_torques
        self._mb = getattr(dynamics, "moving_base_inverse_dynamics", None)
        self._ff = getattr(dynamics, "free_floating_inverse_dynamics", None)
        self._mom = getattr(dynamics, "base_twist_from_momentum", None)
        self._mb_kw = _kwargs_of(self._mb)
        self._ff_kw = _kwargs_of(self._ff)
        self.kp, self.kd = default_gains(n)
        self.hold_kp = np.zeros(n)
        self.hold_kd = np.zeros(n)
        self.mode = "computed_torque"
        self.base = "fixed"
        self.base_velocity_source = "odometry"
        self.friction = False
        self.gravity = np.array(model.gravity, dtype=float)
        self.model_gravity = self.gravity.copy()
        self._garg = None
        self.tau = np.zeros(n)
        self._zero = np.zeros(n)
        self._zero3 = np.zeros(3)
        self._qdd = np.zeros(n)
        self._tmp = np.zeros(n)
        self._fs, self._fv = _friction_coefficients(model, self._id)
        self.has_friction = bool(np.any(self._fs) or np.any(self._fv))
        self.last_base_output = None  # base wrench (moving) or base acceleration (free-floating)

    # ------------------------------------------------------------ settings
    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError("unknown mode %r (one of %s)" % (mode, ", ".join(MODES)))
        self.mode = mode

    def set_base(self, base: str) -> None:
        if base not in BASES:
            raise ValueError("unknown base %r (one of %s)" % (base, ", ".join(BASES)))
        if base == "moving" and self._mb is None:
            raise ValueError("base 'moving' needs moving_base_inverse_dynamics, which the dynamics library lacks")
        if base == "free_floating" and self._ff is None:
            raise ValueError("base 'free_floating' needs free_floating_inverse_dynamics, "
                             "which the dynamics library lacks")
        self.base = base

    def set_gravity(self, gravity=None) -> None:
        """None: the gravity the model was loaded with."""
        g = self.model_gravity if gravity is None else gravity
        g = np.asarray(g, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError("gravity must be 3 finite values")
        self.gravity = g.copy()
        if hasattr(self.model, "set_gravity"):
            # into the model's swappable buffer: the dynamics calls keep their fast path (gravity=None)
            self.model.set_gravity(g)
            self._garg = None
        else:
            self._garg = None if np.array_equal(g, np.asarray(self.model.gravity, dtype=float)) else self.gravity

    # ------------------------------------------------------------- helpers
    def _add_friction(self, qd, out) -> None:
        if self.has_friction:
            K.add_friction(qd, self._fs, self._fv, out)

    def base_twist(self, q, qd, base_state: Optional[BaseState]):
        if self.base_velocity_source == "momentum" and self._mom is not None:
            o = base_state.orientation if base_state is not None else (0.0, 0.0, 0.0, 1.0)
            return np.asarray(self._mom(self.model, q, qd, None, o), dtype=float)
        if base_state is None:
            return np.zeros(6)
        return base_state.twist

    def _moving(self, q, qd, qdd, base_state, use_gravity, use_accel):
        bs = base_state if base_state is not None else BaseState()
        accel = bs.accel if use_accel else np.zeros(6)
        kw = {}
        g_want = self.gravity if use_gravity else self._zero3
        if "gravity" in self._mb_kw:
            kw["gravity"] = g_want
        else:
            diff = np.asarray(self.model.gravity, dtype=float) - g_want
            if np.any(diff):
                R = quat_to_matrix(bs.orientation)
                accel = accel.copy()
                accel[:3] += R.T @ diff
        if "friction" in self._mb_kw:
            kw["friction"] = False
        tau, wrench = self._mb(self.model, q, qd, qdd, self.base_twist(q, qd, bs), accel, bs.orientation, **kw)
        self.last_base_output = wrench
        return tau

    def _free(self, q, qd, qdd, base_state):
        bs = base_state if base_state is not None else BaseState()
        kw = {}
        if "friction" in self._ff_kw:
            kw["friction"] = False
        tau, acc = self._ff(self.model, q, qd, qdd, self.base_twist(q, qd, bs), bs.orientation, **kw)
        self.last_base_output = acc
        return tau

    def effective_gravity(self, base_state: Optional[BaseState] = None) -> np.ndarray:
        """Gravity in base coordinates for the current base (zero when free-floating)."""
        if self.base == "free_floating":
            return self._zero3
        if self.base == "moving" and base_state is not None:
            return quat_to_matrix(base_state.orientation).T @ self.gravity
        return self.gravity

    def _gravity_arg(self, base_state):
        """The ``gravity`` argument for a fixed-base dynamics call: None (the fast path) when the model
        already holds the effective gravity, else the effective gravity in base coordinates."""
        g = self.effective_gravity(base_state)
        return None if g is self.gravity and self._garg is None else g

    def hold_torque(self, q, base_state: Optional[BaseState] = None, out=None):
        """Gravity torques of configuration q, no velocity or feedback terms (stale-state hold)."""
        out = self.tau if out is None else out
        self._g(self.model, q, gravity=self._gravity_arg(base_state), out=out)
        return out

    # ------------------------------------------------------------- compute
    def compute(self, q, qd, q_d, qd_d, qdd_d, feedback_scale: float = 1.0,
                base_state: Optional[BaseState] = None):
        """Torque of the current law into ``self.tau`` (returned)."""
        mode = self.mode
        tau = self.tau
        if mode == "off":
            tau.fill(0.0)
            return tau
        s = float(feedback_scale)
        fixed = self.base == "fixed"
        if mode == "computed_torque":
            K.ct_reference(qdd_d, qd_d, qd, q_d, q, self.kp, self.kd, s, self._qdd)
            if fixed:
                self._id(self.model, q, qd, self._qdd, gravity=self._garg, friction=self.friction, out=tau)
                return tau
            qd_used, qdd_used = qd, self._qdd
        else:
            use_vel, use_grav, _ = _MODE_TERMS[mode]
            if fixed:
                if mode == "gravity":
                    self._g(self.model, q, gravity=self._garg, out=tau)
                elif mode == "coriolis":
                    self._c(self.model, q, qd, out=tau)
                    if self.friction:
                        self._add_friction(qd, tau)
                else:  # gravity_coriolis
                    self._id(self.model, q, qd, self._zero, gravity=self._garg, friction=self.friction, out=tau)
                K.add_pd(q_d, q, qd_d, qd, self.hold_kp, self.hold_kd, s, tau)
                return tau
            qd_used = qd if use_vel else self._zero
            qdd_used = self._zero
        use_vel, use_grav, use_acc = _MODE_TERMS[mode]
        if self.base == "moving":
            res = self._moving(q, qd_used, qdd_used, base_state, use_grav, use_acc)
        else:
            res = self._free(q, qd_used, qdd_used, base_state)
        np.copyto(tau, res)
        if self.friction and use_vel:
            self._add_friction(qd, tau)
        if mode != "computed_torque":
            K.add_pd(q_d, q, qd_d, qd, self.hold_kp, self.hold_kd, s, tau)
        return tau

    def split(self, q, qd, q_d, qd_d, qdd_d, feedback_scale: float = 1.0,
              base_state: Optional[BaseState] = None, out: Optional[dict] = None) -> dict:
        """Decompose the law's torque into ``SPLIT_PARTS`` (dict of (n,) arrays).

        The parts sum to :meth:`compute`'s torque. ``base`` holds what the
        moving or free-floating base adds beyond the fixed-base terms (zero on
        a fixed base). Allocates; not for the hot path.
        """
        n = self.n
        if out is None:
            out = {k: np.zeros(n) for k in SPLIT_PARTS}
        for v in out.values():
            v.fill(0.0)
        mode = self.mode
        total = self.compute(q, qd, q_d, qd_d, qdd_d, feedback_scale, base_state).copy()
        if mode == "off":
            return out
        s = float(feedback_scale)
        use_vel, use_grav, _ = _MODE_TERMS[mode]
        m = self.model
        if use_grav:
            out["gravity"][:] = self._g(m, q, gravity=self._gravity_arg(base_state))
        if use_vel:
            out["coriolis"][:] = self._c(m, q, qd)
            if self.friction:
                self._add_friction(qd, out["friction"])
        if mode == "computed_torque":  # M(q) (rotor inertia included) times each acceleration term
            M = self.dyn.mass_matrix(m, q)
            out["inertial"][:] = M @ qdd_d
            out["feedback"][:] = M @ (s * (self.kd * (qd_d - qd) + self.kp * (q_d - q)))
        else:
            out["feedback"][:] = s * (self.hold_kp * (q_d - q) + self.hold_kd * (qd_d - qd))
        rest = total - sum(out[k] for k in SPLIT_PARTS if k != "base")
        if self.base == "fixed":
            # numerical round-off only: fold it into the largest term so the parts still sum exactly
            out["coriolis" if use_vel else "gravity"] += rest
        else:
            out["base"][:] = rest
        return out


def default_dynamics():
    """The module providing the dynamics functions (rne_control.dynamics, else rne_control)."""
    from .. import dynamics
    if hasattr(dynamics, "inverse_dynamics"):
        return dynamics
    import rne_control
    return rne_control


def _kwargs_of(fn):
    if fn is None:
        return set()
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return set()
