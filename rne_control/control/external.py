"""External torques and collisions in the control cycle: the momentum observer on the accepted states, the
torques it takes, collision detection and the reaction's torque.

:class:`ExternalTorques` belongs to a :class:`~rne_control.control.cycle.ControlCycle`. Per accepted state k
(header stamp t_k, a state newer than the last one observed) the cycle calls :meth:`ExternalTorques.observe`
after the law has set the plant's state: the observer (:class:`~rne_control.control.observer.MomentumObserver`,
on the plant's ``observer_model``) takes (t_k, q_k, qd_k) and the torque in force over [t_{k-1}, t_k]:

* ``commanded``: the commands published in that interval after ramp and clamp, weighted by how long each
  was in force (with ``trigger: state`` and in lockstep: the command that answered state k-1); with
  ``driver_adds_gravity`` plus the g(q) the driver added;
* ``measured``: the controlled joints' efforts of state k from ``/joint_states``: a torque measured at t_k
  is the one the actuators have held since the previous command, over [t_{k-1}, t_k] (``rne_sim``
  reports exactly that). A state without them pauses the observer (``status`` says so) and it starts
  again from r = 0 when they come back.

Then the collision monitor (:class:`~rne_control.control.collision.CollisionMonitor`) checks r at the
controlled joints. r starts from 0 at activation, after a stale period and after a change of payload or
gravity (:meth:`reset`). Arrays are in the plant's ``joint_names`` order unless said otherwise.
"""
from __future__ import annotations

import math

import numpy as np

from . import _kernels as K
from .collision import CollisionMonitor
from .observer import MomentumObserver, ObserverError, estimate_wrench

RUNNING, DISABLED, UNAVAILABLE, NO_EFFORT = "running", "disabled", "not available", "paused: no measured efforts"


