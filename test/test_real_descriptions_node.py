"""rne_controller on real descriptions, as a user starts it beside the robot's drivers: the whole robot's
URDF (as robot_state_publisher publishes it), ``joints`` the arm, the gripper's own driver publishing the
gripper on /joint_states at 50 Hz.

For each description two controllers run side by side: one gets ``robot_description`` as a parameter
(``mode: gravity``), the other waits for the ``/robot_description`` topic (``mode: computed_torque``).
Their commands equal Pinocchio's RNE on the whole description (mimic joints placed by their rules) at
the measured state, restricted to the arm, to 1e-9: gravity at zero velocity and acceleration; computed
torque at every joint's measured q and qd, with the law's acceleration at the arm and 0 elsewhere. While
the gripper moves, every command matches one of the gripper states its driver published, and the arm's
state never goes stale.
"""
import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import rne_control as rc
import ros_util
from oracle import rel_err
from real_descriptions import ARM_Q, DESCRIPTIONS, full_state, oracle

TOL = 1e-9
KD = 20.0            # the controller's default kd (1/s)
GRIPPER_HZ = 50.0
ARM_HZ = 200.0


def joint_state(names, q, qd):
    from sensor_msgs.msg import JointState
    m = JointState()
    m.name, m.position, m.velocity = list(names), [float(x) for x in q], [float(x) for x in qd]
    return m


class Driver:
    """A node of its own (its own context and thread) publishing joint states at ``hz`` from ``sample(t)`` ->
    (names, q, qd); ``sent`` keeps what it published."""

    def __init__(self, name, hz, sample):
        from sensor_msgs.msg import JointState
        self.node = ros_util.TestNode(name)
        self.pub = self.node.publisher(JointState, "/joint_states", 100)
        self.sample, self.sent, self.t0 = sample, [], time.monotonic()
        self.lock = threading.Lock()
        self.node.node.create_timer(1.0 / hz, self._tick)

    def _tick(self):
        names, q, qd = self.sample(time.monotonic() - self.t0)
        self.pub.publish(joint_state(names, q, qd))
        with self.lock:
            self.sent.append((np.array(q), np.array(qd)))

    def shutdown(self):
        self.node.shutdown()


def diag_values(diags, node_name):
    for m in reversed(diags.snapshot()[0]):
        for s in m.status:
            if node_name in s.name:
                return {kv.key: kv.value for kv in s.values}
    return {}


