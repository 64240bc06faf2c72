"""External torques and collisions through rne_controller and rne_sim in lockstep on /clock (the 7-DOF arm's
URDF, the exact model): ~/external_torque against J^T F of the wrench rne_sim applies (the frame Jacobian
from Pinocchio, an independent implementation), ~/external_wrench against that wrench, detection within
ln 2 / K_O + 2 cycles, the damp reaction that aborts a FollowJointTrajectory goal with
PATH_TOLERANCE_VIOLATED (-4), ~/collision and ~/reset_collision, and bad parameters and efforts refused
while the node lives on."""
import math

import numpy as np
import pytest

import ros_util
import rne_control as rc
from ros_util import REPO, config, stamp_ns, stamp_to_sec, wrench_msg

CFG = config("arm7_controller.yaml")
URDF = str(REPO / "urdf" / "arm7.urdf")
RATE = 1000.0        # the shipped rate: the discrete observer integrates over one period (error ~ T)
K_O = 50.0
LIMITS = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])
WALL = 90.0


class Rig:
    def __init__(self, procs, tn, **ctl):
        from geometry_msgs.msg import WrenchStamped
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool
        self.tn, self.procs = tn, procs
        self.FJT = ros_util.load_interfaces()
        self.states = tn.collect(JointState, "/joint_states", qos=20000, keep=20000)
        self.r = tn.collect(JointState, "/rne_controller/external_torque", qos=5000, keep=5000)
        self.F = tn.collect(WrenchStamped, "/rne_controller/external_wrench", qos=10, keep=10)
        self.collision = tn.collect(Bool, "/rne_controller/collision", qos=ros_util_latched())
        # the newest /clock only: a deeper queue delays "now" by its depth
        self.clock = tn.collect(Clock, "/clock", qos=1, keep=10)
        self.wrench_pub = tn.publisher(WrenchStamped, "/rne_sim/applied_wrench", 10)
        self.sim = procs.start("rne_sim", params_file=CFG, params={
            "lockstep": True, "control_rate": RATE, "sim_rate": 2 * RATE, "publish_rate": RATE,
            "friction": True}, log_name="rne_sim")
        self.ctl = procs.start("rne_controller", params_file=CFG, params=dict({
            "use_sim_time": True, "rate": RATE, "trigger": "timer", "state_publish_rate": 0.0, "gc_freeze": False,
            "observer.gain": [K_O]}, **ctl), log_name="rne_controller")
        self.wait(lambda: len(self.r) > 50 and self.wrench_pub.get_subscription_count() > 0
                  and self.collision.last() is not None, "no ~/external_torque")

    def wait(self, pred, what, timeout=WALL):
        if not self.tn.wait_for(pred, timeout, procs=[self.sim, self.ctl]):
            pytest.fail("%s\n%s" % (what, self.procs.logs()[-6000:]))

    def now(self):
        c = self.clock.last()
        return stamp_to_sec(c.clock) if c is not None else 0.0

    def wait_sim(self, dt):
        """Wait until this node has read ~/external_torque stamped dt (s) after its newest /clock; returns
        that time."""
        t = self.now() + dt
        self.wait(lambda: self.r.reached(t), "sim time stuck before %.3f s" % t)
        return t

    def read_until(self, collection, t):
        """The newest message of ``collection`` once this node has read one stamped at or after t (s): its
        readers lag the lockstep loop, each by its own amount."""
        self.wait(lambda: collection.reached(t), "no message stamped after %.3f s" % t)
        return collection.last()

    def wait_over(self, level, after=-math.inf, joints=slice(None)):
        """The stamp (s) of the first ~/external_torque message after ``after`` (s) with some |r_i| > level
        (i in ``joints``), once this node has read one that is still over it (r holds while a wrench does)."""
        def over(m):
            return stamp_to_sec(m.header.stamp) > after and np.any(np.abs(np.array(m.effort)[joints]) > level)

        self.wait(lambda: self.r.last() is not None and over(self.r.last()),
                  "|r| never over %g after %.3f s" % (level, after))
        return next(stamp_to_sec(m.header.stamp) for m in self.r.snapshot()[0] if over(m))

    def states_until(self, t):
        """{stamp (ns): q} of the joint states read up to one stamped at or after t (s); a state this node
        missed (its reader can fall behind the lockstep loop by more than the publisher keeps) is absent."""
        self.read_until(self.states, t)
        return {stamp_ns(m.header.stamp): np.array(m.position[:7]) for m in self.states.snapshot()[0]}


