"""Task-space control through rne_controller and rne_sim in lockstep on /clock (1 kHz): the 7-DOF arm's URDF in
cartesian_impedance (the deflection under a wrench rne_sim applies against K^-1 F, a shaped target within
max_cartesian_velocity, the posture from ~/joint_trajectory, refusals), and the Panda with its hand uncontrolled
(urdf/panda.urdf as published, the hand's joints left to the model) in operational_space (a target reached,
~/end_effector_pose against Pinocchio's frame placement, an independent implementation).
"""
import os
import time

import numpy as np
import pytest

import ros_util
from ros_util import REPO, config, stamp_to_sec, wrench_msg

RATE = 1000.0
WALL = 120.0
K = np.array([200.0, 200.0, 200.0, 20.0, 20.0, 20.0])


def pose_msg(p, quat, frame=""):
    from geometry_msgs.msg import PoseStamped
    m = PoseStamped()
    m.header.frame_id = frame
    m.pose.position.x, m.pose.position.y, m.pose.position.z = (float(x) for x in p)
    m.pose.orientation.x, m.pose.orientation.y, m.pose.orientation.z, m.pose.orientation.w = (float(x) for x in quat)
    return m


def quat_matrix(q):
    from rne_control.control.task.rotation import quaternion_matrix
    return quaternion_matrix(*q)


class Rig:
    """rne_sim and rne_controller in lockstep, with readers of the task-space topics."""

    def __init__(self, procs, tn, cfg, **ctl):
        from geometry_msgs.msg import PoseStamped, WrenchStamped
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        self.tn, self.procs = tn, procs
        # The simulation runs as fast as the controller answers, and this process can fall behind its 1 kHz
        # topics. The unstamped ones through short queues, so that the newest message read is recent (a loaded
        # machine skips some); the poses in full, read up to a stamp waited for.
        self.task = tn.collect(Float64MultiArray, "/rne_controller/task_state", qos=10, keep=5000)
        self.ee = tn.collect(PoseStamped, "/rne_controller/end_effector_pose", qos=5000, keep=20000)
        self.states = tn.collect(JointState, "/joint_states", qos=10, keep=5000)
        self.clock = tn.collect(Clock, "/clock", qos=1, keep=10)
        self.target = tn.publisher(PoseStamped, "/rne_controller/target_pose", 10)
        self.wrench_pub = tn.publisher(WrenchStamped, "/rne_sim/applied_wrench", 10)
        self.sim = procs.start("rne_sim", params_file=cfg, params={
            "lockstep": True, "control_rate": RATE, "sim_rate": 2 * RATE, "publish_rate": RATE,
            "friction": True}, log_name="rne_sim")
        self.ctl = procs.start("rne_controller", params_file=cfg, params=dict({
            "use_sim_time": True, "rate": RATE, "trigger": "timer", "state_publish_rate": 0.0,
            "gc_freeze": False}, **ctl), log_name="rne_controller")
        self.wait(lambda: len(self.task) > 50 and self.target.get_subscription_count() > 0
                  and self.wrench_pub.get_subscription_count() > 0 and len(self.ee) > 0, "no ~/task_state")
        self.layout = {d.label: d.size for d in self.task.last().layout.dim}

    def wait(self, pred, what, timeout=WALL):
        if not self.tn.wait_for(pred, timeout, procs=[self.sim, self.ctl]):
            pytest.fail("%s\n%s" % (what() if callable(what) else what, self.procs.logs()[-6000:]))

    def now(self):
        c = self.clock.last()
        return stamp_to_sec(c.clock) if c is not None else 0.0

    def state_time(self):
        m = self.states.last()
        return stamp_to_sec(m.header.stamp) if m is not None else 0.0

    def ee_time(self):
        m = self.ee.last()
        return stamp_to_sec(m.header.stamp) if m is not None else 0.0

    def wait_sim(self, dt, task=True):
        """Until /clock is dt (s) later and a joint state, the poses up to then (with ``task``, also a task
        state) newer than then have come."""
        t = self.now() + dt
        self.wait(lambda: self.now() >= t, lambda: "sim time stuck before %.3f s (/clock %.3f)" % (t, self.now()))
        self.wait(lambda: self.state_time() >= t, lambda: "no joint state after %.3f s" % t)
        self.wait(lambda: self.ee_time() >= t, lambda: "no ~/end_effector_pose after %.3f s" % t)
        n = self.task.count
        if task:
            self.wait(lambda: self.task.count > n, "no ~/task_state")

    def field(self, msg, name):
        at = 0
        for k, m in self.layout.items():
            if k == name:
                return np.array(msg.data[at:at + m])
            at += m
        raise KeyError(name)

    def ee_pose(self, m=None):
        """(p, R) of the pose message m (default: the newest read)."""
        if m is None:
            m = self.ee.last()
        p, o = m.pose.position, m.pose.orientation
        return np.array([p.x, p.y, p.z]), quat_matrix((o.x, o.y, o.z, o.w))

    def ee_speeds(self, t0, t1):
        """The tool's linear and angular speeds (m/s, rad/s) between the consecutive poses stamped in [t0, t1]."""
        from scipy.spatial.transform import Rotation
        msgs = [m for m in self.ee.snapshot()[0] if t0 <= stamp_to_sec(m.header.stamp) <= t1]
        dt = np.diff([stamp_to_sec(m.header.stamp) for m in msgs])
        poses = [self.ee_pose(m) for m in msgs]
        v = np.array([np.linalg.norm(b[0] - a[0]) for a, b in zip(poses, poses[1:])]) / dt
        w = np.array([Rotation.from_matrix(b[1] @ a[1].T).magnitude() for a, b in zip(poses, poses[1:])]) / dt
        return v, w


