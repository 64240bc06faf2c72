"""Simulating any :class:`~rne_control.control.plant.Plant` in time (the core of ``rne_sim``; no ROS).

The state is the plant's ``sim_names`` coordinates (the joints of a tree, the active joints of a closed
loop, every joint of an elastic robot, the legs of a platform) and, for a tree on a floating base, the
base position (m, world), orientation (x, y, z, w; base to world) and twist [v; w] (base frame). A step
integrates with RK4 or semi-implicit Euler (:mod:`rne_control.dynamics.integrate`) under the actuator
torques ``tau`` (``joint_names`` order), the model's friction (``friction``) and an extra viscous
``damping`` per actuated joint (N m s/rad or N s/m: a deliberate mismatch with the controller's model),
and on a tree on a fixed base an applied wrench (:meth:`Simulation.set_wrench`) and a contact plane
(:meth:`Simulation.set_contact`).
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..dynamics import frame_jacobian, frame_pose
from ..dynamics.floating.api import base_twist_from_momentum
from ..dynamics.integrate import State, quat_exp, quat_mul, rk4_step, semi_implicit_step
from ..model.spatial import quat_to_matrix
from .warmup import run_steps


class Simulation:
    """Integrates ``plant`` from (q0, qd0) in ``sim_names`` order (default: the plant's reference state at
    rest). ``base_position``/``base_orientation``: initial pose of a floating base (world frame)."""

    def __init__(self, plant, q0=None, qd0=None, friction: bool = True, damping=None,
                 gravity: Optional[np.ndarray] = None, base_position=None, base_orientation=None):
        self.plant = plant
        self.names = tuple(plant.sim_names)
        ns, N = len(self.names), plant.n
        self._act = np.array([self.names.index(j) for j in plant.joint_names], dtype=np.int64)
        ref_q, ref_qd = plant.sim_reference_state()
        q = ref_q if q0 is None else np.asarray(q0, float)
        qd = ref_qd if qd0 is None else np.asarray(qd0, float)
        if q.shape != (ns,) or qd.shape != (ns,) or not (np.isfinite(q).all() and np.isfinite(qd).all()):
            raise ValueError("initial positions and velocities need %d finite values (%s)" % (ns, list(self.names)))
        self.damping = np.zeros(N) if damping is None else np.broadcast_to(np.asarray(damping, float), (N,)).copy()
        if not (np.all(np.isfinite(self.damping)) and np.all(self.damping >= 0)):
            raise ValueError("damping must be finite and >= 0 per actuated joint")
        plant.sim_friction = bool(friction)
        if gravity is not None:
            plant.set_gravity(gravity)
        self.floating = plant.sim_floating_base
        if self.floating:
            quat = np.array([0.0, 0.0, 0.0, 1.0] if base_orientation is None else base_orientation, float)
            if quat.shape != (4,) or not np.isfinite(quat).all() or np.linalg.norm(quat) < 1e-9:
                raise ValueError("base_orientation must be a quaternion [x, y, z, w]")
            pos = np.zeros(3) if base_position is None else np.asarray(base_position, float)
            self.state = State(q, qd, pos, quat / np.linalg.norm(quat), np.zeros(6))
        else:
            self.state = State(q, qd)
        # a tree (its uncontrolled joints welded): its sim_model's own forward dynamics, without the per-stage
        # detour through the plant
        self.direct = plant.sim_model is not None
        self.model = plant.sim_model if self.direct else plant.model
        if self.direct:
            self._kw = dict(friction=plant.sim_friction, damping=self._full(self.damping))
        else:
            self._kw = dict(acceleration=self._acceleration)
        self.tau = np.zeros(N)
        self.wrench = None   # (frame, [f; m]): the applied wrench, or None
        self.contact = None  # (frame, point, unit normal, stiffness, damping): the contact plane, or None

    def set_wrench(self, frame: Optional[str], wrench=None) -> None:
        """Apply ``wrench`` = [force (N); moment (N m)] at the origin of ``frame`` (a link or URDF frame of the
        simulated tree), in that frame's axes, from the next step on and until changed; ``frame`` None (or a
        zero wrench) removes it. Its joint torques are J_f^T wrench, J_f the frame's Jacobian in its own
        axes, evaluated at every stage of the step. ValueError if the plant is not a tree on a fixed base,
        the frame is unknown or the wrench is not 6 finite values."""
        if frame is None:
            self.wrench = None
            return
        self._check_frame(frame, "an applied wrench")
        w = np.asarray(wrench, dtype=float).reshape(-1)
        if w.shape != (6,) or not np.all(np.isfinite(w)):
            raise ValueError("the wrench must be 6 finite values [fx, fy, fz, mx, my, mz]")
        self.wrench = None if not np.any(w) else (frame, w)

    def set_contact(self, frame: Optional[str], point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0),
                    stiffness: float = 1e4, damping: float = 100.0) -> None:
        """A plane the origin of ``frame`` cannot pass (None: no contact). The plane goes through ``point`` (m,
        base frame) with ``normal`` pointing to the free side. Behind it by a depth d > 0, moving at v, the
        origin is pushed by the spring-damper penalty F = n max(0, k d - c n.v) (``stiffness`` k in N/m,
        ``damping`` c in N s/m), whose joint torques J_lin^T F act at every stage of every step.
        ValueError as :meth:`set_wrench`, or for a zero normal or a negative gain."""
        if frame is None:
            self.contact = None
            return
        self._check_frame(frame, "a contact plane")
        n = np.asarray(normal, dtype=float)
        c = np.asarray(point, dtype=float)
        if n.shape != (3,) or c.shape != (3,) or not (np.all(np.isfinite(n)) and np.all(np.isfinite(c))):
            raise ValueError("the contact plane needs a point and a normal of 3 finite values each")
        if np.linalg.norm(n) < 1e-9:
            raise ValueError("the contact plane's normal must not be zero")
        if not (stiffness >= 0 and damping >= 0 and math.isfinite(stiffness) and math.isfinite(damping)):
            raise ValueError("contact stiffness and damping must be finite and >= 0")
        self.contact = (frame, c, n / np.linalg.norm(n), float(stiffness), float(damping))

    def contact_force(self, q, qd, contact=None):
        """(F, J_lin): the contact plane's force on the frame's origin (N, base axes; zero off the plane) and
        the origin's linear Jacobian (base axes) at (q, qd); ``contact`` default the one set."""
        frame, c, n, k, b = self.contact if contact is None else contact
        p = frame_pose(self.model, q, frame)[:3, 3]
        J = frame_jacobian(self.model, q, frame)[:3]
        depth = float(n @ (c - p))
        push = k * depth - b * float(n @ (J @ qd)) if depth > 0 else 0.0
        return n * max(push, 0.0), J

    @property
    def takes_wrenches(self) -> bool:
        """True if :meth:`set_wrench` and :meth:`set_contact` apply to this plant (a tree on a fixed base)."""
        return self.direct and not self.floating

    def warm_up(self, h: float, rk4: bool = True, progress=None) -> None:
        """Load (or compile) every kernel a step of ``h`` (s) may need, braking and the frame kernels of a
        wrench or a contact included, so that the first step under them runs at full speed; the state is
        left unchanged. ``progress``: see :func:`~rne_control.control.warmup.run_steps`."""
        saved, tau = self.state, self.tau.copy()
        steps = [("a %s step" % ("RK4" if rk4 else "semi-implicit Euler"),
                  lambda: self.step(np.zeros(len(self.tau)), h, rk4))]
        if self.takes_wrenches:
            frame = next(iter(self.model.link_frames))
            steps.append(("wrenches and contacts", lambda: (
                self.external_torques(self.state.q, (frame, np.zeros(6))),
                self.contact_force(self.state.q, self.state.qd, (frame, np.zeros(3), np.array([0.0, 0.0, 1.0]), 0.0,
                                                                 0.0)))))
        steps.append(("the brakes", lambda: self.brake(0.0)))
        try:
            run_steps(steps, progress)
        finally:
            self.state, self.tau[:] = saved, tau

    def _check_frame(self, frame, what):
        if not self.takes_wrenches:
            raise ValueError("%s needs a tree on a fixed base (this plant: %s)" % (what, self.plant.kind))
        if frame not in self.model.link_frames:
            raise ValueError("unknown frame %r (the simulated model's frames: %s)"
                             % (frame, ", ".join(list(self.model.link_frames)[:12])))

    def external_torques(self, q, wrench=None) -> np.ndarray:
        """The joint torques at ``q`` (sim_names order) of ``wrench`` (frame, [f; m]; default the applied one):
        J^T [R f; R m], J the frame's Jacobian in base axes and R its orientation."""
        frame, w = self.wrench if wrench is None else wrench
        R = frame_pose(self.model, q, frame)[:3, :3]
        J = frame_jacobian(self.model, q, frame)
        return J[:3].T @ (R @ w[:3]) + J[3:].T @ (R @ w[3:])

    def _full(self, x):
        out = np.zeros(len(self.names))
        out[self._act] = x
        return out

    def _acceleration(self, q, qd, tau):
        return self.plant.sim_acceleration(q, qd, tau - self.damping * qd[self._act])

    def step(self, tau, h: float, rk4: bool = True) -> bool:
        """Advance by h (s) under ``tau``; False (state unchanged) if the step failed or gave a non-finite
        state (a diverging simulation, a non-finite torque, a loop that no longer closes)."""
        s = self.state
        t = self._full(tau) if self.direct else np.asarray(tau, float)
        wrench, contact = self.wrench, self.contact
        try:
            if wrench is None and contact is None:
                torque = lambda _t, _x: t   # noqa: E731
            else:                           # the wrench's and the contact's torques at each stage's state
                def torque(_t, x):
                    out = t if wrench is None else t + self.external_torques(x.q, wrench)
                    if contact is not None:
                        F, J = self.contact_force(x.q, x.qd, contact)
                        out = out + J.T @ F
                    return out
            if rk4:
                s = rk4_step(self.model, s, 0.0, h, torque, **self._kw)
            else:
                s = semi_implicit_step(self.model, s, h, torque(0.0, s), **self._kw)
        except ValueError:
            return False
        if not (np.isfinite(s.q).all() and np.isfinite(s.qd).all()):
            return False
        self.state = s
        self.tau[:] = tau
        return True

    def brake(self, h: float) -> None:
        """Joints held still for h (s); a free-floating base moves on so that the total momentum stays zero."""
        s = self.state
        s.qd = np.zeros_like(s.qd)
        self.tau[:] = 0.0
        if self.floating:
            try:
                s.twist = np.asarray(base_twist_from_momentum(self.model, s.q, s.qd, None, s.quat), float)
            except ValueError:
                s.twist = np.zeros(6)
            s.pos = s.pos + h * (quat_to_matrix(*s.quat) @ s.twist[:3])
            s.quat = quat_mul(s.quat, quat_exp(s.twist[3:], h))

    def joint_states(self):
        """(names, positions, velocities, efforts) of every joint a driver would publish (efforts: the applied
        actuator torques, zero at unactuated joints)."""
        names, q, qd = self.plant.sim_joint_states(self.state.q, self.state.qd)
        effort = dict(zip(self.plant.joint_names, self.tau))
        return names, q, qd, np.array([effort.get(j, 0.0) for j in names])