@pytest.mark.parametrize("name", list(DESCRIPTIONS))
def test_arm_of_a_real_description_beside_its_gripper_driver(ros_procs, ros_node, name):
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Float64MultiArray, String

    path, arm, gripper, (lo, hi) = DESCRIPTIONS[name]
    text = Path(path).read_text()
    model = rc.load_urdf(path, friction=False)
    pin_ = oracle(name, model)
    idx = [model.joint_names.index(j) for j in arm]
    q_arm = np.array(ARM_Q[name])
    qd_arm = 0.2 * np.cos(np.arange(len(arm)))
    # the gripper's driver publishes its actuated joint and (as franka_gripper does) the Panda's second finger
    followers = [j for j in model.passive_joint_names if name == "panda"]
    g_names = [gripper] + followers
    g0, g1 = lo + 0.3 * (hi - lo), lo + 0.8 * (hi - lo)
    moving = threading.Event()

    def gripper_sample(t):
        if moving.is_set():   # half a sine period from g0 to g1 and back, then at g1
            s = min(t - gripper_sample.t_move, 2.0)
            g = g0 + (g1 - g0) * math.sin(0.5 * math.pi * s) if s < 2.0 else g1
            gd = (g1 - g0) * 0.5 * math.pi * math.cos(0.5 * math.pi * s) if s < 2.0 else 0.0
        else:
            g, gd = g0, 0.05 * (hi - lo)        # still, with a measured velocity: it must be used
        return g_names, [g] + [g] * len(followers), [gd] + [gd] * len(followers)

    gripper_sample.t_move = 0.0
    common = {"joints": arm, "ramp_time": 0.0, "state_timeout": 0.5, "rate": 200.0, "gc_freeze": False,
              "friction_compensation": False}
    ctl_a = ros_procs.start("rne_controller", node_name="ctl_param", params={
        **common, "robot_description": text, "mode": "gravity", "command_topic": "/ctl_param/commands"})
    ctl_b = ros_procs.start("rne_controller", node_name="ctl_topic", params={
        **common, "mode": "computed_torque", "command_topic": "/ctl_topic/commands"})
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    ros_node.node.create_publisher(String, "/robot_description", qos).publish(String(data=text))
    cmd_a = ros_node.collect(Float64MultiArray, "/ctl_param/commands", qos=2000)
    cmd_b = ros_node.collect(Float64MultiArray, "/ctl_topic/commands", qos=2000)
    diags = ros_node.collect(DiagnosticArray, "/diagnostics", qos=50)
    arm_driver = Driver("rne_test_arm_driver", ARM_HZ, lambda t: (arm, q_arm, qd_arm))
    grip_driver = Driver("rne_test_gripper_driver", GRIPPER_HZ, gripper_sample)
    procs = [ctl_a, ctl_b]
    try:
        def expected(g, gd):
            q, qd = full_state(model, arm, q_arm, qd_arm, {gripper: g}, {gripper: gd})
            qdd = np.zeros(model.n)
            qdd[idx] = -KD * qd_arm                  # holding the first measured position: e = 0, qd_d = 0
            return pin_.gravity(q)[idx], pin_.rnea(q, qd, qdd)[idx]

        _, g_q, g_qd = gripper_sample(0.0)
        want_a, want_b = expected(g_q[0], g_qd[0])
        assert ros_node.wait_for(lambda: len(cmd_a) and len(cmd_b), 120.0, procs=procs), ros_procs.logs()[-6000:]

        def matches(col, want):
            m = col.last()
            return m is not None and rel_err(m.data, want) < TOL

        assert ros_node.wait_for(lambda: matches(cmd_a, want_a), 10.0, procs=procs), (cmd_a.last(), want_a)
        assert ros_node.wait_for(lambda: matches(cmd_b, want_b), 10.0, procs=procs), (cmd_b.last(), want_b)
        # the gripper moves: every command matches a gripper state its driver published
        for c in (cmd_a, cmd_b):
            c.clear()
        with grip_driver.lock:
            n_sent = len(grip_driver.sent)
        gripper_sample.t_move = time.monotonic() - grip_driver.t0
        moving.set()
        time.sleep(2.6)
        with grip_driver.lock:
            sent = grip_driver.sent[n_sent - 1:]
        msgs = [c.snapshot()[0] for c in (cmd_a, cmd_b)]
        g_final = expected(g1, 0.0)
        assert rel_err(cmd_b.last().data, g_final[1]) < TOL
        assert rel_err(g_final[1], want_b) > 1e-6
        diags.clear()
        assert ros_node.wait_for(lambda: all(diag_values(diags, n) for n in ("ctl_param", "ctl_topic")), 5.0)
        for node_name in ("ctl_param", "ctl_topic"):
            d = diag_values(diags, node_name)
            assert d["stale_events"] == "0" and d["rejected_joint_states"] == "0", (node_name, d)
            assert d["ignored_passive_positions"] == "0", (node_name, d)
    finally:
        arm_driver.shutdown()
        grip_driver.shutdown()
    # every command during the motion matches a gripper state its driver published (the drivers are stopped
    # first: this much Python in the test process would starve their threads)
    table = [expected(q[0], qd[0]) for q, qd in sent]
    for k in (0, 1):
        assert len(msgs[k]) > 0.8 * 2.6 * 200.0, len(msgs[k])       # commands kept flowing at the rate
        W = np.array([w[k] for w in table])
        C = np.array([m.data for m in msgs[k]])
        err = np.abs(C[:, None, :] - W[None]).max(axis=2) / np.abs(W).max(axis=1)[None]
        assert err.min(axis=1).max() < TOL, (k, err.min(axis=1).max())
        # (parallel fingers that open symmetrically, the Panda's or Baxter's, keep their centre of mass: their
        # gravity torques do not change)
        if np.abs(W - W[0]).max() > 1e-6 * np.abs(W[0]).max():
            assert len(set(err.argmin(axis=1))) > 10, k               # the torques followed the gripper
    for p in procs:
        assert p.stop() == 0, p.log()[-3000:]
    assert "waiting for /robot_description" in ctl_b.log()


