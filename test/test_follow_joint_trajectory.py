"""~/follow_joint_trajectory through a real rclpy ActionClient, on rne_controller + rne_sim in lockstep.

control_msgs has no wheel: test/interfaces/build.py builds its interfaces once into build/interfaces/
(``make test`` does it first; the module fixture builds them if missing). The node processes get them
through PYTHONPATH/LD_LIBRARY_PATH/AMENT_PREFIX_PATH (ros_util.interfaces_env), this process by
ros_util.load_interfaces().

One rne_sim (lockstep, 250 Hz) and one rne_controller (use_sim_time) serve every test of the module; each
test starts from wherever the previous one left the arm. Numbers are checked against the min-jerk
reference the goals are sampled from, against the recorded joint states, and against JTC's rules.
"""
import math
import time
from bisect import bisect_right

import numpy as np
import pytest

import ros_util
from rne_control.ros.runner import EXECUTORS

CFG = ros_util.config("puma560_controller.yaml")
J = [f"joint{i}" for i in range(1, 7)]
RATE = 250.0
ACTION = "/rne_controller/follow_joint_trajectory"
WALL = 90.0          # wall-clock limit for anything that waits on the loop (a failure, never a timing check)

# GoalStatus values
ACCEPTED, EXECUTING, SUCCEEDED, CANCELED, ABORTED = 1, 2, 4, 5, 6