def test_impedance_stiffness_shaped_target_posture_and_refusals(ros_procs, ros_node):
    rig = Rig(ros_procs, ros_node, config("arm7_controller.yaml"), mode="cartesian_impedance",
              **{"observer.enabled": True})
    assert list(rig.layout) == ["pose_error", "target_position", "target_orientation", "target_twist",
                                "target_accel", "twist", "sigma_min", "position_clipped", "rotation_clipped",
                                "singular"]
    rig.wait_sim(0.3)
    e = rig.field(rig.task.last(), "pose_error")
    assert np.abs(e).max() < 1e-3, e                       # entering the mode held the measured pose

    # stiffness: a constant wrench at the end effector (arm7_link7, in its axes) deflects it by K^-1 F
    _, R = rig.ee_pose()
    F_local = np.array([6.0, -4.0, 5.0, 0.4, -0.3, 0.35])
    F = np.r_[R @ F_local[:3], R @ F_local[3:]]
    rig.wrench_pub.publish(wrench_msg("arm7_link7", F_local))
    rig.wait(lambda: "applying a wrench at 'arm7_link7'" in rig.sim.log(), "wrench not applied")
    rig.wait_sim(3.0)
    e = rig.field(rig.task.last(), "pose_error")
    assert np.all(np.abs(e - F / K) <= 0.02 * np.abs(F / K)), (e, F / K, rig.procs.logs()[-6000:])   # 2 % per axis
    rig.wrench_pub.publish(wrench_msg("arm7_link7", np.zeros(6)))
    rig.wait_sim(2.0)

    # a shaped target 0.15 m and 60 degrees away: reached, never faster than max_cartesian_velocity + 10 %
    p0, R0 = rig.ee_pose()
    from rne_control.control.task.rotation import exp, matrix_quaternion
    R1 = exp([0.0, 0.0, np.pi / 3]) @ R0
    p1 = p0 + [0.1, -0.1, 0.05]
    t0 = rig.now()
    rig.target.publish(pose_msg(p1, -matrix_quaternion(R1)))          # -q: the same orientation
    rig.wait_sim(2.5)
    v, w = rig.ee_speeds(t0, t0 + 2.5)                               # from the poses, 1 ms apart
    assert len(v) > 50, len(v)                                       # a loaded machine drops some
    assert v.max() <= 1.1 * 0.25
    assert w.max() <= 1.1 * 1.0
    assert v.max() > 0.05, rig.procs.logs()[-6000:]                   # it did move
    p, R = rig.ee_pose()
    assert np.linalg.norm(p - p1) < 0.01 and np.linalg.norm(R - R1) < 0.02, (p - p1, R - R1, rig.procs.logs()[-6000:])

    # ~/joint_trajectory in a task mode: the null-space posture moves the elbow, the tool stays
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from builtin_interfaces.msg import Duration
    import pinocchio as pin
    pm = pin.buildModelFromUrdf(str(REPO / "urdf" / "arm7.urdf"))
    pd = pm.createData()
    q = np.array(rig.states.last().position[:7])
    J = pin.computeFrameJacobian(pm, pd, q, pm.getFrameId("arm7_link7"), pin.LOCAL_WORLD_ALIGNED)
    null = np.linalg.svd(J)[2][-1]                                  # J null = 0: the self-motion direction
    posture = q + 0.3 * null
    res = ros_node.set_parameters("/rne_controller", {"nullspace_stiffness": [40.0]})
    assert res[0].successful, res[0].reason
    jt = ros_node.publisher(JointTrajectory, "/rne_controller/joint_trajectory", 10)
    rig.wait(lambda: jt.get_subscription_count() > 0, "no ~/joint_trajectory reader")
    jt.publish(JointTrajectory(joint_names=["arm7_joint%d" % i for i in range(1, 8)], points=[
        JointTrajectoryPoint(positions=posture.tolist(), time_from_start=Duration(sec=1))]))
    rig.wait_sim(3.0)
    q1 = np.array(rig.states.last().position[:7])
    assert null @ (q1 - q) > 0.15, (null @ (q1 - q), q1 - q)      # half way along the self-motion
    p2, R2 = rig.ee_pose()
    assert np.linalg.norm(p2 - p1) < 0.01 and np.linalg.norm(R2 - R1) < 0.02

    # refusals with the reason; the node lives on
    rig.target.publish(pose_msg(p1, [0.0, 0.0, 0.0, 0.0]))
    rig.wait(lambda: "rejected ~/target_pose" in rig.ctl.log() and "quaternion" in rig.ctl.log(), "zero quaternion")
    time.sleep(2.1)                                                  # the rejection log is throttled to 2 s
    rig.target.publish(pose_msg(p1, [0.0, 0.0, 0.0, 1.0], frame="map"))
    rig.wait(lambda: "'map' is not a frame of the model" in rig.ctl.log(), "frame_id map not rejected")
    for name, value, why in (("cartesian_stiffness", [1.0, 2.0], "cartesian_stiffness"),
                             ("cartesian_stiffness", [-1.0] * 6, "cartesian_stiffness"),
                             ("error_clip", [0.0, 0.5], "error_clip"),
                             ("damping_design", "critical", "damping_design"),
                             ("max_cartesian_velocity", [0.2, 0.0], "max_cartesian_velocity"),
                             ("nullspace_posture", [0.0] * 3, "nullspace_posture")):
        res = ros_node.set_parameters("/rne_controller", {name: value})
        assert not res[0].successful and why in res[0].reason, (name, res[0].reason)

    # FollowJointTrajectory goals: INVALID_GOAL (-1) with the reason while a task mode is in force
    from rclpy.action import ActionClient
    FJT = ros_util.load_interfaces()
    client = ActionClient(ros_node.node, FJT, "/rne_controller/follow_joint_trajectory")
    rig.wait(lambda: client.server_is_ready(), "no action server")
    goal = FJT.Goal()
    goal.trajectory.joint_names = ["arm7_joint%d" % i for i in range(1, 8)]
    goal.trajectory.points = [JointTrajectoryPoint(positions=q.tolist(), time_from_start=Duration(sec=2))]
    fut = client.send_goal_async(goal)
    rig.wait(lambda: fut.done(), "goal not answered")
    result = fut.result().get_result_async()
    rig.wait(lambda: result.done(), "goal not finished")
    res = result.result().result
    assert res.error_code == -1 and "task-space mode" in res.error_string, (res.error_code, res.error_string)

    # back to a joint mode: the desired state holds the measured position (no jump back)
    qb = np.array(rig.states.last().position[:7])
    res = ros_node.set_parameters("/rne_controller", {"mode": "computed_torque"})
    assert res[0].successful, res[0].reason
    rig.wait_sim(1.0, task=False)
    assert np.abs(np.array(rig.states.last().position[:7]) - qb).max() < 0.01
    # a running goal is aborted with INVALID_GOAL when a task-space mode comes in
    goal.trajectory.points = [JointTrajectoryPoint(positions=(qb + 0.2).tolist(),   # long: still running below
                                                   time_from_start=Duration(sec=30))]
    fut = client.send_goal_async(goal)
    rig.wait(lambda: fut.done(), "goal not answered")
    assert fut.result().accepted
    result = fut.result().get_result_async()
    rig.wait_sim(0.2, task=False)
    assert ros_node.set_parameters("/rne_controller", {"mode": "operational_space"})[0].successful
    rig.wait(lambda: result.done(), "goal not aborted")
    res = result.result().result
    assert res.error_code == -1 and "task-space mode operational_space" in res.error_string, res.error_string
    assert rig.ctl.alive()
    assert rig.ctl.stop() == 0 and rig.sim.stop() == 0