def test_a_mimic_joint_no_longer_published_follows_its_leader(ros_procs, ros_node):
    """The Panda with its hand controlled (finger_joint2 a closed loop on finger_joint1): the driver publishes
    both fingers, then only finger_joint1, which moves farther than loop_tolerance. The last published
    finger_joint2 expires after state_timeout, after which no state is rejected, and the torques (gravity
    and the velocity terms, which feel where the fingers are) follow the closed loop."""
    from diagnostic_msgs.msg import DiagnosticArray
    from std_msgs.msg import Float64MultiArray

    path, arm, gripper, _ = DESCRIPTIONS["panda"]
    model = rc.load_urdf(path)
    joints = arm + [gripper]
    q = np.array(ARM_Q["panda"] + [0.01])
    qd = np.r_[np.linspace(0.5, -0.5, 7), 0.0]
    ctl = ros_procs.start("rne_controller", params={"robot_description": Path(path).read_text(),
                                                   "mode": "gravity_coriolis", "state_timeout": 0.2,
                                                   "ramp_time": 0.0, "gc_freeze": False})
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands", qos=1000)
    diags = ros_node.collect(DiagnosticArray, "/diagnostics", qos=20)
    pub = {"names": joints + ["panda_finger_joint2"], "q": q}
    driver = Driver("rne_test_panda_driver", 100.0,
                    lambda t: (pub["names"], list(pub["q"]) + list(pub["q"][-1:]) * (len(pub["names"]) - 8),
                               list(qd) + [0.0] * (len(pub["names"]) - 8)))

    def want(qa):
        return rc.closed_loop_inverse_dynamics(model, qa, qd, np.zeros(8), friction=False)

    try:
        assert ros_node.wait_for(lambda: cmds.last() is not None and rel_err(cmds.last().data, want(q)) < TOL,
                                 120.0, procs=[ctl]), ctl.log()[-4000:]
        q2 = q.copy()
        q2[-1] = 0.035                                          # 0.025 m from the last published finger_joint2
        assert rel_err(want(q2), want(q)) > 1e-6
        pub["names"], pub["q"] = joints, q2
        assert ros_node.wait_for(lambda: rel_err(cmds.last().data, want(q2)) < TOL, 5.0, procs=[ctl]), cmds.last()
        time.sleep(1.5)
        assert rel_err(cmds.last().data, want(q2)) < TOL
        assert ros_node.wait_for(lambda: diag_values(diags, "rne_controller"), 5.0)
        rejected = int(diag_values(diags, "rne_controller")["rejected_joint_states"])
        assert rejected <= 0.2 * 100 + 2, rejected    # only while the old finger_joint2 is younger than 0.2 s
        time.sleep(1.2)
        assert int(diag_values(diags, "rne_controller")["rejected_joint_states"]) == rejected
    finally:
        driver.shutdown()
    assert ctl.stop() == 0


def test_unusable_parts_of_a_description(ros_procs, ros_node):
    """A <mimic> whose leader the document lacks (in an uncontrolled hand) is warned about in the log and the
    node runs; a description that cannot be used stops the node at start with a message naming the element."""
    from std_msgs.msg import Float64MultiArray
    from test_urdf_as_published import XACRO_OUTPUT

    warned = XACRO_OUTPUT.replace('<mimic joint="finger_left_joint"/>', '<mimic joint="gripper_motor_joint"/>')
    ok = ros_procs.start("rne_controller", params={"robot_description": warned, "joints": ["turn", "bend"],
                                                  "mode": "gravity", "gc_freeze": False})
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands")
    pub = ros_node.publisher(__import__("sensor_msgs.msg", fromlist=["JointState"]).JointState, "/joint_states")
    assert ros_node.wait_for_subscribers(pub, 1, 60.0)
    assert ros_node.wait_for(lambda: (pub.publish(joint_state(["turn", "bend"], [0.1, 0.2], [0, 0])) or len(cmds)),
                             60.0, procs=[ok], interval=0.05), ok.log()[-3000:]
    assert "mimic joint 'finger_right_joint': its leader 'gripper_motor_joint' is not a movable joint" in ok.log()
    assert ok.stop() == 0
    bad = ros_procs.start("rne_controller", params={"robot_description": XACRO_OUTPUT.replace(
        'type="continuous"', 'type="planar"'), "joints": ["turn", "bend"]})
    assert ros_node.wait_for(lambda: not bad.alive(), 60.0)
    assert bad.returncode == 1
    assert "joint 'turn': unsupported joint type 'planar'" in bad.log()