class ExternalTorques:
    """The observer and collision monitor of a cycle on ``plant`` with the Settings ``settings`` (see the
    module docstring). ``r`` (N m, N): the residual at the controlled joints, stamped ``t`` (s; -inf: none
    yet); ``peak``: the largest |r| per joint since the caller last cleared it; ``status``: one of RUNNING,
    DISABLED, UNAVAILABLE (with ``unavailable``, why) and NO_EFFORT."""

    def __init__(self, plant, settings):
        self.plant = plant
        self.n = n = plant.n
        self.unavailable = plant.observer_unavailable
        self.r = np.zeros(n)
        self.peak = np.zeros(n)
        self.t = -math.inf
        self.applied = np.zeros(n)          # the torque in force since the last command (driver's g included)
        self._acc = np.zeros(n)             # its time integral since the last observed state
        self._acc_time = 0.0
        self._t_cmd = None                  # when the last command went out (cycle clock, s)
        self._t_state = None
        self._ff = np.zeros(n)              # task-space feed-forward torques J^T F_d (none in joint space)
        self.observer = None
        if not self.unavailable:
            self.model, self._q, self._qd, ctrl = plant.observer_model()
            self._ctrl = np.ascontiguousarray(ctrl, dtype=np.int64)
            self._tau = np.zeros(self.model.n)  # the observer's torque, its model's order (0: uncontrolled)
            self.observer = MomentumObserver(self.model, settings.observer_gain.max(), friction=True)
        self.monitor = None
        self.settings = None
        self.apply(settings)

    # ------------------------------------------------------------ settings
    def apply(self, s) -> None:
        """Install the observer.* and collision.* values of the Settings ``s``; a latched reaction stays."""
        old = self.settings
        self.settings = s
        self.enabled = s.observer_enabled and self.observer is not None
        self.status = RUNNING if self.enabled else (DISABLED if self.observer is not None else UNAVAILABLE)
        if self.observer is not None:
            gain = np.full(self.model.n, s.observer_gain.max())
            gain[self._ctrl] = s.observer_gain
            self.observer.gain = gain
        if old is not None and (not old.observer_enabled and s.observer_enabled
                                or old.torque_source != s.torque_source):
            self.reset()
        m = CollisionMonitor(self.n, s.collision_thresholds, s.collision_reaction, s.collision_damping,
                             s.collision_reflex_gain)
        if self.monitor is not None:
            m.latched = self.monitor.latched and m.reaction != "none"
            m.joints, m.events = self.monitor.joints, self.monitor.events
        self.monitor = m

    def reset(self) -> None:
        """r = 0; the next state starts the integration again (activation, stale period, payload, gravity)."""
        if self.observer is not None:
            self.observer.reset()
        self.r[:] = 0.0
        self._acc[:] = 0.0
        self._acc_time = 0.0
        self._t_state = None                # cycle time of the last state observed

    # ------------------------------------------------------------ per cycle
    def commanded(self, now: float, total) -> None:
        """A command went out at ``now`` (s): ``total`` (N m, N) is the torque the joints get from it (the
        published command, plus g(q) where the driver adds it)."""
        if self._t_cmd is not None and self._t_state is not None and self._t_cmd >= self._t_state:
            dt = now - self._t_cmd    # a second command since the last state: weight the one it replaces
            self._acc += self.applied * dt
            self._acc_time += dt
        np.copyto(self.applied, total)
        self._t_cmd = now

    def observe(self, t: float, now: float, effort) -> bool:
        """Take the state stamped ``t`` (s), at the plant's state last set, at cycle time ``now`` (s);
        ``effort``: its measured efforts (NaN where absent). Returns True if a collision reaction is in
        force. Raises nothing: a sample the observer cannot use restarts it (``status``)."""
        if not self.enabled or t <= self.t:
            return self.monitor.latched
        ob = self.observer
        if self.settings.torque_source == "measured":
            if not np.all(np.isfinite(effort)):
                if self.status != NO_EFFORT:
                    self.reset()
                    self.status = NO_EFFORT
                self.t = t
                return self.monitor.latched
            self.status = RUNNING
            tau = effort
        else:
            tau = self._mean_applied(now)
        K.put(tau, self._ctrl, self._tau)
        try:
            ob.update(t, self._q, self._qd, self._tau)
        except ObserverError:      # a gap in the states (K_O T >= 1): start again from this state
            ob.reset()
            ob.update(t, self._q, self._qd, self._tau)
        self.t = t
        self._t_state = now
        hits = K.residual_check(ob.r, self._ctrl, self._ff, self.monitor.thresholds, self.r, self.peak)
        return self.monitor.detect(hits, self.r)

    def _mean_applied(self, now: float) -> np.ndarray:
        """The commanded torque in force since the previous state: the last command's, or the time-weighted
        mean of the commands since (``commanded``)."""
        if self._acc_time <= 0.0:
            return self.applied
        dt = now - self._t_cmd
        self._acc += self.applied * dt
        mean = self._acc / (self._acc_time + dt)
        self._acc[:] = 0.0
        self._acc_time = 0.0
        return mean

    def warm_up(self) -> None:
        """Run the observer and the wrench once, on a throwaway observer, so that no cycle compiles them."""
        if self.observer is None:
            return
        z = np.zeros(self.model.n)
        ob = MomentumObserver(self.model, 1.0)
        for t in (0.0, 0.001):
            ob.update(t, z, z, z)
        frame = self.settings.wrench_frame
        estimate_wrench(self.model, z, np.zeros(self.n), frame, self.settings.wrench_damping, self._ctrl)

    # ------------------------------------------------------------ reaction and outputs
    def reaction_torque(self, out: np.ndarray) -> np.ndarray:
        """The latched reaction's torque (N m, N) at the plant's state last set, into ``out``."""
        g = self.plant.gravity_torques(out)
        np.copyto(out, self.monitor.torque(g, self.plant.qd, self.r))
        return out

    def wrench(self) -> np.ndarray:
        """F (N, N m): the wrench on the robot at the origin of ``observer.wrench_frame``, in its axes, whose
        joint torques at the controlled joints are r (the damped pseudo-inverse of ``estimate_wrench``)."""
        s = self.settings
        return estimate_wrench(self.model, self._q, self.r, s.wrench_frame, s.wrench_damping, self._ctrl)
