"""The Plant of a tree robot on a fixed, moving or free-floating base (Featherstone's RNE; Khalil 2010 §3, §7).

Controlled coordinates are ``joints`` (all movable joints by default, or a subset). The state read from
``/joint_states`` is the controlled joints (required) followed by the model's other movable joints
(optional): an uncontrolled joint that is not measured keeps its last value, initially its ``locked``
value, and is given zero acceleration. Torques are those of the controlled joints.

Bases (``set_base``), with the measured :class:`~rne_control.control.laws.BaseState`:

- ``fixed``: :func:`rne_control.inverse_dynamics` and its gravity-only and Coriolis-only variants;
- ``moving``: :func:`rne_control.moving_base_inverse_dynamics` with the measured base twist and
  acceleration (the gravity torques hold the joints still on the accelerating base; the Coriolis torques
  keep the base twist but neither gravity nor base acceleration);
- ``free_floating``: :func:`rne_control.free_floating_inverse_dynamics`, the base twist measured
  (``base_velocity_source = "odometry"``) or from zero total momentum (``"momentum"``); gravity does not
  act. ``last_base_output`` holds the base wrench (moving) or base acceleration (free-floating) of the
  last call.
"""
import numpy as np

from ...dynamics import api
from ...dynamics import floating_api as fl
from ...dynamics.spatial import FRICTION
from ...model.spatial import quat_to_matrix
from .. import _kernels as K
from .._fused import ready, tree_computed_torque
from ..plant import Plant, StateError, first_missing, joint_friction, payload_links

BASE_VELOCITY_SOURCES = ("odometry", "momentum")