def test_rne_sim_simulates_the_commanded_joints_and_holds_the_rest(ros_procs, ros_node):
    """rne_sim publishes the joints it simulates (the commanded ones, and the passive joints of their loops);
    the uncontrolled ones are held at their locked positions and published only with publish_uncontrolled."""
    from sensor_msgs.msg import JointState

    panda = ros_util.config("panda_controller.yaml")
    a = ros_procs.start("rne_sim", params_file=panda, remap={"__ns": "/a"}, params={
        "publish_uncontrolled": False, "joint_states_topic": "/js_a"})
    b = ros_procs.start("rne_sim", params_file=panda, remap={"__ns": "/b"}, params={"joint_states_topic": "/js_b"})
    # the palletiser's parallelogram loop (joint2, joint3, elbow, rod) with joint2 held: joint3 drives it
    pal = ros_procs.start("rne_sim", params_file=ros_util.config("palletizer_controller.yaml"), remap={"__ns": "/pal"},
                          params={"joints": ["joint3", "joint1"], "initial_positions": [-0.2, 0.0],
                                  "locked.joint2": 0.3, "publish_uncontrolled": True, "joint_states_topic": "/js_pal",
                                  "effort_limits": [2000.0, 2000.0]})
    js = {k: ros_node.collect(JointState, "/js_" + k, qos=10) for k in ("a", "b", "pal")}
    assert ros_node.wait_for(lambda: all(len(c) for c in js.values()), 120.0, procs=[a, b, pal]), ros_procs.logs()
    arm = DESCRIPTIONS["panda"][1]
    assert list(js["a"].last().name) == arm
    m = js["b"].last()
    assert list(m.name) == arm + ["panda_finger_joint1", "panda_finger_joint2"]
    assert list(m.position[7:]) == [0.02, 0.02]                # locked, and the mimic joint by its rule
    m = js["pal"].last()
    assert list(m.name) == ["joint3", "joint1", "elbow", "rod", "joint2"], m.name
    model = rc.load_model(str(ros_util.REPO / "config" / "palletizer.yaml"))
    q = dict(zip(m.name, m.position))
    assert q["joint2"] == 0.3
    q_tree = rc.solve_loops(model, [q["joint1"], q["joint2"], q["joint3"]])
    for j in ("elbow", "rod"):
        assert abs(q[j] - q_tree[model.joint_names.index(j)]) < 1e-9, (j, q, q_tree)
    for p in (a, b, pal):
        assert p.stop() == 0, p.log()[-3000:]


def test_a_gripper_driver_off_the_mimic_rule_is_ignored_counted_and_warned_about_once(ros_procs, ros_node):
    """The Panda's arm controlled: a gripper driver that publishes panda_finger_joint2 off its rule (0.03 m from
    panda_finger_joint1) never rejects the arm's state; the value is ignored (the finger follows its leader),
    counted in the diagnostics and warned about once."""
    from diagnostic_msgs.msg import DiagnosticArray
    from std_msgs.msg import Float64MultiArray

    path, arm, gripper, _ = DESCRIPTIONS["panda"]
    model = rc.load_urdf(path, friction=False)
    pin_ = oracle("panda", model)
    ctl = ros_procs.start("rne_controller", params={"robot_description": Path(path).read_text(), "joints": arm,
                                                   "mode": "gravity", "ramp_time": 0.0, "gc_freeze": False})
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands", qos=100)
    diags = ros_node.collect(DiagnosticArray, "/diagnostics", qos=20)
    q_arm = np.array(ARM_Q["panda"])
    drivers = [Driver("rne_test_arm", 200.0, lambda t: (arm, q_arm, np.zeros(7))),
               Driver("rne_test_gripper", GRIPPER_HZ, lambda t: ([gripper, "panda_finger_joint2"], [0.01, 0.04],
                                                                  [0.0, 0.0]))]
    try:
        q, _ = full_state(model, arm, q_arm, np.zeros(7), {gripper: 0.01})
        want = pin_.gravity(q)[[model.joint_names.index(j) for j in arm]]
        assert ros_node.wait_for(lambda: cmds.last() is not None and rel_err(cmds.last().data, want) < TOL, 120.0,
                                 procs=[ctl]), ctl.log()[-3000:]
        # counted once the gripper driver's states come in (its discovery can lag the arm's under load)
        assert ros_node.wait_for(lambda: int(diag_values(diags, "rne_controller").get("ignored_passive_positions",
                                                                                      0)) > 50, 30.0, procs=[ctl])
        d = diag_values(diags, "rne_controller")
        assert d["rejected_joint_states"] == "0", ("rejected joint states", d, ctl.log()[-3000:])
        assert d["stale_events"] == "0", ("stale events", d, ctl.log()[-3000:])
    finally:
        for dr in drivers:
            dr.shutdown()
    assert ctl.stop() == 0
    assert ctl.log().count("panda_finger_joint2 are off their closed values") == 1, ctl.log()[-3000:]