def ros_util_latched():
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.mark.parametrize("source", ["commanded", "measured"])
def test_estimate_wrench_detection_reaction_and_reset(ros_procs, ros_node, source):
    import pinocchio as pin
    from oracle import Oracle
    from std_srvs.srv import Trigger
    model = rc.load_urdf(URDF)
    o = Oracle(URDF, model)
    rig = Rig(ros_procs, ros_node, **{"observer.torque_source": source})
    assert rig.collision.last().data is False
    rig.wait_sim(0.2)
    free = np.array([m.effort for m in rig.r.snapshot()[0][-50:]])
    assert np.abs(free).max() <= 0.02 * LIMITS.min()           # at rest: nothing external

    # a constant wrench at link 4 (in its axes): r -> J_local^T F within 5 / K_O and stays; the wrist reads ~0
    F = np.array([8.0, -5.0, 12.0, 0.5, -0.3, 0.2])
    rig.wrench_pub.publish(wrench_msg("arm7_link4", F))
    rig.wait(lambda: "applying a wrench at 'arm7_link4'" in rig.sim.log(), "wrench not applied")
    # this node's /clock and readers lag the lockstep loop, each by its own amount: the onset from r itself
    t_on = rig.wait_over(0.1)
    rig.read_until(rig.r, t_on + 5.0 / K_O + 0.2)
    msgs = rig.r.snapshot()[0]
    fid = o.pm.getFrameId("arm7_link4")
    states = rig.states_until(stamp_to_sec(msgs[-1].header.stamp))
    n_checked = 0
    for m in msgs:
        q = states.get(stamp_ns(m.header.stamp))
        if stamp_to_sec(m.header.stamp) < t_on + 5.0 / K_O or q is None:
            continue
        truth = (pin.computeFrameJacobian(o.pm, o.pd, o.q(q), fid, pin.LOCAL).T @ F)[o.iv]
        r = np.array(m.effort)
        assert np.all(np.abs(r - truth)[:4] <= 0.02 * np.abs(truth)[:4]), (r, truth)
        assert np.all(np.abs(r[4:]) <= 0.01 * LIMITS[4:]), r
        n_checked += 1
    assert n_checked >= 100

    # ~/external_wrench at the flange, in its axes, once the arm has settled under the wrench
    res = ros_node.set_parameters("/rne_controller", {"observer.wrench_frame": "arm7_link7"})
    assert res[0].successful, res[0].reason
    F = np.array([6.0, -4.0, 10.0, 0.3, -0.2, 0.4])
    rig.wrench_pub.publish(wrench_msg("arm7_link7", F))
    rig.wait(lambda: "applying a wrench at 'arm7_link7'" in rig.sim.log(), "wrench not applied")
    Fh = rig.read_until(rig.F, rig.wait_sim(1.5))
    assert Fh.header.frame_id == "arm7_link7"
    est = np.array([Fh.wrench.force.x, Fh.wrench.force.y, Fh.wrench.force.z,
                    Fh.wrench.torque.x, Fh.wrench.torque.y, Fh.wrench.torque.z])
    np.testing.assert_allclose(est, F, atol=0.02 * np.abs(F).max())
    rig.wrench_pub.publish(wrench_msg("arm7_link7", np.zeros(6)))
    rig.wait_sim(5.0 / K_O + 0.1)

    # bad parameters are refused with the reason; the node lives on
    for name, value, why in (("observer.gain", [0.0], "observer.gain"), ("observer.gain", [float("nan")], "gain"),
                             ("observer.gain", [1500.0], "cycle time"),
                             ("collision.thresholds", [1.0, 2.0], "collision.thresholds"),
                             ("collision.thresholds", [-1.0], "collision.thresholds"),
                             ("observer.wrench_frame", "nowhere", "wrench_frame")):
        res = ros_node.set_parameters("/rne_controller", {name: value})
        assert not res[0].successful and why in res[0].reason, (name, res[0].reason)
    assert rig.ctl.alive()

    # detection and the damp reaction: a goal running into a wrench twice the threshold is aborted (-4)
    res = ros_node.set_parameters("/rne_controller", {"collision.thresholds": [2.0] * 4 + [1.0] * 3,
                                                      "collision.reaction": "damp"})
    assert all(r.successful for r in res), [r.reason for r in res]
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectoryPoint
    from builtin_interfaces.msg import Duration
    client = ActionClient(ros_node.node, rig.FJT, "/rne_controller/follow_joint_trajectory")
    rig.wait(lambda: client.server_is_ready(), "no action server")
    q0 = np.array(rig.states.last().position[:7])
    goal = rig.FJT.Goal()
    goal.trajectory.joint_names = ["arm7_joint%d" % i for i in range(1, 8)]
    # long enough to be still running when the wrench comes, however far this node lags the loop
    pt = JointTrajectoryPoint(positions=(q0 + 0.4).tolist(), time_from_start=Duration(sec=30))
    goal.trajectory.points = [pt]
    fut = client.send_goal_async(goal)
    rig.wait(lambda: fut.done(), "goal not answered")
    handle = fut.result()
    assert handle.accepted
    result = handle.get_result_async()
    rig.wait_sim(0.1)
    t_goal = stamp_to_sec(rig.r.last().header.stamp)
    Fc = np.array([0.0, 0.0, 40.0, 0.0, 0.0, 0.0])
    q = np.array(rig.states.last().position[:7])
    onset_torque = (pin.computeFrameJacobian(o.pm, o.pd, o.q(q), o.pm.getFrameId("arm7_link4"), pin.LOCAL).T @ Fc)[o.iv]
    assert np.abs(onset_torque[:4]).max() >= 2 * 2.0
    rig.wrench_pub.publish(wrench_msg("arm7_link4", Fc))
    rig.wait(lambda: rig.collision.last().data is True, "no collision reported")
    rig.wait(lambda: result.done(), "goal not aborted")
    res = result.result().result
    assert res.error_code == -4 and "collision" in res.error_string
    log = rig.ctl.log()
    assert "collision:" in log and "arm7_joint" in log
    # the delay from the wrench's first step to the state that crossed (the sim's log gives the onset)
    sim_log = rig.sim.log()
    assert "applying a wrench at 'arm7_link4'" in sim_log
    # lockstep: the first state after the onset whose r crosses is within ln 2 / K_O + 2 cycles
    t_crossed = rig.wait_over(2.0, after=t_goal, joints=slice(0, 4))    # r stays over while the wrench pushes
    t_onset = rig.wait_over(0.2, after=t_goal)    # the first state the wrench acted on (r's first step: K_O T J^T F)
    assert t_crossed - t_onset <= math.log(2) / K_O + 2 / RATE + 1e-9, (t_crossed, t_onset)

    # latched: the arm floats damped (time constants up to ~0.3 s); new goals are refused until the reset
    rig.wrench_pub.publish(wrench_msg("arm7_link4", np.zeros(6)))
    rig.wait(lambda: rig.sim.log().count("applied wrench removed") == 2, "wrench not removed")
    qd = np.array(rig.read_until(rig.states, rig.wait_sim(2.0)).velocity[:7])
    assert np.abs(qd).max() < 0.05
    fut = client.send_goal_async(goal)
    rig.wait(lambda: fut.done(), "goal not answered")
    assert not fut.result().accepted
    cli = ros_node.node.create_client(Trigger, "/rne_controller/reset_collision")
    assert cli.wait_for_service(timeout_sec=10.0)
    f = cli.call_async(Trigger.Request())
    rig.wait(lambda: f.done(), "no reset answer")
    assert f.result().success
    rig.wait(lambda: rig.collision.last().data is False, "collision not cleared")
    rig.wait_sim(0.5)
    f = cli.call_async(Trigger.Request())
    rig.wait(lambda: f.done(), "no reset answer")
    assert not f.result().success and "no collision" in f.result().message

    # efforts of the wrong length: that state is rejected with the reason, the loop goes on
    from sensor_msgs.msg import JointState
    bad = ros_node.publisher(JointState, "/joint_states", 10)
    rig.wait(lambda: bad.get_subscription_count() > 0, "no /joint_states reader")
    bad.publish(JointState(name=["arm7_joint1", "arm7_joint2"], position=[0.0, 0.0], effort=[1.0]))
    rig.wait(lambda: "effort has 1 values for 2 names" in rig.ctl.log(), "bad efforts not rejected")
    n = len(rig.r)
    rig.wait(lambda: len(rig.r) > n + 20, "the loop stopped")
    assert rig.ctl.stop() == 0 and rig.sim.stop() == 0
