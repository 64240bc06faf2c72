"""External torques and collisions in the control cycle: the momentum observer on the accepted states, the
torques it takes, collision detection and the reaction's torque.

:class:`ExternalTorques` belongs to a :class:`~rne_control.control.cycle.ControlCycle`. Per accepted state k
(header stamp t_k, a state newer than the last one observed) the cycle calls :meth:`ExternalTorques.observe`
after the law has set the plant's state: the observer (:class:`~rne_control.control.observer.MomentumObserver`,
on the plant's ``rigid_tree``) takes (t_k, q_k, qd_k) and the torque in force over [t_{k-1}, t_k]:

* ``commanded``: the commands published in that interval after ramp and clamp, weighted by how long each
  was in force (:meth:`ExternalTorques.between`; with ``trigger: state`` and in lockstep, the command that
  answered state k-1); with ``driver_adds_gravity`` plus the g(q) the driver added;
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

    def __init__(self, plant, settings, applied: np.ndarray, log=None):
        """``applied``: the cycle's buffer of the torque the joints get from its last command (the published
        command, plus g(q) where the driver adds it), read before the next command overwrites it. ``log``:
        a logger taking ``warning(msg, throttle_duration_sec=...)`` (the cycle's)."""
        self.plant = plant
        self.log = log
        self.restarts = 0                   # samples the observer refused, each a restart from r = 0
        self.n = n = plant.n
        self.unavailable = plant.rigid_tree_unavailable
        # the collision test's rows (_kernels.residual_check): thresholds, the task-space feed-forward
        # torques J^T F_d (none in joint space), r at the controlled joints, the peak of |r|
        self._C = np.zeros((4, n))
        self._ff, self.r, self.peak = self._C[1], self._C[2], self._C[3]
        self.t = -math.inf
        self.applied = applied
        self._acc = np.zeros(n)             # the time integral of the commands since the last observed state,
        self._acc_time = 0.0                # but the last one (weighted when the next state comes)
        self._t_cmd = None                  # when the last command went out (cycle clock, s)
        self.observer = None
        if not self.unavailable:
            self.model, self._q, self._qd, ctrl = plant.rigid_tree()
            self._ctrl = np.ascontiguousarray(ctrl, dtype=np.int64)
            self._tau = np.zeros(self.model.n)  # the observer's torque, its model's order (0: uncontrolled)
            # the controlled joints are the observer model's, in its order: the torque goes to it as it is
            self._identity = self.model.n == n and bool(np.all(self._ctrl == np.arange(n)))
            self.observer = MomentumObserver(self.model, settings.observer_gain.max(), friction=True)
        self.monitor = None
        self.settings = None
        self._off = ()                      # the joints without a collision test, as last logged
        self.apply(settings)

    # ------------------------------------------------------------ settings
    def apply(self, s) -> None:
        """Install the observer.* and collision.* values of the Settings ``s``; a latched reaction stays. Logs
        once (again when they change) the joints without a collision test while the observer runs."""
        old = self.settings
        self.settings = s
        self.enabled = s.observer_enabled and self.observer is not None
        self.status = RUNNING if self.enabled else (DISABLED if self.observer is not None else UNAVAILABLE)
        if self.observer is not None:
            gain = np.full(self.model.n, s.observer_gain.max())
            gain[self._ctrl] = s.observer_gain
            self.observer.set_gain(gain)
        if old is not None and (not old.observer_enabled and s.observer_enabled
                                or old.torque_source != s.torque_source):
            self.reset()
        m = CollisionMonitor(self.n, s.collision_thresholds, s.collision_reaction, s.collision_damping,
                             s.collision_reflex_gain)
        if self.monitor is not None:
            m.latched = self.monitor.latched and m.reaction != "none"
            m.joints, m.events = self.monitor.joints, self.monitor.events
        self.monitor = m
        self._C[0] = m.thresholds
        off = s.collision_off if self.enabled else ()
        if off and off != self._off and self.log is not None:
            self.log.warning("collision detection off for joints %s: no finite effort limit; set "
                             "collision.thresholds" % ", ".join(off))
        self._off = off

    def reset(self) -> None:
        """r = 0; the next state starts the integration again (activation, stale period, payload, gravity)."""
        if self.observer is not None:
            self.observer.reset()
        self.r[:] = 0.0
        self._acc[:] = 0.0
        self._acc_time = 0.0
        self._t_cmd = None
        self.t = -math.inf

    def feed_forward(self, tau_ff) -> None:
        """The joint torques J^T F_d of a wrench the law makes the tool exert (None: none): the contact's
        expected residual is -tau_ff, which the collision test allows for."""
        if tau_ff is None:
            self._ff[:] = 0.0
        else:
            self._ff[:] = tau_ff

    # ------------------------------------------------------------ per cycle
    def commanded(self, now: float) -> None:
        """A command went out at ``now`` (s): ``applied`` holds what the joints get from it."""
        self._t_cmd = now

    def between(self, now: float) -> None:
        """A command is about to replace ``applied`` at ``now`` (s) with no new state observed since the last
        one: weight the one it replaces by how long it was in force."""
        if self._t_cmd is not None and now > self._t_cmd:
            dt = now - self._t_cmd
            self._acc += self.applied * dt
            self._acc_time += dt
            self._t_cmd = now

    def observe(self, t: float, now: float, effort) -> bool:
        """Take the state stamped ``t`` (s), at the plant's state last set, at cycle time ``now`` (s), before
        the cycle's command replaces ``applied``; ``effort``: the state's measured efforts in ``state_names``
        order (NaN where absent). Returns True if a collision reaction is in force. Raises nothing: a sample
        the observer cannot use restarts it (``status``)."""
        if t <= self.t:
            if t < self.t:          # time went back (a simulation restarted): start again
                self.reset()
            else:
                self.between(now)
                return self.monitor.latched
        if self.settings.torque_source == "measured":
            tau = effort[:self.n]
            if not np.all(np.isfinite(tau)):
                if self.status != NO_EFFORT:
                    self.reset()
                    self.status = NO_EFFORT
                self.t = t
                return self.monitor.latched
            self.status = RUNNING
        elif self._acc_time > 0.0:  # commands weighted by time (a timer faster than the states)
            dt = now - self._t_cmd
            tau = (self._acc + self.applied * dt) / (self._acc_time + dt)
            self._acc[:] = 0.0
            self._acc_time = 0.0
        else:                       # the command that answered the previous state
            tau = self.applied
        if self._identity:
            tau_model = tau
        else:
            K.put(tau, self._ctrl, self._tau)
            tau_model = self._tau
        ob = self.observer
        try:
            ob.update(t, self._q, self._qd, tau_model)
        except ObserverError as e:  # a gap in the states (K_O T >= 1), a bad measured effort: start again here
            self.restarts += 1
            if self.log is not None:
                self.log.warning("momentum observer restarted from r = 0 (%d times): %s" % (self.restarts, e),
                                 throttle_duration_sec=5.0)
            ob.reset()
            ob.update(t, self._q, self._qd, tau_model)
        self.t = t
        hits = K.residual_check(ob.r, self._ctrl, self._C)
        return self.monitor.detect(hits, self.r) if hits or self.monitor.detected else False

    def warm_up(self) -> None:
        """Run the observer and the wrench once, on a throwaway observer, so that no cycle compiles them."""
        if self.observer is None:
            return
        self.observer.warm_up()
        s = self.settings
        estimate_wrench(self.model, np.zeros(self.model.n), np.zeros(self.n), s.wrench_frame, s.wrench_damping,
                        self._ctrl)

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