def test_operational_space_on_the_panda_with_its_hand(ros_procs, ros_node):
    import pinocchio as pin
    urdf = str(REPO / "urdf" / "panda.urdf")
    rig = Rig(ros_procs, ros_node, config("panda_controller.yaml"), mode="operational_space",
              end_effector_frame="panda_hand_tcp")
    pm = pin.buildModelFromUrdf(urdf)
    pd = pm.createData()
    rig.wait_sim(0.3)
    # ~/end_effector_pose against Pinocchio's placement of panda_hand_tcp at the measured configuration
    def same_stamp():   # the newest pose and joint state of one instant (a loaded machine skips some of each)
        states = {s.header.stamp.sec * 10 ** 9 + s.header.stamp.nanosec: s for s in rig.states.snapshot()[0]}
        return next(((m, states[m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec])
                     for m in reversed(rig.ee.snapshot()[0])
                     if m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec in states), None)
    rig.wait(lambda: same_stamp() is not None, "no joint state at an end effector pose's stamp")
    m, js = same_stamp()
    q = pin.neutral(pm)
    for name, x in zip(js.name, js.position):
        q[pm.joints[pm.getJointId(name)].idx_q] = x
    pin.framesForwardKinematics(pm, pd, q)
    T = pd.oMf[pm.getFrameId("panda_hand_tcp")]
    p, o = m.pose.position, m.pose.orientation
    np.testing.assert_allclose([p.x, p.y, p.z], T.translation, atol=1e-9)
    np.testing.assert_allclose(quat_matrix((o.x, o.y, o.z, o.w)), T.rotation, atol=1e-9)
    assert rig.ee.last().header.frame_id == "panda_link0"

    # a target 5 cm away in the hand's own frame (converted at arrival): reached
    p0, R0 = rig.ee_pose()
    rig.target.publish(pose_msg([0.0, 0.0, 0.05], [0.0, 0.0, 0.0, 1.0], frame="panda_hand_tcp"))
    rig.wait_sim(2.0)
    p, R = rig.ee_pose()
    np.testing.assert_allclose(p, p0 + R0[:, 2] * 0.05, atol=2e-3)
    assert np.linalg.norm(R - R0) < 0.01
    assert rig.field(rig.task.last(), "sigma_min")[0] > 0.05
    assert rig.ctl.stop() == 0 and rig.sim.stop() == 0


