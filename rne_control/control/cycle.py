"""The control cycle without ROS: merged joint states in, one clamped effort command out.

:class:`ControlCycle` owns everything a cycle of ``rne_controller`` uses: the plant and its
:class:`~rne_control.control.laws.ControlLaw`, the desired trajectory, the merge of joint-state messages
(:class:`~rne_control.control.joint_states.JointStateMapper`), the state watchdog, the feedback and output
ramps and the effort limiter. :meth:`ControlCycle.update` is the cycle, written as

* **read**: install run-time settings requested since the last cycle, judge the merged state's
  freshness (:class:`~rne_control.control.watchdog.Watchdog`) and activate on the first fresh state;
* **compute**: sample the trajectory and evaluate the law (feedback terms scaled by the activation ramp; in
  a task-space mode the law samples its shaped target, :mod:`rne_control.control.task`);
  the momentum observer takes the new state and the collision monitor checks its residual
  (:class:`~rne_control.control.external.ExternalTorques`); a latched reaction replaces the law's torque;
* **clamp**: blend from the previous law (output ramp) and clamp to the effort limits; where the driver
  adds gravity itself (``driver_adds_gravity``), g(q) is taken off the command and the rest clamped again.

It returns the command to publish, or None (no state yet, or ``on_stale: stop``); ``outcome`` says which
path produced it (:data:`LAW`, :data:`REACTION` while a collision reaction is latched, :data:`HOLD` while
a state cannot be used, :data:`STALE` under ``on_stale``). The caller publishes every command returned:
the cycle remembers it as the last one sent, from which the next law change ramps. Times are seconds or nanoseconds of the caller's clock (ROS time,
or sim time under ``use_sim_time``); arrays are in the plant's ``joint_names`` order (controlled joints)
or its ``state_names`` order (the merged state).
"""
from __future__ import annotations

import copy
import logging
from typing import Optional

import numpy as np

from .external import ExternalTorques
from .joint_states import JointStateError, JointStateMapper
from .laws import SPLIT_PARTS, BaseState, ControlLaw
from .task import TASK_MODES, TaskError, task_unavailable
from .limits import EffortLimiter
from .plant import StateError
from .ramp import OffsetRamp, Ramp
from .trajectory import TrajectoryError, TrajectoryGenerator
from .warmup import GROUPS, cycle_steps, groups_needed, run_steps
from .watchdog import NO_STATE, STALE, Watchdog

LAW, REACTION, HOLD, STALE_OUTPUT = "law", "reaction", "hold", "stale"


class _Log:
    """Python logging with the call signature of an rclpy logger (``throttle_duration_sec`` ignored)."""

    def __init__(self, name="rne_control.cycle"):
        self._log = logging.getLogger(name)

    def info(self, msg, **_):
        self._log.info(msg)

    def warning(self, msg, **_):
        self._log.warning(msg)

    def error(self, msg, **_):
        self._log.error(msg)