class Rig:
    """The processes, the in-test node, its ActionClient and recordings."""

    def __init__(self, workdir, executor):
        self.executor = executor
        self.FJT = ros_util.load_interfaces()
        self.procs = ros_util.ProcessLauncher(workdir)
        self.tn = ros_util.TestNode("rne_test_fjt")
        try:
            self._start()
        except BaseException:
            self.close()   # a rig that does not come up must not leave its nodes running into later tests
            raise

    def _start(self):
        from rclpy.action import ActionClient
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        self.states = self.tn.collect(JointState, "/joint_states", qos=20000, keep=20000)
        # the newest /clock only: a deeper queue delays "now" by its depth
        self.clock = self.tn.collect(Clock, "/clock", qos=1, keep=10)
        self.ctl_state = self.tn.collect(Float64MultiArray, "/rne_controller/controller_state", qos=1000, keep=5000)
        self.traj_pub = self.tn.publisher(JointTrajectory, "/rne_controller/joint_trajectory")
        common = {"rate": RATE, "gc_freeze": False, "executor": self.executor}
        self.sim = self.procs.start("rne_sim", params_file=CFG, params={"lockstep": True, "control_rate": RATE,
                                                                       "executor": self.executor},
                                    log_name="rne_sim")
        self.ctl = self.procs.start("rne_controller", params_file=CFG,
                                    params=dict(common, use_sim_time=True, state_publish_rate=0.0),
                                    log_name="rne_controller")
        self.client = ActionClient(self.tn.node, self.FJT, ACTION)
        ok = self.tn.wait_for(lambda: self.client.server_is_ready() and len(self.states) > 50, WALL,
                              procs=[self.sim, self.ctl])
        assert ok, ("the action server did not come up; DDS participants of the domain: "
                    f"{ros_util.domain_participants()}\n{self.procs.logs()}")

    def close(self):
        self.procs.stop_all()
        self.tn.shutdown()

    def fail(self, what):
        pytest.fail("%s\n%s" % (what, self.procs.logs()))

    def now(self):
        c = self.clock.last()
        return ros_util.stamp_to_sec(c.clock) if c is not None else 0.0

    def q(self):
        return np.array(self.states.last().position[:6])

    def q_settled(self, margin=1.0):
        """Positions of a joint state stamped ``margin`` s of sim time after the newest /clock received: this
        node's subscriptions can lag the lockstep simulation by a few hundred ms on a loaded machine, so a
        result may arrive before the states that precede it."""
        t = self.now() + margin
        self.wait_sim(t)
        self.wait(lambda: self.states.reached(t), "no joint state stamped after %.3f s" % t)
        return self.q()

    def wait(self, pred, what, timeout=WALL):
        if not self.tn.wait_for(pred, timeout, procs=[self.sim, self.ctl]):
            self.fail(what)

    def wait_sim(self, t):
        self.wait(lambda: self.now() >= t, "sim time stuck at %.3f s (waiting for %.3f s)" % (self.now(), t))

    def goal(self, q0, amp, T, dt=0.05, start=None, path_tol=(), goal_tol=(), goal_time=None, names=None):
        """A goal sampling the min-jerk motion q0 -> q0 + amp over T (positions, velocities, accelerations)."""
        from builtin_interfaces.msg import Duration
        from control_msgs.msg import JointTolerance
        from trajectory_msgs.msg import JointTrajectoryPoint

        g = self.FJT.Goal()
        g.trajectory.joint_names = list(names or J)
        if start is not None:
            g.trajectory.header.stamp = ros_util.sec_to_stamp(start)
        for k in range(1, int(round(T / dt)) + 1):
            q, qd, qdd = min_jerk(q0, amp, k * dt, T)
            pt = JointTrajectoryPoint()
            pt.positions, pt.velocities, pt.accelerations = q.tolist(), qd.tolist(), qdd.tolist()
            pt.time_from_start = duration(k * dt)
            g.trajectory.points.append(pt)
        g.path_tolerance = [JointTolerance(name=n, position=p, velocity=v, acceleration=a) for n, p, v, a in path_tol]
        g.goal_tolerance = [JointTolerance(name=n, position=p, velocity=v, acceleration=a) for n, p, v, a in goal_tol]
        if goal_time is not None:
            g.goal_time_tolerance = duration(goal_time) if goal_time >= 0 else Duration(sec=-1, nanosec=int(
                round((goal_time + 1) * 1e9)))
        return g

    def send(self, goal, feedback=None):
        """Send a goal; returns its ClientGoalHandle once the server answered."""
        fut = self.client.send_goal_async(goal, feedback_callback=feedback)
        self.wait(fut.done, "no answer to a goal")
        return fut.result()

    def result(self, handle):
        fut = handle.get_result_async()
        self.wait(fut.done, "no result for a goal")
        r = fut.result()
        return r.status, r.result

    def desired_since(self, t, n):
        """position_desired (field 0 of the documented layout) of the last n controller_state messages that
        describe joint states stamped at or after t (s of sim time), once this node has read n of them.

        controller_state has no stamp: its position_measured (field 3) is the position of the joint state it
        answered, whose stamp dates it. This node's readers can lag the lockstep loop by seconds on a loaded
        machine, so the newest controller_state it has read may well predate t."""
        def dated():
            states, _ = self.states.snapshot()
            stamp = {tuple(m.position[:6]): ros_util.stamp_to_sec(m.header.stamp) for m in states[-5000:]}
            msgs, _ = self.ctl_state.snapshot()
            fields = [np.array(m.data).reshape(15, 6) for m in msgs[-(n + 1000):]]
            return [f[0] for f in fields if stamp.get(tuple(f[3]), -math.inf) >= t]

        self.wait(lambda: len(dated()) >= n, "fewer than %d controller states after %.3f s" % (n, t))
        return np.array(dated()[-n:])


def min_jerk(q0, amp, t, T):
    s, sd, sdd = ros_util.min_jerk(t, T)
    q0, amp = np.asarray(q0, float), np.asarray(amp, float)
    return q0 + s * amp, sd * amp, sdd * amp


