"""``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory) for ``rne_controller``.

Served whenever ``control_msgs`` is importable (ros2_control and MoveIt installations have it);
otherwise the node logs once that the action is unavailable and runs without it. The semantics follow
joint_trajectory_controller (JTC, Kilted), so that MoveIt can drive ``rne_controller`` unchanged:

* **Goal reception.** A goal is checked with the rules of ``~/joint_trajectory`` (the node's
  :class:`~rne_control.control.trajectory.TrajectoryGenerator`: names, lengths, times, finite values,
  an end in the past) and its tolerances (:meth:`~rne_control.control.tolerances.Tolerances.for_goal`);
  an invalid one is rejected (GoalResponse.REJECT) with the reason logged, and the running goal
  continues. A goal with a ``multi_dof_trajectory`` is rejected too (no multi-DOF joints here). A goal
  tolerance below 0 other than -1, or naming a joint that is not controlled, makes the goal invalid
  (Kilted's JTC accepts such a goal and uses its default tolerances instead).
* **Preemption.** An accepted goal aborts the running one with INVALID_GOAL, "Current goal preempted by
  new incoming action.". A trajectory accepted on ``~/joint_trajectory`` aborts it the same way
  (JTC keeps the goal running: a deliberate deviation, so that a goal never reports on a motion it no
  longer commands).
* **Task-space modes.** While ``mode`` is ``cartesian_impedance`` or ``operational_space`` a goal is
  accepted and at once aborted with INVALID_GOAL and the reason (the joints follow the task; a
  ``~/joint_trajectory`` sets the null-space posture instead); switching into such a mode aborts the
  running goal the same way.
* **Cancel** ends the goal CANCELED and holds the measured position.
* **Tolerances** are checked every control cycle (:class:`~rne_control.control.tolerances.GoalTracker`):
  a path violation aborts with PATH_TOLERANCE_VIOLATED and holds the measured position; a goal not within
  its goal tolerance ``goal_time`` after the end aborts with GOAL_TOLERANCE_VIOLATED and holds; else the
  goal succeeds and the last point is held.
* **Feedback** (desired, actual, error, ``index``) is published at ``action_monitor_rate``.
* If the joint states go stale, the running goal aborts (PATH_TOLERANCE_VIOLATED, the reason in the
  string): the node holds, and on recovery it holds the measured position instead of the trajectory.

Parameters (JTC's names and defaults; the tolerances are read when a goal is accepted):

* ``action_monitor_rate`` (double, 20.0): Hz, feedback rate (read at start);
* ``constraints.goal_time`` (double, 0.0): s after the end to reach the goal tolerance (0: no limit);
* ``constraints.stopped_velocity_tolerance`` (double, 0.01): goal velocity tolerance of every joint;
* ``constraints.<joint>.trajectory`` (double, 0.0): path position tolerance (0: not checked);
* ``constraints.<joint>.goal`` (double, 0.0): goal position tolerance (0: not checked).

Threading: the action server and the feedback timer are in the node's default (mutually exclusive)
callback group, with the control cycle, because they read and replace the node's trajectory; each of
their callbacks is short. The execute callback is a coroutine that awaits the goal's end, so it holds no
callback group and never blocks the cycle. The cycle itself only calls :meth:`update`, which checks the
tolerances on preallocated arrays and, at the goal's end, completes a future.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.task import Future

from ...control.tolerances import RUNNING, SUCCEEDED, GoalTracker, Tolerances
from ...control.trajectory import TrajectoryError
from ...control.watchdog import STALE
from .settings import ConfigError
from ..conversions import duration_msg, duration_to_sec, trajectory_fields
from ..params import Spec, T

try:
    from control_msgs.action import FollowJointTrajectory
except ImportError:  # not installed: the node runs without the action
    FollowJointTrajectory = None

ACTION = "follow_joint_trajectory"
# s a finished goal's result stays available to late result requests (rcl's default, which JTC keeps, is
# 15 min: each goal's handle then holds about 4 kB for that long, a growth a long run at a goal every few
# seconds shows; clients such as MoveIt ask for the result as soon as the goal is accepted)
RESULT_TIMEOUT = 60
# how a goal ends
SUCCEED, ABORT, CANCEL = "succeeded", "aborted", "canceled"
INVALID_GOAL = -1
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4


def parameter_specs(joints):
    specs = [
        Spec("action_monitor_rate", T.DOUBLE, 20.0, "Hz, rate of ~/follow_joint_trajectory feedback",
             read_only=True, constraints="> 0"),
        Spec("constraints.goal_time", T.DOUBLE, 0.0, "s after the trajectory's end to reach the goal tolerance "
             "(0: no limit)", constraints=">= 0"),
        Spec("constraints.stopped_velocity_tolerance", T.DOUBLE, 0.01, "goal velocity tolerance of every joint",
             constraints=">= 0"),
    ]
    for j in joints:
        specs.append(Spec("constraints.%s.trajectory" % j, T.DOUBLE, 0.0,
                          "path position tolerance of %s (0: not checked)" % j, constraints=">= 0"))
        specs.append(Spec("constraints.%s.goal" % j, T.DOUBLE, 0.0,
                          "goal position tolerance of %s (0: not checked)" % j, constraints=">= 0"))
    return specs


def create_server(node) -> Optional["FollowJointTrajectoryServer"]:
    """The action server of ``node`` (a ControllerNode after its set-up), or None (logged once) when
    control_msgs is not available."""
    log = node.get_logger()
    if FollowJointTrajectory is None:
        log.info("control_msgs is not installed: the action ~/%s (control_msgs/action/FollowJointTrajectory) "
                 "is not served" % ACTION)
        return None
    try:
        return FollowJointTrajectoryServer(node)
    except ConfigError:
        raise
    except Exception as e:  # e.g. control_msgs importable but its type support libraries not found
        log.error("the action ~/%s is not served: %s" % (ACTION, e))
        return None


class _Goal:
    """One accepted goal: its handle, its tracker, and a future completed with (code, text, outcome)."""

    __slots__ = ("handle", "tracker", "generation", "future")

    def __init__(self, handle, tracker=None, generation=-1):
        self.handle = handle
        self.tracker = tracker
        self.generation = generation
        self.future = Future()


class FollowJointTrajectoryServer:
    """See the module docstring. ``node`` must provide ``joints``, ``params``, ``cycle`` (its
    :class:`~rne_control.control.cycle.ControlCycle`), ``publishing`` (its
    :class:`~rne_control.ros.publishers.Publishers`) and ``_now()`` (the ControllerNode). The controlled
    joints lead the cycle's merged state."""

    def __init__(self, node):
        from rclpy.action import ActionServer

        self.node = node
        self.joints = tuple(node.joints)
        node.params.declare(parameter_specs(self.joints))
        self._check_parameters({s.name: node.params.get(s.name) for s in parameter_specs(self.joints)})
        node.add_on_set_parameters_callback(self._on_set_parameters)
        nc = len(self.joints)
        self._q = np.zeros(nc)
        self._qd = np.zeros(nc)
        self._active: Optional[_Goal] = None
        self._goals = {}                 # goal id -> _Goal, until the execute callback returns
        self._validated = None           # (goal message, prepared, start, tolerances) from the goal callback
        self._rejected = getattr(node, "_rejected", {})
        self._rejected.setdefault(ACTION, 0)
        self._server = ActionServer(node, FollowJointTrajectory, "%s/%s" % (node.get_name(), ACTION),
                                    execute_callback=self._execute, goal_callback=self._on_goal,
                                    handle_accepted_callback=self._on_accepted, cancel_callback=self._on_cancel,
                                    result_timeout=RESULT_TIMEOUT)
        rate = float(node.params.get("action_monitor_rate"))
        self._monitor = node.create_timer(1.0 / rate, self._on_monitor, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._monitor.cancel()
        self._feedback = FollowJointTrajectory.Feedback()
        self._feedback.joint_names = list(self.joints)
        self._feedback_topic = self._server_name() + "/_action/feedback"
        node.get_logger().info("serving the action %s (control_msgs/action/FollowJointTrajectory), feedback at "
                               "%.1f Hz" % (self._server_name(), rate))

    def _server_name(self) -> str:
        ns = self.node.get_namespace().rstrip("/")
        return "%s/%s/%s" % (ns, self.node.get_name(), ACTION)

    # ------------------------------------------------------------ parameters
    def _check_parameters(self, values) -> None:
        for name, v in values.items():
            if name == "action_monitor_rate":
                if not (v is not None and math.isfinite(v) and v > 0.0):
                    raise ConfigError("action_monitor_rate must be a positive number of Hz (got %r)" % v)
            elif not (v is not None and math.isfinite(v) and v >= 0.0):
                raise ConfigError("%s must be a finite value >= 0 (got %r)" % (name, v))

    def _on_set_parameters(self, params) -> SetParametersResult:
        mine = {p.name: p.value for p in params if p.name.startswith("constraints.")}
        try:
            self._check_parameters({k: (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                                        else None) for k, v in mine.items()})
        except ConfigError as e:
            return SetParametersResult(successful=False, reason=str(e))
        return SetParametersResult(successful=True)

    def default_tolerances(self) -> Tolerances:
        """JTC's default tolerances from the ``constraints.*`` parameters."""
        get = self.node.params.get
        return Tolerances.defaults(
            self.joints,
            trajectory={j: get("constraints.%s.trajectory" % j) for j in self.joints},
            goal={j: get("constraints.%s.goal" % j) for j in self.joints},
            stopped_velocity_tolerance=get("constraints.stopped_velocity_tolerance"),
            goal_time=get("constraints.goal_time"))

    # ------------------------------------------------------------ goals
    def _validate(self, goal):
        """(prepared trajectory, start time or None, tolerances) of a goal; raises TrajectoryError."""
        node = self.node
        node.cycle.check_accepting()
        mdof = goal.multi_dof_trajectory
        if len(mdof.joint_names) or len(mdof.points):
            raise TrajectoryError("multi_dof_trajectory is not supported (the controlled joints are single-DOF); "
                                  "leave it empty", "multi_dof_trajectory")
        names, times, P, V, A, start = trajectory_fields(goal.trajectory)
        prep = node.cycle.traj.prepare(names, times, P, V, A)
        node.cycle.traj.check_start(prep, node._now(), start)
        tol = self.default_tolerances().for_goal(goal.path_tolerance, goal.goal_tolerance,
                                                 duration_to_sec(goal.goal_time_tolerance))
        return prep, start, tol

    def _on_goal(self, goal):
        from rclpy.action import GoalResponse

        if self.node.cycle.task_mode:   # accepted, to be answered at once with INVALID_GOAL and the reason
            self._rejected[ACTION] += 1
            self._validated = (goal, None, None, None)
            return GoalResponse.ACCEPT
        try:
            prep, start, tol = self._validate(goal)
        except TrajectoryError as e:
            self._rejected[ACTION] += 1
            self.node.get_logger().error("rejected a goal on ~/%s: %s%s" % (
                ACTION, e, "; the running goal continues" if self._active is not None else ""))
            return GoalResponse.REJECT
        self._validated = (goal, prep, start, tol)
        return GoalResponse.ACCEPT

    def _on_accepted(self, handle) -> None:
        node = self.node
        v, self._validated = self._validated, None
        if v is not None and v[0] is handle.request and v[1] is None:
            self._start_finished(handle, INVALID_GOAL, "the controller is in the task-space mode %s: joint "
                                 "trajectories set its null-space posture on ~/joint_trajectory; switch mode to a "
                                 "joint mode for goals" % node.cycle.settings.mode)
            return
        if v is not None and v[0] is handle.request:
            _, prep, start, tol = v
        else:  # not seen by the goal callback just before (cannot happen with rclpy's server): check again
            try:
                prep, start, tol = self._validate(handle.request)
            except TrajectoryError as e:
                self._start_finished(handle, INVALID_GOAL, str(e))
                return
        self._preempt("Current goal preempted by new incoming action.")
        now = node._now()
        try:
            t0 = node.cycle.traj.check_start(prep, now, start)
            node.cycle.traj.set_trajectory(prep, now, t0)
        except TrajectoryError as e:  # it ended while waiting to be accepted
            self._start_finished(handle, OLD_HEADER_TIMESTAMP, str(e))
            return
        g = _Goal(handle, GoalTracker(tol, t0, prep.times), node.cycle.traj.generation)
        self._goals[bytes(handle.goal_id.uuid)] = g
        self._active = g
        handle.execute()
        self._monitor.reset()
        node.get_logger().info("accepted a goal on ~/%s: %d points (%s), %.3f s" % (
            ACTION, len(prep.times), prep.kind, float(prep.times[-1])))

    def _start_finished(self, handle, code, text) -> None:
        g = _Goal(handle)
        self._goals[bytes(handle.goal_id.uuid)] = g
        g.future.set_result((code, text, ABORT))
        handle.execute()
        self.node.get_logger().error("aborted a goal on ~/%s: %s" % (ACTION, text))

    async def _execute(self, handle):
        key = bytes(handle.goal_id.uuid)
        g = self._goals[key]
        try:
            code, text, outcome = await g.future
        finally:
            self._goals.pop(key, None)
        if outcome == SUCCEED:
            handle.succeed()
        elif outcome == CANCEL:
            handle.canceled()
        else:
            handle.abort()
        return FollowJointTrajectory.Result(error_code=code, error_string=text)

    def _on_cancel(self, handle):
        from rclpy.action import CancelResponse

        g = self._active
        if g is None or bytes(g.handle.goal_id.uuid) != bytes(handle.goal_id.uuid):
            return CancelResponse.REJECT
        self.node.get_logger().info("canceling the goal on ~/%s: holding the measured position" % ACTION)
        self._hold()
        self._finish(g, 0, "", CANCEL)      # JTC: an empty result
        return CancelResponse.ACCEPT

    # ------------------------------------------------------------ ending goals
    def _finish(self, g: _Goal, code: int, text: str, outcome: str) -> None:
        if not g.future.done():
            g.future.set_result((code, text, outcome))
        if self._active is g:
            self._active = None
            self._monitor.cancel()

    def _preempt(self, text: str) -> None:
        g = self._active
        if g is not None:
            self.node.get_logger().warning("the goal on ~/%s is aborted: %s" % (ACTION, text))
            self._finish(g, INVALID_GOAL, text, ABORT)

    def preempt_by_topic(self, topic: str = "~/joint_trajectory") -> None:
        """A trajectory was accepted on a topic: abort the running goal (deviation from JTC)."""
        self._preempt("Current goal preempted by a trajectory on %s." % topic)

    def abort_collision(self) -> None:
        """A collision reaction started: abort the running goal with PATH_TOLERANCE_VIOLATED (the cycle has
        dropped its trajectory)."""
        g = self._active
        if g is not None:
            mon = self.node.cycle.external.monitor
            text = ("Aborted: collision detected at %s (external torque over collision.thresholds); reaction %r "
                    "until ~/reset_collision" % (", ".join(self.node.joints[j] for j in mon.joints), mon.reaction))
            self.node.get_logger().warning("the goal on ~/%s is aborted: %s" % (ACTION, text))
            self._finish(g, PATH_TOLERANCE_VIOLATED, text, ABORT)

    def _hold(self) -> None:
        node = self.node
        np.copyto(self._q, node.cycle.mapper.q[:len(self._q)])
        node.cycle.traj.reset(self._q)

    @property
    def active(self) -> bool:
        return self._active is not None

    def update(self, now: float) -> None:
        """Called by the control cycle after its command (``now`` in s): check the running goal."""
        g = self._active
        if g is None:
            return
        node = self.node
        if node.cycle.task_mode:
            self._finish(g, INVALID_GOAL, "Aborted: the mode changed to the task-space mode %s"
                         % (node.cycle.settings.mode), ABORT)
            return
        if node.cycle.traj.generation != g.generation:  # replaced behind our back: a stale-state recovery
            self._finish(g, PATH_TOLERANCE_VIOLATED, "Aborted: the controller dropped the trajectory after the "
                         "joint states went stale, and holds the measured position", ABORT)
            return
        np.copyto(self._q, node.cycle.mapper.q[:len(self._q)])
        np.copyto(self._qd, node.cycle.mapper.qd[:len(self._qd)])
        tr = g.tracker
        status = tr.update(now, node.cycle.traj.q, node.cycle.traj.qd, self._q, self._qd)
        if status == RUNNING:
            return
        log = node.get_logger()
        if status == SUCCEEDED:
            log.info("goal on ~/%s reached, success!" % ACTION)
            self._finish(g, status, tr.message, SUCCEED)
        else:
            log.warning("the goal on ~/%s is aborted: %s; holding the measured position" % (ACTION, tr.message))
            self._hold()
            self._finish(g, status, tr.message, ABORT)

    # ------------------------------------------------------------ feedback
    def _on_monitor(self) -> None:
        g = self._active
        if g is None:
            self._monitor.cancel()
            return
        node = self.node
        if node.cycle.watchdog.status == STALE:
            text = ("Aborted: no valid joint state for more than state_timeout (%.3f s); the controller applies "
                    "on_stale %r" % (node.cycle.watchdog.timeout, node.cycle.watchdog.on_stale))
            node.get_logger().warning("the goal on ~/%s is aborted: %s" % (ACTION, text))
            self._finish(g, PATH_TOLERANCE_VIOLATED, text, ABORT)
            return
        tr = g.tracker
        t = node.cycle.traj.t_sampled  # the time of the desired state reported (not the tracker's last check)
        if t == -math.inf:
            t = node._now()
        fb = self._feedback
        fb.header.stamp = node.get_clock().now().to_msg()
        q_d, qd_d, qdd_d = node.cycle.traj.q, node.cycle.traj.qd, node.cycle.traj.qdd
        np.copyto(self._q, node.cycle.mapper.q[:len(self._q)])
        np.copyto(self._qd, node.cycle.mapper.qd[:len(self._qd)])
        since = duration_msg(t - tr.t_start)
        d, a, e = fb.desired, fb.actual, fb.error
        d.positions, d.velocities, d.accelerations = q_d.tolist(), qd_d.tolist(), qdd_d.tolist()
        a.positions, a.velocities = self._q.tolist(), self._qd.tolist()
        e.positions, e.velocities = (q_d - self._q).tolist(), (qd_d - self._qd).tolist()
        d.time_from_start = a.time_from_start = e.time_from_start = since
        fb.index = tr.index(t)
        node.publishing.send(self._feedback_topic, g.handle.publish_feedback, fb)