class ControlCycle:
    """One controller's cycle on ``plant`` (see the module docstring).

    ``settings``: a validated snapshot of the run-time parameters (mode, base, base_velocity_source,
    friction_compensation, gravity, kp, kd, hold_kp, hold_kd, payload, effort_limits, state_timeout,
    on_stale, ramp_time; :class:`~rne_control.control.settings.Settings`). ``trigger_joints``: the
    state joints whose update makes a new state due (default every required joint).
    ``velocity_cutoff_hz``: the filter of velocities estimated from positions. ``out``: the command
    buffer (N,), e.g. a view over an outgoing message's array. ``log``: an object with ``info``,
    ``warning`` and ``error`` taking a message and ``throttle_duration_sec`` (an rclpy logger).
    ``driver_adds_gravity``: the driver adds g(q) to every command (Franka's): the cycle publishes the
    command less g(q), and ``total`` is what the joints get. ``end_effector_frame``: the frame of the
    task-space modes (default: the child link of the last controlled joint), where the plant has a task
    space; TaskError (a ValueError) names a frame it cannot use.

    In a task-space mode the target is the measured pose, at rest, whenever the cycle holds the measured
    position in joint space (activation, recovery from a stale state, a collision and its reset) and on
    entering the mode; the null-space posture is then the measured configuration, unless
    ``nullspace_posture`` sets it. Leaving a task-space mode, the desired joint state holds the measured
    position.
    """

    def __init__(self, plant, settings, trigger_joints=None, velocity_cutoff_hz: float = 50.0,
                 out: Optional[np.ndarray] = None, log=None, driver_adds_gravity: bool = False,
                 end_effector_frame: Optional[str] = None):
        self.plant = plant
        self.joints = plant.joint_names
        self.n = n = plant.n
        self.log = _Log() if log is None else log
        self.law = ControlLaw(plant)
        self.task = None
        why = task_unavailable(plant)
        if not why:
            self.task = self.law.enable_task(end_effector_frame or None, settings)
        elif end_effector_frame:
            raise TaskError("end_effector_frame %r: the %s model %r has no task space: %s"
                            % (end_effector_frame, plant.kind, plant.name, why))
        self._anchor = False         # task space: hold the measured pose at the next cycle
        self._hold_here = False      # joint space: hold the measured position at the next cycle
        self.traj = TrajectoryGenerator(self.joints)
        self.mapper = JointStateMapper(plant.state_names, self.joints, plant.initial_state, velocity_cutoff_hz,
                                       required=plant.required_names)
        self.base_state = BaseState()
        self.feedback_ramp = Ramp(0.5)
        self.output_ramp = OffsetRamp(n, 0.5)
        self.limiter = EffortLimiter(settings.effort_limits)
        self.watchdog = Watchdog(settings.state_timeout, settings.on_stale)
        self.cmd = np.zeros(n) if out is None else out
        self.driver_adds_gravity = bool(driver_adds_gravity)
        self.total = np.zeros(n) if self.driver_adds_gravity else self.cmd   # the joints' torque
        self._g = np.zeros(n)
        self.external = ExternalTorques(plant, settings, self.total, self.log)
        self.collision_started = False   # this cycle latched a reaction (the caller aborts its goal)
        self._events = 0                 # the collision events this cycle has reported
        self._reset_collision = False
        self.settings = None
        self._pending, self._pending_names = None, ()
        self.start_base = settings.base
        # the warm-up's groups whose kernels a background compiler is still making (rne_control.control.background);
        # settings that need one of them wait in _pending, the running ones staying in effect (waiting_for)
        self.pending_groups = set()
        self.failed_groups = {}          # group -> why its background compile failed
        self.on_refused = None           # called (with why) when such a wait ends in failure: mode and base stay
        self.waiting_for = ()
        self.apply_settings(settings)

        # the merge: per state joint its receive time (-1: never) and header stamp, ns
        ns = len(plant.state_names)
        self._recv_ns = np.full(ns, -1, dtype=np.int64)
        self._stamp_ns = np.zeros(ns, dtype=np.int64)
        self._n_required = len(self.mapper.required_index)
        unknown = [j for j in trigger_joints or () if j not in plant.state_names]
        if unknown:
            raise ValueError("trigger_joints %s are not joints of the state (%s)"
                             % (unknown, ", ".join(plant.state_names)))
        self._trigger_mask = np.zeros(ns, dtype=bool)
        self._trigger_mask[self.mapper.required_index if trigger_joints is None
                           else [list(plant.state_names).index(j) for j in trigger_joints]] = True
        self._trigger_all = bool(self._trigger_mask[self.mapper.required_index].all())
        self.new_state = False       # a trigger joint was updated since the law's last command
        self.arrival_ns = 0          # caller's arrival time of the latest message with a required joint
        self.state_stamp_ns = 0      # header stamp of the merged state (its oldest required joint)
        self.states = 0              # messages that updated a required joint
        self.ignored_states = 0      # messages without any required joint
        self.rejected_states = 0     # messages refused by the merge, and states the plant refused
        self._rejected_at = -1
        self._warned_velocity = False

        # the command's path
        self.outcome = None
        self.active = False          # the law runs (a fresh state activated it)
        self.stopped = False         # on_stale: stop in effect
        self.have_published = False
        self._ramp_from_last = False
        self.saturated = np.zeros(n, dtype=bool)    # joints clamped since the caller last cleared it
        self.q_d, self.qd_d, self.qdd_d = np.zeros(n), np.zeros(n), np.zeros(n)
        self.feedback_scale = 0.0
        self._hold_cmd = np.zeros(n)
        self._parts = {k: np.zeros(n) for k in SPLIT_PARTS}

    # ------------------------------------------------------------ settings
    def request(self, settings, names=()) -> None:
        """Install ``settings`` at the start of the next cycle (a parameter change at run time; ``names``:
        the parameters changed, for the log); where they need kernels not loaded yet (a task-space mode, another
        base, compiled in the background), at the first cycle after they are. ValueError if those kernels
        failed to compile: the running settings stay."""
        failed = [g for g in groups_needed(self, settings) if g in self.failed_groups]
        if failed:
            raise ValueError("the kernels of %s failed to compile: %s" % (", ".join(failed),
                                                                          self.failed_groups[failed[0]]))
        self._pending = settings
        self._pending_names = tuple(names)

    def apply_settings(self, s, now: Optional[float] = None) -> bool:
        """Install a settings snapshot now; True if the law changed (a ramp is wanted)."""
        old = self.settings
        law = self.law
        entering = s.mode in TASK_MODES and (old is None or old.mode not in TASK_MODES)
        if self.task is not None:
            law.configure_task(s)
        law.set_mode(s.mode)
        if entering:
            self._anchor = True
        elif old is not None and old.mode in TASK_MODES and s.mode not in TASK_MODES:
            self._hold_here = True
            self.external.feed_forward(None)
        law.set_base(s.base, self.base_state)
        law.base_velocity_source = s.base_velocity_source
        law.friction = s.friction_compensation
        law.set_gravity(s.gravity)
        for name in ("kp", "kd", "hold_kp", "hold_kd"):
            getattr(law, name)[:] = getattr(s, name)
        if old is None or old.payload != s.payload:
            self.plant.set_payload(*(s.payload or (None,)))
        self.limiter.set_limits(s.effort_limits)
        self.watchdog.timeout = s.state_timeout
        self.watchdog.on_stale = s.on_stale
        self.feedback_ramp.duration = s.ramp_time
        self.output_ramp.duration = s.ramp_time
        changed = s.law_differs(old)
        self.mapper.track_effort = s.torque_source == "measured"
        if old is not None:
            self.external.apply(s)
            if old.payload != s.payload or not np.array_equal(old.gravity, s.gravity):
                self.external.reset()
        self.settings = s
        if old is not None:
            names = " (%s)" % ", ".join(self._pending_names) if self._pending_names else ""
            ramp = " (ramping over %.3f s)" % s.ramp_time if changed and s.ramp_time > 0 else ""
            self.log.info("parameters applied%s: mode %s, base %s%s" % (names, s.mode, s.base, ramp))
        return changed and old is not None

    # ------------------------------------------------------------ the merge
    def merge(self, names, position, velocity, effort, stamp_ns: int, now_ns: int, arrival_ns: int) -> bool:
        """Merge one joint-state message (:mod:`rne_control.control.joint_states`) received at ``now_ns``
        (``stamp_ns``: its header stamp, 0: none; ``arrival_ns``: the caller's arrival clock, for the
        latency). False if it was refused (logged and counted) or carried no required joint."""
        ext = self.external
        if ext.enabled and self.active and self.state_stamp_ns * 1e-9 > ext.t and not self.stopped:
            self._observe_skipped(now_ns)   # a state no cycle took: the observer still needs it
        try:
            got = self.mapper.update(names, position, velocity, (stamp_ns if stamp_ns else now_ns) * 1e-9, effort,
                                     now_ns * 1e-9)
        except JointStateError as e:
            self.reject(e)
            return False
        if not got:
            self.ignored_states += 1
            return False
        idx = self.mapper.updated          # the required joints the message carried (got > 0 of them)
        self.arrival_ns = arrival_ns
        if self._trigger_all or self._trigger_mask[idx].any():
            self.new_state = True
        self._recv_ns[idx] = now_ns
        self._stamp_ns[idx] = stamp_ns
        if got == self._n_required:         # it carried them all: nothing older to look up
            self.watchdog.feed(now_ns * 1e-9)
            self.state_stamp_ns = stamp_ns
        else:
            req = self.mapper.required_index
            oldest = self._recv_ns[req].min()
            if oldest >= 0:
                self.watchdog.feed(oldest * 1e-9)
            self.state_stamp_ns = int(self._stamp_ns[req].min())
        if not self._warned_velocity and self.mapper.estimating_velocity:
            self._warned_velocity = True
            self.log.warning("/joint_states has no velocities for %s: estimating them by filtered "
                             "differentiation (%.0f Hz)" % (", ".join(self.mapper.estimated_joints()),
                                                            self.mapper.velocity_cutoff_hz))
        self.states += 1
        return True

    def reject(self, reason) -> None:
        """Count a joint-state message refused for ``reason`` and log it (throttled)."""
        self.rejected_states += 1
        self.log.warning("rejected /joint_states: %s (%d rejected)" % (reason, self.rejected_states),
                         throttle_duration_sec=2.0)

    def stale_joints(self, now_ns: int) -> list:
        """Required joints not received within state_timeout (never received ones included)."""
        limit = now_ns - int(self.watchdog.timeout * 1e9)
        return [j for j, i in zip(self.mapper.required, self.mapper.required_index) if self._recv_ns[i] < limit]

    def due(self, now_ns: int) -> bool:
        """A new state of the trigger joints has come and the state is fresh (``trigger: state``)."""
        return self.new_state and self.watchdog.fresh(now_ns * 1e-9)

    # ------------------------------------------------------------ the cycle
    def update(self, now_ns: int) -> Optional[np.ndarray]:
        """One cycle at ``now_ns`` on the merged state: read -> compute -> clamp. Returns ``cmd`` (to
        publish) or None; ``outcome`` tells the path."""
        now = now_ns * 1e-9
        self.outcome = None
        # --- read
        ramp_request = False
        if self._pending is not None:
            ramp_request = self._install_pending(now)
        wd = self.watchdog
        status = wd.check(now)
        self.mapper.expire(now, wd.timeout)   # an optional joint no longer published: at rest, or solved again
        if status == NO_STATE:
            if self.states:   # some joints came, not all the required ones
                self.log.warning("joint state incomplete: no %s received yet (required: %s)"
                                 % (", ".join(self.stale_joints(now_ns)), ", ".join(self.mapper.required)),
                                 throttle_duration_sec=5.0)
            return None
        if status == STALE:
            return self._stale(now, now_ns)
        if not self.active or wd.recovered:
            self._activate(now, wd.recovered)
            ramp_request = ramp_request or self._ramp_from_last
            self.stopped = False
        if self._reset_collision:
            self._reset_collision = False
            ramp_request = ramp_request or self._release(now)
        # --- compute
        if self._hold_here:
            self._hold_here = False
            self.traj.reset(self.mapper.q[:self.n])
        task = self.law.mode in TASK_MODES
        self.q_d, self.qd_d, self.qdd_d = self.traj.sample(now)
        self.feedback_scale = s = self.feedback_ramp.fraction(now)
        try:
            if task and self._anchor:
                self._anchor_task(now)
            tau = self.law.compute(self.mapper.q, self.mapper.qd, self.q_d, self.qd_d, self.qdd_d, s, t=now)
        except StateError as e:  # e.g. a loop that does not close at the measured state: hold the last good one
            if self.states != self._rejected_at:   # count each received state once
                self._rejected_at = self.states
                self.reject(e)
            return self._hold(now, reset=False)
        except ValueError as e:  # a non-finite reference must never stop the loop nor reach the output
            self.log.error("control law failed (%s): holding the measured position" % e, throttle_duration_sec=1.0)
            return self._hold(now, reset=True)
        ext = self.external
        if task:
            ext.feed_forward(self.task.ff)
        if ext.enabled:
            self.collision_started = False
            t = self.state_stamp_ns * 1e-9 if self.state_stamp_ns > 0 else self.watchdog.last
            if ext.observe(t, now, self.mapper.effort):
                if ext.monitor.events != self._events:
                    self._events = ext.monitor.events
                    self._collided()
                return self._reaction(now)
        # --- clamp (the law's torque stays in law.tau, for split)
        if ramp_request and self.have_published:
            self.output_ramp.start_blend(now, self.total, tau)   # total still holds the torque last sent
        if self.limiter.apply(self.output_ramp.apply(now, tau, out=self.total), out=self.total):
            self.saturated |= self.limiter.saturated.astype(bool)
        self.new_state = False
        self.outcome = LAW
        return self._sent(now)

    def _install_pending(self, now: float) -> bool:
        """Apply the requested settings unless they wait for kernels; True if a ramp is wanted."""
        missing = tuple(g for g in groups_needed(self, self._pending)
                        if g in self.pending_groups or g in self.failed_groups)
        if missing:
            if missing != self.waiting_for:
                self.waiting_for = missing
                self.log.info("mode %s, base %s: waiting for the kernels of %s (compiling in the background); "
                              "mode %s stays in effect until they are loaded"
                              % (self._pending.mode, self._pending.base, ", ".join(missing), self.settings.mode))
            if not any(g in self.failed_groups for g in missing):
                return False
            why = self.failed_groups[next(g for g in missing if g in self.failed_groups)]
            self.log.error("mode %s, base %s refused: the kernels of %s failed to compile (%s); mode %s, base %s stay"
                           % (self._pending.mode, self._pending.base, ", ".join(missing), why, self.settings.mode,
                              self.settings.base))
            s = copy.copy(self._pending)      # the other values of the request apply
            s.mode, s.base, s.base_velocity_source = (self.settings.mode, self.settings.base,
                                                      self.settings.base_velocity_source)
            self._pending, self.waiting_for = s, ()
            if self.on_refused is not None:
                self.on_refused(why)
            return self._install_pending(now)
        self.waiting_for = ()
        s, self._pending = self._pending, None
        return self.apply_settings(s, now)

    def _activate(self, now: float, recovered: bool) -> None:
        self._hold_measured()
        self.feedback_ramp.start(now)
        self.external.reset()
        self.active = True
        self._ramp_from_last = recovered and self.have_published and not self.stopped
        if recovered:
            self.log.info("joint states fresh again: holding the measured position, ramping in")

    def _stale(self, now: float, now_ns: int) -> Optional[np.ndarray]:
        wd = self.watchdog
        if wd.went_stale:
            self.log.warning("no valid joint state for %.3f s (state_timeout %.3f s) from %s: %s"
                             % (wd.age(now), wd.timeout, ", ".join(self.stale_joints(now_ns)), wd.on_stale))
            try:  # hold the newest state received (else the last accepted one)
                self.plant.set_state(self.mapper.q, self.mapper.qd)
            except StateError:
                pass
            self.law.hold_torque(self._hold_cmd)
        if wd.on_stale == "stop":
            self.stopped = True
            return None
        self.external.between(now)
        if wd.on_stale == "zero":   # zero published: where the driver adds gravity, the joints get g
            self.total[:] = self.plant.gravity_torques(self._g) if self.driver_adds_gravity else 0.0
        else:
            self.limiter.apply(self._hold_cmd, out=self.total)
        self.outcome = STALE_OUTPUT
        return self._sent(now)

    def _hold(self, now: float, reset: bool) -> np.ndarray:
        """The gravity torques of the last accepted state, clamped; ``reset``: the desired state holds the
        measured position from now on."""
        if reset:
            self._hold_measured()
        self.external.between(now)
        self.limiter.apply(self.law.hold_torque(self._hold_cmd), out=self.total)
        self.outcome = HOLD
        return self._sent(now)

    def _sent(self, now: float) -> np.ndarray:
        """``total`` goes out at ``now`` (s): as ``cmd``, or less g(q) where the driver adds it; the observer
        is told."""
        if self.driver_adds_gravity:
            np.subtract(self.total, self.plant.gravity_torques(self._g), out=self.cmd)
            self.limiter.apply(self.cmd, out=self.cmd)
            np.add(self.cmd, self._g, out=self.total)
        if self.external.enabled:
            self.external.commanded(now)
        self.have_published = True
        return self.cmd

    # ------------------------------------------------------------ collisions
    def _collided(self) -> None:
        """A reaction latched at this state: drop the trajectory, hold the measured position, report."""
        ext = self.external
        self.collision_started = True
        self._hold_measured()
        self.log.error("collision: %s; reaction %s until ~/reset_collision" % (
            ", ".join("%s r = %.4g over %.4g" % (self.joints[j], ext.r[j], ext.monitor.thresholds[j])
                      for j in ext.monitor.joints), ext.monitor.reaction))

    def _observe_skipped(self, now_ns: int) -> None:
        """The observer takes the merged state before a newer message overwrites it, when no cycle took it
        (states queued behind each other): skipping it would stretch the observer's interval over states
        whose torque it knows. A collision it latches takes effect at the next cycle."""
        try:
            self.plant.set_state(self.mapper.q, self.mapper.qd)
        except StateError:
            return
        self.external.observe(self.state_stamp_ns * 1e-9, now_ns * 1e-9, self.mapper.effort)

    def _reaction(self, now: float) -> np.ndarray:
        """The latched reaction's torque, clamped, without a ramp."""
        self.limiter.apply(self.external.reaction_torque(self.total), out=self.total)
        self.new_state = False
        self.outcome = REACTION
        return self._sent(now)

    def reset_collision(self) -> bool:
        """Release a latched collision reaction at the next cycle, which holds the measured position and
        ramps back in (as after a stale period). False (nothing to do) if none is latched."""
        if not self.external.monitor.latched:
            return False
        self._reset_collision = True
        return True

    def _release(self, now: float) -> bool:
        """The reset requested: True if the output is to blend from the reaction's torque."""
        if not self.external.monitor.latched:
            return False
        self.external.monitor.reset()
        self._hold_measured()
        self.feedback_ramp.start(now)
        self.log.info("collision reset: holding the measured position, ramping in")
        return self.have_published

    def _hold_measured(self) -> None:
        """Hold the measured position from the next sample: the desired joint state (the controlled joints
        lead the state) and, in a task-space mode, the target pose, anchored at the next cycle."""
        self.traj.reset(self.mapper.q[:self.n])
        self._anchor = True

    def _anchor_task(self, now: float) -> None:
        """Task space: hold the measured pose from now; the posture from the measured configuration unless
        ``nullspace_posture`` sets it. StateError if the plant refuses the state."""
        self.plant.set_state(self.mapper.q, self.mapper.qd)
        self.task.anchor(now)
        if self.settings.nullspace_posture is None:
            self.task.set_posture()
        self._anchor = False

    # ------------------------------------------------------------ around the cycle
    @property
    def task_mode(self) -> bool:
        """A task-space mode is in force (or requested for the next cycle)."""
        s = self._pending or self.settings
        return s.mode in TASK_MODES

    @property
    def task_running(self) -> bool:
        """A task-space mode computed the last command: the task space's outputs are current."""
        return self.law.mode in TASK_MODES and not self._anchor

    def accept_trajectory(self, names, times, P, V, A, start: Optional[float], now: float):
        """Validate a trajectory (:meth:`TrajectoryGenerator.prepare`) and run it from ``start`` (None: now);
        in a task-space mode its last point is the null-space posture instead. Returns the prepared
        trajectory. Raises :class:`TrajectoryError` with the reason."""
        self.check_accepting()
        prep = self.traj.prepare(names, times, P, V, A)
        if self.law.mode in TASK_MODES:
            self.task.set_posture(prep.positions[-1])
        else:
            self.traj.set_trajectory(prep, now, start)
        return prep

    def set_target(self, position, quaternion, frame: str, now: float) -> None:
        """A task-space target pose (m; x, y, z, w) in ``frame`` ("" : the base), converted to the base frame
        at the state last set, approached from ``now`` (s). TaskError or TrajectoryError with the reason."""
        self._check_task("target pose")
        self.task.set_target(position, quaternion, now, frame)

    def set_wrench(self, force, moment, frame: str) -> None:
        """F_d, the wrench the tool is to exert (N, N m), at the origin of ``frame`` in its axes ("": the
        base's), converted to base axes at the end effector at the state last set."""
        self._check_task("target wrench")
        self.task.set_wrench(self.task.wrench_in_base(force, moment, frame))

    def _check_task(self, what: str) -> None:
        self.check_accepting()
        if self.law.mode not in TASK_MODES or self._anchor:
            raise TrajectoryError("a %s needs a task-space mode (%s) in force; mode is %s"
                                  % (what, " or ".join(TASK_MODES), self.settings.mode))

    def check_accepting(self) -> None:
        """TrajectoryError unless a trajectory can run now: a valid state, no latched collision reaction."""
        if not self.active:
            raise TrajectoryError("no valid joint state yet")
        if self.external.monitor.latched:
            raise TrajectoryError("a collision reaction is latched: call ~/reset_collision first")

    def split(self) -> dict:
        """The last law command (before ramp and clamp) decomposed into ``SPLIT_PARTS``
        (:meth:`ControlLaw.split`) at that cycle's state and desired state; arrays reused between calls."""
        return self.law.split(self.mapper.q, self.mapper.qd, self.q_d, self.qd_d, self.qdd_d, self.feedback_scale,
                              None, self._parts, total=self.law.tau)

    def warm_up(self, warn=None, stop=None, groups=GROUPS, progress=None) -> None:
        """Run every compiled path of ``groups`` once (:func:`~rne_control.control.warmup.cycle_steps`), so that
        no cycle compiles anything. ``warn``, ``stop``: see
        :func:`~rne_control.control.warmup.warm_up_law` (KeyboardInterrupt once ``stop`` is set); ``progress``:
        see :func:`~rne_control.control.warmup.run_steps`."""
        run_steps(cycle_steps(self, groups, warn, stop), progress, stop)