def duration(t):
    from builtin_interfaces.msg import Duration

    ns = int(round(t * 1e9))
    return Duration(sec=ns // 1000000000, nanosec=ns % 1000000000)


def to_sec(d):
    return d.sec + 1e-9 * d.nanosec


@pytest.fixture(scope="module", params=EXECUTORS)
def rig(request, tmp_path_factory, compiled_kernels):
    """rne_sim in lockstep and rne_controller, both on the executor ``request.param``: every goal test
    runs on each executor."""
    ros_util.build_interfaces()
    r = Rig(tmp_path_factory.mktemp("fjt"), request.param)
    try:
        yield r
    finally:
        r.close()


# ----------------------------------------------------------------------------- the interface
def test_interface_definitions_match_control_msgs_6_8_0():
    """The generated types have control_msgs 6.8.0's fields (MoveIt needs equal type hashes)."""
    ros_util.build_interfaces()
    FJT = ros_util.load_interfaces()
    assert FJT.Feedback.get_fields_and_field_types() == {
        "header": "std_msgs/Header", "joint_names": "sequence<string>",
        "desired": "trajectory_msgs/JointTrajectoryPoint", "actual": "trajectory_msgs/JointTrajectoryPoint",
        "error": "trajectory_msgs/JointTrajectoryPoint", "index": "int32",
        "multi_dof_joint_names": "sequence<string>",
        "multi_dof_desired": "trajectory_msgs/MultiDOFJointTrajectoryPoint",
        "multi_dof_actual": "trajectory_msgs/MultiDOFJointTrajectoryPoint",
        "multi_dof_error": "trajectory_msgs/MultiDOFJointTrajectoryPoint", "multi_dof_index": "int32"}
    assert list(FJT.Goal.get_fields_and_field_types()) == [
        "trajectory", "multi_dof_trajectory", "path_tolerance", "component_path_tolerance", "goal_tolerance",
        "component_goal_tolerance", "goal_time_tolerance"]
    assert FJT.Result.get_fields_and_field_types() == {"error_code": "int32", "error_string": "string"}
    assert (FJT.Result.SUCCESSFUL, FJT.Result.INVALID_GOAL, FJT.Result.INVALID_JOINTS, FJT.Result.OLD_HEADER_TIMESTAMP,
            FJT.Result.PATH_TOLERANCE_VIOLATED, FJT.Result.GOAL_TOLERANCE_VIOLATED) == (0, -1, -2, -3, -4, -5)
    from control_msgs.msg import JointComponentTolerance, JointTolerance
    # this build's type hash of the unchanged JointTolerance equals the one other ROS 2 builds of
    # control_msgs generate (as published in a colcon build tree of control_msgs on GitHub)
    import json
    share = ros_util._interfaces_build().INSTALL / "share" / "control_msgs"
    desc = json.loads((share / "msg" / "JointTolerance.json").read_text())
    assert desc["type_hashes"][0]["hash_string"] == \
        "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648"
    assert JointTolerance.get_fields_and_field_types() == {
        "name": "string", "position": "double", "velocity": "double", "acceleration": "double"}
    assert list(JointComponentTolerance.get_fields_and_field_types()) == [
        "joint_name", "component", "position", "velocity", "acceleration"]


# ----------------------------------------------------------------------------- goals
def test_goal_tracks_succeeds_with_feedback(rig):
    q0 = rig.q()
    amp = np.array([0.3, -0.2, 0.25, 0.4, -0.3, 0.5])
    T = 1.5
    t_start = rig.now() + 1.0          # received before it starts, so the desired motion is exactly min-jerk
    goal = rig.goal(q0, amp, T, start=t_start)
    feedback = []
    h = rig.send(goal, feedback=lambda m: feedback.append(m.feedback))
    assert h.accepted
    status, res = rig.result(h)
    assert status == SUCCEEDED, (status, res.error_code, res.error_string)
    assert res.error_code == 0 and res.error_string == "Goal successfully reached!"
    # the result can reach this process before the joint state that ends the trajectory does
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and not rig.states.reached(t_start + T):
        time.sleep(0.01)
    # tracking: the recorded joint states against the min-jerk reference (computed torque, lockstep)
    msgs, _ = rig.states.snapshot()
    pts = [(ros_util.stamp_to_sec(m.header.stamp), np.array(m.position[:6])) for m in msgs]
    err = np.array([q - min_jerk(q0, amp, t - t_start, T)[0] for t, q in pts if t_start <= t <= t_start + T])
    assert len(err) > 0.8 * T * RATE
    rms = np.sqrt(np.mean(err**2, axis=0))
    assert np.all(rms < 1e-3), rms
    # the goal ends at the end of the trajectory, stopped (stopped_velocity_tolerance 0.01)
    end = [m for m in msgs if ros_util.stamp_to_sec(m.header.stamp) >= t_start + T]
    assert end and np.all(np.abs(end[0].velocity[:6]) < 0.01)
    # feedback at 20 Hz (wall): several messages, each consistent with the reference and with JTC's index
    assert len(feedback) >= 3, len(feedback)
    times = [k * 0.05 for k in range(1, 31)]
    moving = 0
    for fb in feedback:
        assert list(fb.joint_names) == J
        tfs = to_sec(fb.desired.time_from_start)
        q_ref, qd_ref, qdd_ref = min_jerk(q0, amp, tfs, T)
        np.testing.assert_allclose(fb.desired.positions, q_ref, atol=1e-9)
        np.testing.assert_allclose(fb.desired.velocities, qd_ref, atol=1e-9)
        np.testing.assert_allclose(fb.desired.accelerations, qdd_ref, atol=1e-7)
        np.testing.assert_allclose(fb.error.positions, np.array(fb.desired.positions) - fb.actual.positions,
                                   atol=1e-12)
        np.testing.assert_allclose(fb.error.velocities, np.array(fb.desired.velocities) - fb.actual.velocities,
                                   atol=1e-12)
        # (a cycle can fall on a point's time: either side of it, within rounding, is right)
        assert bisect_right(times, tfs - 1e-6) <= fb.index <= bisect_right(times, tfs + 1e-6), (fb.index, tfs)
        moving += 0 < fb.index < len(times)
    assert moving >= 1
    assert [fb.index for fb in feedback] == sorted(fb.index for fb in feedback)


def test_preemption_by_a_goal_and_by_the_topic(rig):
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    q0 = rig.q()
    a = rig.send(rig.goal(q0, [0.2, 0.0, 0.0, 0.0, 0.0, 0.3], 4.0))
    assert a.accepted
    rig.wait_sim(rig.now() + 0.3)
    b = rig.send(rig.goal(rig.q(), [-0.2, 0.1, 0.0, 0.0, 0.0, -0.3], 4.0))
    assert b.accepted
    status, res = rig.result(a)
    assert status == ABORTED and res.error_code == rig.FJT.Result.INVALID_GOAL
    assert res.error_string == "Current goal preempted by new incoming action."
    assert b.status in (ACCEPTED, EXECUTING)                    # the new goal runs on
    rig.wait_sim(rig.now() + 0.3)
    assert b.status == EXECUTING
    # a trajectory on ~/joint_trajectory also ends the running goal (a deliberate deviation from JTC)
    target = rig.q() + np.array([0.0, 0.0, 0.1, 0.0, 0.0, 0.0])
    m = JointTrajectory()
    m.joint_names = J
    pt = JointTrajectoryPoint(positions=target.tolist(), velocities=[0.0] * 6, accelerations=[0.0] * 6)
    pt.time_from_start = duration(0.5)
    m.points = [pt]
    assert rig.tn.wait_for_subscribers(rig.traj_pub)
    rig.traj_pub.publish(m)
    status, res = rig.result(b)
    assert status == ABORTED and res.error_code == rig.FJT.Result.INVALID_GOAL
    assert "~/joint_trajectory" in res.error_string
    # and the topic's trajectory is followed
    t = rig.now() + 1.5
    np.testing.assert_allclose(rig.desired_since(t, 1)[0], target, atol=1e-12)
    np.testing.assert_allclose(rig.q(), target, atol=2e-3)


def test_cancel_holds_the_measured_position(rig):
    q0 = rig.q()
    feedback = []
    h = rig.send(rig.goal(q0, [0.4, 0.0, 0.0, 0.5, 0.0, 0.0], 3.0), feedback=lambda m: feedback.append(m.feedback))
    assert h.accepted
    rig.wait(lambda: any(fb.index >= 20 for fb in feedback), "no feedback past point 20")
    fut = h.cancel_goal_async()
    rig.wait(fut.done, "no answer to the cancel request")
    assert len(fut.result().goals_canceling) == 1
    status, res = rig.result(h)
    assert status == CANCELED and res.error_code == 0
    # the controller now holds one measured configuration: the desired position stops changing, is not
    # the goal's end, and is exactly a joint state the controller received
    held = rig.desired_since(rig.now() + 0.2, 50)
    np.testing.assert_allclose(held, np.repeat(held[-1:], len(held), axis=0), atol=0)
    assert np.abs(held[-1] - (q0 + [0.4, 0.0, 0.0, 0.5, 0.0, 0.0])).max() > 0.05
    msgs, _ = rig.states.snapshot()
    assert min(np.abs(np.array(m.position[:6]) - held[-1]).max() for m in msgs[-3000:]) < 1e-12
    # the arm stays there
    np.testing.assert_allclose(rig.q_settled(0.5), held[-1], atol=2e-3)


LIMITS = [97.6, 186.4, 89.4, 24.2, 20.1, 21.3]


def test_tolerance_violations_abort_and_hold(rig):
    """Under a small effort limit on joint 6 a fast wrist motion cannot be followed."""

    def settle_then_limit():
        assert rig.tn.set_parameters("/rne_controller", {"effort_limits": LIMITS})[0].successful
        rig.wait_sim(rig.now() + 1.0)
        res = rig.tn.set_parameters("/rne_controller", {"effort_limits": LIMITS[:5] + [0.3]})
        assert res[0].successful, res[0].reason
        rig.wait_sim(rig.now() + 0.1)
        return rig.q()

    try:
        # path tolerance from the parameter constraints.joint6.trajectory: PATH_TOLERANCE_VIOLATED
        res = rig.tn.set_parameters("/rne_controller", {"constraints.joint6.trajectory": 0.05})
        assert res[0].successful, res[0].reason
        assert not rig.tn.set_parameters("/rne_controller", {"constraints.joint6.goal": -0.1})[0].successful
        q1 = settle_then_limit()
        h = rig.send(rig.goal(q1, [0, 0, 0, 0, 0, -1.0], 0.5))
        assert h.accepted
        status, r = rig.result(h)
        assert status == ABORTED and r.error_code == rig.FJT.Result.PATH_TOLERANCE_VIOLATED, r.error_string
        assert r.error_string.startswith("Aborted due to path tolerance violation") and "joint6" in r.error_string
        err = float(r.error_string.split("position error ")[1].split()[0])
        assert 0.05 < abs(err) < 0.1                             # caught the cycle it went past 0.05 rad
        # it holds the measured position of that moment
        held = rig.desired_since(rig.now() + 0.22, 20)
        np.testing.assert_allclose(held, np.repeat(held[-1:], len(held), axis=0), atol=0)
        assert 0.0 < q1[5] - held[-1][5] < 0.2
        assert rig.tn.set_parameters("/rne_controller", {"constraints.joint6.trajectory": 0.0})[0].successful

        # goal tolerance not reached within goal_time after the end: GOAL_TOLERANCE_VIOLATED
        q0 = settle_then_limit()
        h = rig.send(rig.goal(q0, [0, 0, 0, 0, 0, 1.0], 0.4, goal_tol=[("joint6", 0.01, 0.0, 0.0)], goal_time=0.2))
        assert h.accepted
        status, r = rig.result(h)
        assert status == ABORTED and r.error_code == rig.FJT.Result.GOAL_TOLERANCE_VIOLATED, r.error_string
        assert r.error_string.startswith("Aborted due to goal_time_tolerance exceeding by") and "joint6" in \
            r.error_string
        late = float(r.error_string.split("exceeding by ")[1].split()[0])
        # the first cycle past the goal time (the cycles fall on it: within rounding it may be that one)
        assert 0.2 - 1e-6 <= late <= 0.2 + 1.0 / RATE + 1e-6
    finally:
        rig.tn.set_parameters("/rne_controller", {"effort_limits": LIMITS, "constraints.joint6.trajectory": 0.0})
    rig.wait_sim(rig.now() + 1.0)


def test_invalid_goals_are_rejected_and_the_running_goal_continues(rig):
    q0 = rig.q()
    amp = np.array([0.0, 0.15, 0.0, 0.0, 0.0, 0.2])
    T = 2.0
    running = rig.send(rig.goal(q0, amp, T))
    assert running.accepted
    z = np.zeros(6)
    bad = {
        "unknown joint": rig.goal(q0, z, 0.5, names=J[:5] + ["elbow_x"]),
        "missing joint": rig.goal(q0[:5], z[:5], 0.5, names=J[:5]),
        "ends in the past": rig.goal(q0, z, 0.5, start=rig.now() - 5.0),
        "tolerance -2": rig.goal(q0, z, 0.5, path_tol=[("joint2", -2.0, 0.0, 0.0)]),
        "goal time -0.5": rig.goal(q0, z, 0.5, goal_time=-0.5),
        "tolerance of an unknown joint": rig.goal(q0, z, 0.5, goal_tol=[("elbow_x", 0.1, 0.0, 0.0)]),
    }
    g = rig.goal(q0, z, 0.5)
    g.trajectory.points[3].time_from_start = duration(0.01)
    bad["decreasing times"] = g
    g = rig.goal(q0, z, 0.5)
    g.trajectory.points[2].positions[1] = math.nan
    bad["NaN"] = g
    g = rig.goal(q0, z, 0.5)
    g.trajectory.points[1].velocities = [0.0] * 5
    bad["mismatched lengths"] = g
    g = rig.goal(q0, z, 0.5)
    g.trajectory.points = []
    bad["no points"] = g
    g = rig.goal(q0, z, 0.5)
    g.multi_dof_trajectory.joint_names = ["base"]
    bad["multi-DOF"] = g
    for what, goal in bad.items():
        assert not rig.send(goal).accepted, what
    assert running.status == EXECUTING
    status, res = rig.result(running)
    assert status == SUCCEEDED, (status, res.error_string)
    np.testing.assert_allclose(rig.q_settled(), q0 + amp, atol=2e-3)
    log = rig.ctl.log()
    assert log.count("rejected a goal on ~/follow_joint_trajectory") >= len(bad)
    for reason in ("elbow_x", "missing", "past", "-2", "goal_time_tolerance", "not finite", "mismatched",
                   "no points", "multi_dof_trajectory"):
        assert reason in log, reason


def test_without_control_msgs_the_action_is_not_served(ros_procs, ros_node, tmp_path):
    """The node runs and says once that the action is not served (control_msgs made unimportable, whatever
    the environment holds)."""
    import sys

    params = ros_util.write_params_file(tmp_path / "p.yaml", {
        "model_file": ros_util.config("puma560.yaml"), "rate": 100.0, "gc_freeze": False})
    code = ("import sys; sys.modules['control_msgs'] = None\n"
            "from rne_control.ros.controller.node import main\nsys.exit(main())")
    ctl = ros_util.NodeProcess("rne_controller", [sys.executable, "-c", code, "--ros-args", "--params-file", params],
                               tmp_path / "ctl.log")
    ros_procs.procs.append(ctl)
    ros_node.wait_for(lambda: "controlling" in ctl.log(), WALL, procs=[ctl])
    log = ctl.log()
    assert "control_msgs is not installed" in log and "is not served" in log, log
    assert log.count("follow_joint_trajectory") == 1
    assert ctl.stop() == 0