class TreePlant(Plant):
    """A tree model (fixed or floating base) as a Plant; see the module docstring."""

    kind = "tree"

    def __init__(self, model, joints=None, locked=None):
        names = list(model.joint_names)
        joints = names if not joints else list(joints)
        bad = [j for j in joints if j not in names]
        if bad:
            raise ValueError("joints %s are not movable joints of model %r (it has %s)"
                             % (bad, model.name, ", ".join(names)))
        if len(set(joints)) != len(joints):
            raise ValueError("joints lists a joint twice: %s" % joints)
        locked = dict(locked or {})
        bad = [j for j in locked if j not in names or j in joints]
        if bad:
            raise ValueError("locked joints %s are not uncontrolled movable joints of model %r" % (bad, model.name))
        self.model = model
        self.name = model.name
        n = model.n
        self.joint_names = self.required_names = tuple(joints)
        self.state_names = self.sim_names = tuple(joints + [j for j in names if j not in joints])
        self._state_index = np.array([names.index(j) for j in self.state_names], dtype=np.int64)
        self._ctrl = np.array(self._state_index[:len(joints)])
        self._identity = tuple(joints) == tuple(names)
        self.effort_limits = np.array(model.effort_limits, float)[self._ctrl]
        self.velocity_limits = np.array(model.velocity_limits, float)[self._ctrl]
        self.position_limits = np.array(model.position_limits, float)[self._ctrl]
        self.link_names = payload_links(model)
        self.bases = ("fixed", "moving", "free_floating") if model.floating_base else ("fixed",)
        self.sim_floating_base = bool(model.floating_base)
        self.sim_is_model = self._identity
        self.base_velocity_source = "odometry"
        self.last_base_output = None
        self._gravity0 = np.array(model.gravity, float)
        self._Fs, self._Fv = joint_friction(model)
        self.initial_q = np.zeros(n)
        for j, v in locked.items():
            self.initial_q[names.index(j)] = float(v)
        # model-order state and work arrays; with every joint controlled, the state arrays are used as given
        self._q, self._qd = np.array(self.initial_q), np.zeros(n)
        self._qc, self._qdc = np.zeros(len(joints)), np.zeros(len(joints))
        self._qdd, self._tau, self._zero, self._zero3, self._zero6 = (np.zeros(n), np.zeros(n), np.zeros(n),
                                                                      np.zeros(3), np.zeros(6))
        self._first = np.arange(len(joints), dtype=np.int64)
        self._all = np.arange(n, dtype=np.int64)
        self._ct = ready(tree_computed_torque)

    @property
    def initial_state(self):
        """Positions in ``state_names`` order before any measurement (the locked values)."""
        return self.initial_q[self._state_index]

    # ------------------------------------------------------------ state
    def set_state(self, q, qd):
        ns = self._state_index.shape[0]
        if q.shape != (ns,) or qd.shape != (ns,):
            raise StateError("state must have %d positions and velocities (%s), got %s and %s"
                             % (ns, list(self.state_names), q.shape, qd.shape))
        i = first_missing(q, qd, len(self.joint_names))   # checked first: a rejected state changes nothing
        if i >= 0:
            raise StateError("controlled joint '%s' is missing from the joint state or not finite"
                             % self.joint_names[i])
        if self._identity:
            K.gather(q, self._ctrl, self._q, self._ctrl)
            K.gather(qd, self._ctrl, self._qd, self._ctrl)
            return
        first = self._first
        K.gather(q, first, self._qc, first)
        K.gather(qd, first, self._qdc, first)
        K.gather_finite(q, self._all, self._q, self._state_index)
        K.gather_finite(qd, self._all, self._qd, self._state_index)
        K.put(self._qc, self._ctrl, self._q)
        K.put(self._qdc, self._ctrl, self._qd)

    @property
    def q(self):
        return self._q if self._identity else self._qc

    @property
    def qd(self):
        return self._qd if self._identity else self._qdc

    # ------------------------------------------------------------ the RNE calls, per base
    def _call(self, qd, qdd, friction, use_gravity, use_accel, out):
        """tau (N,) of the tree RNE at the state's q with the given model-order qd and qdd, on the current
        base; ``use_gravity``/``use_accel``: whether gravity and the base acceleration act (moving base)."""
        base = self.base
        if base == "fixed":
            full = out if self._identity else self._tau
            m = self.model
            if qdd is self._zero and not friction:
                if use_gravity and qd is self._zero:
                    api.gravity_torques(m, self._q, out=full)
                elif not use_gravity:
                    api.coriolis_torques(m, self._q, qd, out=full)
                else:
                    api.inverse_dynamics(m, self._q, qd, qdd, friction=False, out=full)
            else:
                api.inverse_dynamics(m, self._q, qd, qdd, gravity=None if use_gravity else self._zero3,
                                     friction=friction, out=full)
        else:
            bs = self.base_state
            orientation = bs.orientation
            twist = self._base_twist(bs)
            if base == "moving":
                accel = bs.accel if use_accel else self._zero6
                if not use_gravity:  # cancel the model's gravity, which the RNE applies as a base acceleration
                    accel = np.r_[accel[:3] + quat_to_matrix(*orientation).T @ self.model.gravity, accel[3:]]
                full, self.last_base_output = fl.moving_base_inverse_dynamics(
                    self.model, self._q, qd, qdd, twist, accel, orientation, friction=friction)
            else:
                full, self.last_base_output = fl.free_floating_inverse_dynamics(
                    self.model, self._q, qd, qdd, twist, orientation, friction=friction)
        if full is not out:
            K.take(full, self._ctrl, out)
        return out

    def _base_twist(self, bs):
        if self.base == "free_floating" and self.base_velocity_source == "momentum":
            return fl.base_twist_from_momentum(self.model, self._q, self._qd, None, bs.orientation)
        return bs.twist

    # ------------------------------------------------------------ dynamics at the state last set
    def inverse_dynamics(self, qdd, friction, out):
        if self._identity:
            return self._call(self._qd, qdd, friction, True, True, out)
        K.put(qdd, self._ctrl, self._qdd)
        return self._call(self._qd, self._qdd, friction, True, True, out)

    def computed_torque(self, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, friction, qdd, out):
        """One compiled call (_fused.py) when every joint is controlled and the base is fixed."""
        if self._identity and self.base == "fixed":
            try:
                st = self._ct(self.model._K, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, FRICTION if friction else 0,
                              self._q, self._qd, qdd, out)
            except TypeError:  # not the kernel's argument types
                st = -1
            if st == 0:
                return out
        return Plant.computed_torque(self, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, friction, qdd, out)

    def gravity_torques(self, out):
        return self._call(self._zero, self._zero, False, True, True, out)

    def coriolis_torques(self, out):
        return self._call(self._qd, self._zero, False, False, False, out)

    def friction_torques(self, out):
        out.fill(0.0)
        qd = self.qd
        K.add_friction(qd, self._Fs[self._ctrl], self._Fv[self._ctrl], out)
        return out

    def mass_matrix(self):
        M = api.mass_matrix(self.model, self._q)
        return M[np.ix_(self._ctrl, self._ctrl)]

    def forward_dynamics(self, tau):
        full = np.zeros(self.model.n)
        full[self._ctrl] = tau
        return api.forward_dynamics(self.model, self._q, self._qd, full, friction=True)[self._ctrl]

    # ------------------------------------------------------------ simulation
    def sim_acceleration(self, q, qd, tau):
        """Accelerations of every movable joint (``sim_names`` order) on a fixed base; uncontrolled joints
        get zero torque."""
        full_q, full_qd, full_tau = np.zeros(self.model.n), np.zeros(self.model.n), np.zeros(self.model.n)
        full_q[self._state_index], full_qd[self._state_index] = q, qd
        full_tau[self._ctrl] = tau
        return api.forward_dynamics(self.model, full_q, full_qd, full_tau, friction=self.sim_friction)[self._state_index]

    def sim_joint_states(self, q, qd):
        return self.sim_names, np.asarray(q, float), np.asarray(qd, float)