def test_cold_start_compiles_nothing_in_the_task_modes(ros_procs, ros_node, tmp_path):
    """An empty NUMBA_CACHE_DIR (a fresh install): the node compiles the task-space kernel in its warm-up, and
    then both modes, both damping designs and projectors, a shaped and a stepped target, a target wrench, a
    posture trajectory and the task topics compile nothing ("jit_*_after_ready" 0 in /diagnostics)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import PoseStamped, WrenchStamped
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from builtin_interfaces.msg import Duration
    from test_controller_node import Lockstep
    cache = tmp_path / "numba_cache"
    cache.mkdir()
    names = ["arm7_joint%d" % i for i in range(1, 8)]
    ctl = ros_procs.start("rne_controller", params={
        "model_file": str(REPO / "urdf" / "arm7.urdf"), "use_sim_time": True, "gc_freeze": False, "rate": 100.0,
        "mode": "cartesian_impedance", "state_publish_rate": 0.0, "ramp_time": 0.03},
        env={"NUMBA_CACHE_DIR": str(cache)})
    diags = ros_node.collect(DiagnosticArray, "/diagnostics")
    task = ros_node.collect(Float64MultiArray, "/rne_controller/task_state")
    ee = ros_node.collect(PoseStamped, "/rne_controller/end_effector_pose")
    target = ros_node.publisher(PoseStamped, "/rne_controller/target_pose", 10)
    wrench = ros_node.publisher(WrenchStamped, "/rne_controller/target_wrench", 10)
    jt = ros_node.publisher(JointTrajectory, "/rne_controller/joint_trajectory", 10)
    ls = Lockstep(ros_node, 100.0)
    q = np.array([0.1, -0.4, 0.1, -2.0, 0.1, 1.6, 0.5])
    qd = np.full(7, 0.05)
    ls.start(names, q, qd, timeout=400.0, procs=[ctl])
    assert os.listdir(cache), "the node did not use the empty NUMBA_CACHE_DIR"

    def run(steps):
        for _ in range(steps):
            ls.step(names, q, qd)

    run(5)
    assert ros_node.wait_for(lambda: len(task) > 0 and len(ee) > 0 and target.get_subscription_count() > 0
                             and jt.get_subscription_count() > 0 and wrench.get_subscription_count() > 0, 20.0)
    for mode in ("cartesian_impedance", "operational_space"):
        for design in ("unit_mass", "double_diagonalization"):
            for projector in ("kinematic", "dynamic"):
                res = ros_node.set_parameters("/rne_controller", {"mode": mode, "damping_design": design,
                                                                  "nullspace_projector": projector})
                assert all(r.successful for r in res), [r.reason for r in res]
                run(4)
                for limits in ([0.25, 1.0], [0.0, 0.0]):
                    assert ros_node.set_parameters("/rne_controller", {"max_cartesian_velocity": limits})[0].successful
                    run(2)
                    target.publish(pose_msg([0.02, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], frame="arm7_link7"))
                    run(4)
                m = WrenchStamped()
                m.header.frame_id = "arm7_link7"
                m.wrench.force.z = 2.0
                wrench.publish(m)
                jt.publish(JointTrajectory(joint_names=names, points=[
                    JointTrajectoryPoint(positions=(q + 0.05).tolist(), time_from_start=Duration(sec=1))]))
                run(4)
    assert ros_node.set_parameters("/rne_controller", {"mode": "computed_torque"})[0].successful
    run(5)
    assert np.all(np.isfinite(np.array([ls.command(m) for m in ls.cmds.snapshot()[0]])))
    n0 = len(diags)
    assert ros_node.wait_for(lambda: len(diags) > n0 + 1, 10.0, procs=[ctl])
    d = {kv.key: kv.value for kv in diags.last().status[0].values}
    assert d["end_effector_frame"] == "arm7_link7"
    assert int(d["jit_signatures_after_ready"]) == 0, ctl.log()[-3000:]
    assert int(d["jit_compiles_after_ready"]) == 0, ctl.log()[-3000:]
    assert "compiled after the warm-up" not in ctl.log()
    assert ctl.stop() == 0
