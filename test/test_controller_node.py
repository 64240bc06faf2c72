"""The rne_controller node over real DDS (started as a console script with --params-file).

Most tests drive the controller in lockstep: the in-test node publishes /joint_states stamped t_k,
then /clock = t_k, and waits for the command of that step before advancing (the controller runs with
use_sim_time). Every command then belongs to a known state and time, so numbers can be asserted exactly.
"""
import math
import time

import numpy as np
import pytest


import rne_control as rc  # noqa: E402
from rne_control.ros.runner import EXECUTORS  # noqa: E402
from ros_util import config, sec_to_stamp, stamp_to_sec  # noqa: E402

PUMA = config("puma560.yaml")
PUMA_J = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
BIG = [1e6] * 6


@pytest.fixture(scope="module")
def puma():
    return rc.load_model(PUMA)


def _msgs():
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    return Clock, JointState, Float64MultiArray


def joint_state(names, q, qd=None, t=None):
    _, JointState, _ = _msgs()
    m = JointState()
    m.name = list(names)
    m.position = [float(x) for x in q]
    m.velocity = [] if qd is None else [float(x) for x in qd]
    if t is not None:
        m.header.stamp = sec_to_stamp(t)
    return m


class Lockstep:
    """Publish state k, then /clock = t_k, and wait for the controller's command of step k."""

    def __init__(self, tn, rate, command_topic="/effort_controller/commands", command_type=None,
                 state=True):
        Clock, JointState, Float64MultiArray = _msgs()
        self.tn = tn
        self.dt = 1.0 / rate
        self.t = 1.0
        self.js_pub = tn.publisher(JointState, "/joint_states", 100)
        self.clock_pub = tn.publisher(Clock, "/clock", 100)
        self.cmds = tn.collect(command_type or Float64MultiArray, command_topic)
        self.states = tn.collect(Float64MultiArray, "/rne_controller/controller_state") if state else None
        self._Clock = Clock

    def publish(self, names, q, qd=None):
        self.js_pub.publish(joint_state(names, q, qd, self.t))

    def tick(self):
        self.clock_pub.publish(self._Clock(clock=sec_to_stamp(self.t)))

    def step(self, names=None, q=None, qd=None, timeout=5.0, expect=True):
        """One step: optional state, clock, wait for a command. Returns the command (array) or None."""
        n0 = len(self.cmds)
        if names is not None:
            self.publish(names, q, qd)
        self.tick()
        ok = self.tn.wait_for(lambda: len(self.cmds) > n0, timeout if expect else 0.3, interval=0.0005)
        self.t += self.dt
        if not ok:
            if expect:
                raise TimeoutError("no command at t=%.4f" % (self.t - self.dt))
            return None
        return self.command(self.cmds.last())

    @staticmethod
    def command(msg):
        return np.array(msg.effort if hasattr(msg, "effort") else msg.data)

    def start(self, names, q, qd=None, timeout=40.0, procs=None):
        """Advance until the controller answers (discovery, start-up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for p in procs or []:
                if not p.alive():
                    raise RuntimeError("%s exited with %s:\n%s" % (p.name, p.returncode, p.log()[-4000:]))
            cmd = self._try(names, q, qd)
            if cmd is not None:
                return cmd
        raise TimeoutError("controller never answered:\n" + "\n".join(p.log()[-4000:] for p in procs or []))

    def _try(self, names, q, qd):
        n0 = len(self.cmds)
        self.publish(names, q, qd)
        self.tick()
        ok = self.tn.wait_for(lambda: len(self.cmds) > n0, 0.1, interval=0.002)
        self.t += self.dt
        return self.command(self.cmds.last()) if ok else None


def start_controller(ros_procs, params, params_file=None):
    base = {"model_file": PUMA, "use_sim_time": True, "gc_freeze": False}
    base.update(params)
    return ros_procs.start("rne_controller", params_file=params_file, params=base)


def state_rows(msg):
    dims = msg.layout.dim
    assert dims[0].label == "field" and dims[1].label == "joint"
    F, n = dims[0].size, dims[1].size
    assert dims[0].stride == F * n and dims[1].stride == n
    return np.array(msg.data).reshape(F, n)


# ----------------------------------------------------------------------------- tests
def test_modes_order_and_state_layout(ros_procs, ros_node, puma):
    """coriolis output == coriolis_torques of the measured state; names in any order; mode changes."""
    ctl = start_controller(ros_procs, {"rate": 200, "mode": "coriolis", "effort_limits": BIG, "ramp_time": 0.0,
                                       "state_publish_rate": 0.0})
    ls = Lockstep(ros_node, 200)
    rng = np.random.default_rng(7)
    order = [3, 0, 5, 1, 4, 2]
    names = [PUMA_J[i] for i in order] + ["gripper_finger"]          # shuffled, plus a joint we don't know

    def shuffled(x):
        return [x[i] for i in order] + [0.123]

    q = rng.uniform(-1, 1, 6)
    ls.start(names, shuffled(q), shuffled(np.zeros(6)), procs=[ctl])
    for mode, fn in [("coriolis", lambda q, qd: rc.coriolis_torques(puma, q, qd)),
                     ("gravity", lambda q, qd: rc.gravity_torques(puma, q)),
                     ("gravity_coriolis", lambda q, qd: rc.gravity_torques(puma, q) + rc.coriolis_torques(puma, q, qd)),
                     ("off", lambda q, qd: np.zeros(6))]:
        if mode != "coriolis":
            res = ros_node.set_parameters("/rne_controller", {"mode": mode})
            assert res[0].successful, res[0].reason
            ls.step(names, shuffled(q), shuffled(np.zeros(6)))               # the change applies at a cycle start
        for _ in range(5):
            q = rng.uniform(-1.5, 1.5, 6)
            qd = rng.uniform(-2, 2, 6)
            cmd = ls.step(names, shuffled(q), shuffled(qd))
            np.testing.assert_allclose(cmd, fn(q, qd), rtol=1e-9, atol=1e-9, err_msg=mode)
    # controller_state: documented layout, measured row = the state, command row = the command
    # (the state of a cycle is published right after its command)
    ros_node.wait_for(lambda: len(ls.states) > 0 and np.allclose(state_rows(ls.states.last())[3], q), 3.0)
    S = state_rows(ls.states.last())
    assert S.shape == (15, 6)
    np.testing.assert_allclose(S[3], q, atol=1e-12)
    np.testing.assert_allclose(S[4], qd, atol=1e-12)
    np.testing.assert_allclose(S[7], cmd, atol=1e-12)
    np.testing.assert_allclose(S[8], S[9:15].sum(axis=0), atol=1e-9)
    assert ctl.alive()
    assert ctl.stop() == 0                                             # SIGINT -> exit code 0


def test_subset_of_joints_locked_values_and_joint_state_command(ros_procs, ros_node, puma):
    """joints sets the output order; an uncontrolled joint uses /joint_states if present, else locked."""
    from sensor_msgs.msg import JointState
    ctl = start_controller(ros_procs, {"rate": 200, "mode": "gravity", "joints": ["joint3", "joint2"],
                                       "locked.joint4": 0.4, "locked.joint5": -0.6,
                                       "command_type": "joint_state", "command_topic": "/efforts"})
    ls = Lockstep(ros_node, 200, command_topic="/efforts", command_type=JointState, state=False)
    q = np.array([0.3, -0.4, 0.8, 0.0, 0.0, 0.2])
    # joint4 and joint5 are absent from the message: their locked values apply
    names = ["joint6", "joint3", "joint1", "joint2"]
    vals = [q[5], q[2], q[0], q[1]]
    ls.start(names, vals, [0.0] * 4, procs=[ctl])
    cmd = ls.step(names, vals, [0.0] * 4)
    full = q.copy()
    full[3], full[4] = 0.4, -0.6
    g = rc.gravity_torques(puma, full)
    np.testing.assert_allclose(cmd, [g[2], g[1]], rtol=1e-9, atol=1e-9)
    msg = ls.cmds.last()
    assert list(msg.name) == ["joint3", "joint2"]
    assert stamp_to_sec(msg.header.stamp) == pytest.approx(ls.t - ls.dt)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_parameters_refused_and_mode_switch_ramps(ros_procs, ros_node, puma, executor):
    """Lockstep on /clock and the parameter services, on each executor."""
    ramp, rate = 0.5, 200
    ctl = start_controller(ros_procs, {"rate": rate, "ramp_time": ramp, "effort_limits": BIG,   # rate: integer
                                       "executor": executor})
    ls = Lockstep(ros_node, rate, state=False)
    q = np.array([0.1, 0.7, -0.9, 0.2, 0.5, 0.0])
    z = np.zeros(6)
    ls.start(PUMA_J, q, z, procs=[ctl])
    # at rest, desired = measured position: computed torque = g(q)
    g = rc.gravity_torques(puma, q)
    for _ in range(3):
        np.testing.assert_allclose(ls.step(PUMA_J, q, z), g, rtol=1e-9, atol=1e-9)
    assert ros_node.get_parameters("/rne_controller", ["rate"]) == [200.0]

    bad = [
        ({"mode": "torque"}, "mode"),
        ({"base": "moving"}, "floating"),
        ({"kp": [1.0, 2.0]}, "kp"),
        ({"kd": [1.0, 2.0, 3.0, 4.0, 5.0, float("nan")]}, "kd"),
        ({"gravity": [0.0, float("nan"), -9.81]}, "gravity"),
        ({"payload_mass": -1.0}, "payload_mass"),
        ({"payload_inertia": [1.0, 1.0, -1.0, 0.0, 0.0, 0.0]}, "positive definite"),
        ({"payload_com": [0.0, 0.0]}, "payload_com"),
        ({"payload_link": "nowhere"}, "payload_link"),
        ({"effort_limits": [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]}, "effort_limits"),
        ({"state_timeout": 0.0}, "state_timeout"),
        ({"on_stale": "panic"}, "on_stale"),
        ({"ramp_time": -1.0}, "ramp_time"),
        ({"rate": 100.0}, "read-only"),
        ({"executor": "single_threaded"}, "read-only"),
        ({"mode": 3}, ""),                                  # wrong type
    ]
    for change, why in bad:
        res = ros_node.set_parameters("/rne_controller", change)
        assert not res[0].successful, change
        assert why in res[0].reason, (change, res[0].reason)
    names = ["mode", "payload_mass", "payload_com", "state_timeout", "rate", "ramp_time", "on_stale"]
    assert ros_node.get_parameters("/rne_controller", names) == ["computed_torque", 0.0, [0.0, 0.0, 0.0], 0.05,
                                                                 200.0, 0.5, "hold"]
    np.testing.assert_allclose(ls.step(PUMA_J, q, z), g, rtol=1e-9, atol=1e-9)   # running values stayed
    # an integer for a double is accepted
    res = ros_node.set_parameters("/rne_controller", {"state_timeout": 1})
    assert res[0].successful, res[0].reason
    assert ros_node.get_parameters("/rne_controller", ["state_timeout"]) == [1.0]

    # mode switch: computed_torque (= g at rest) -> coriolis (= 0 at rest), linear over ramp_time
    res = ros_node.set_parameters("/rne_controller", {"mode": "coriolis"})
    assert res[0].successful
    cmds = [ls.step(PUMA_J, q, z) for _ in range(int(ramp * rate) + 5)]
    cmds = np.array([g] + cmds)
    steps = np.abs(np.diff(cmds, axis=0))
    allowed = np.abs(g) / ramp / rate
    assert np.all(steps <= allowed * (1 + 1e-6) + 1e-9), (steps.max(axis=0), allowed)
    np.testing.assert_allclose(cmds[-1], 0.0, atol=1e-9)
    assert np.sum(np.abs(cmds[:, 1]) > 1e-9) >= ramp * rate     # it really ramped (no single step)


def test_trajectory_interpolation_and_rejections(ros_procs, ros_node, puma):
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    rate = 100
    ctl = start_controller(ros_procs, {"rate": rate, "effort_limits": BIG, "state_publish_rate": 0.0})
    ls = Lockstep(ros_node, rate)
    q0 = np.array([0.0, 0.5, -0.5, 0.0, 0.3, 0.0])
    z = np.zeros(6)
    ls.start(PUMA_J, q0, z, procs=[ctl])
    ls.step(PUMA_J, q0, z)
    pub = ros_node.publisher(JointTrajectory, "/rne_controller/joint_trajectory")
    assert ros_node.wait_for_subscribers(pub)
    target = q0 + np.array([0.2, -0.1, 0.3, 0.5, -0.2, 0.1])
    T = 0.5

    def traj(names, pts, stamp=None):
        m = JointTrajectory()
        m.joint_names = names
        if stamp is not None:
            m.header.stamp = sec_to_stamp(stamp)
        for t, p, v, a in pts:
            pt = JointTrajectoryPoint()
            pt.positions = [float(x) for x in p]
            pt.velocities = [float(x) for x in v]
            pt.accelerations = [float(x) for x in a]
            pt.time_from_start = Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))
            m.points.append(pt)
        return m

    # reversed joint order: reordered by name; quintic rest-to-rest = minimum jerk
    rev = list(reversed(PUMA_J))
    t_start = ls.t - ls.dt                                     # the controller's current time
    pub.publish(traj(rev, [(T, target[::-1], z, z)]))
    time.sleep(0.3)
    from ros_util import min_jerk
    n_states = len(ls.states)
    for _ in range(int(T * rate) + 3):
        ls.step(PUMA_J, q0, z)
        ros_node.wait_for(lambda: len(ls.states) > n_states, 2.0)
        n_states = len(ls.states)
        S = state_rows(ls.states.last())
        t = ls.t - ls.dt
        s, sd, sdd = min_jerk(t - t_start, T)
        np.testing.assert_allclose(S[0], q0 + s * (target - q0), atol=1e-9)
        np.testing.assert_allclose(S[1], sd * (target - q0), atol=1e-9)
        np.testing.assert_allclose(S[2], sdd * (target - q0), atol=1e-7)

    # bad trajectories: rejected, the held point stays
    bad = [
        traj(PUMA_J, [(0.5, z, [], []), (0.4, z, [], [])]),                     # decreasing times
        traj(PUMA_J, [(0.5, z[:5], [], [])]),                                    # mismatched lengths
        traj(PUMA_J, []),                                                        # no points
        traj(PUMA_J[:5] + ["elbow_x"], [(0.5, z, [], [])]),                      # unknown joint
        traj(PUMA_J[:5], [(0.5, z[:5], [], [])]),                                # missing joint
        traj(PUMA_J, [(0.5, [float("nan")] * 6, [], [])]),                       # non-finite
        traj(PUMA_J, [(0.5, z, [], [])], stamp=ls.t - 0.9),                     # ends in the past
    ]
    for m in bad:
        pub.publish(m)
    time.sleep(0.5)
    for _ in range(3):
        ls.step(PUMA_J, q0, z)
    ros_node.wait_for(lambda: len(ls.states) > n_states, 2.0)
    S = state_rows(ls.states.last())
    np.testing.assert_allclose(S[0], target, atol=1e-12)
    assert "rejected ~/joint_trajectory" in ctl.log()
    assert ctl.alive()


def test_stale_states_each_on_stale_behaviour(ros_procs, ros_node, puma):
    rate, timeout, ramp = 200, 0.05, 0.1
    ctl = start_controller(ros_procs, {"rate": rate, "state_timeout": timeout, "on_stale": "hold",
                                       "ramp_time": ramp, "effort_limits": BIG})
    ls = Lockstep(ros_node, rate, state=False)
    q = np.array([0.2, 0.6, -0.4, 0.1, 0.4, 0.3])
    qd = np.array([0.3, -0.2, 0.1, 0.4, -0.3, 0.2])
    ls.start(PUMA_J, q, qd, procs=[ctl])
    for _ in range(int(ramp * rate) + 2):                      # past the activation ramp
        law = ls.step(PUMA_J, q, qd)
    g = rc.gravity_torques(puma, q)
    assert np.max(np.abs(law - g)) > 1e-3                      # the running law differs from the hold torque

    # hold: no states while the clock runs -> gravity torques of the last valid configuration
    n_stale = int(math.ceil(timeout * rate)) + 3
    cmds = [ls.step() for _ in range(n_stale)]
    np.testing.assert_allclose(cmds[-1], g, rtol=1e-9, atol=1e-9)
    # recovery: resumes from the hold torque without a step, then ramps to the law
    back = [ls.step(PUMA_J, q, qd) for _ in range(int(ramp * rate) + 3)]
    np.testing.assert_allclose(back[0], g, rtol=1e-9, atol=1e-9)
    steps = np.abs(np.diff(np.array([cmds[-1]] + back), axis=0))
    assert np.all(steps <= np.abs(law - g) / ramp / rate * 1.01 + 1e-6)
    np.testing.assert_allclose(back[-1], law, rtol=1e-6, atol=1e-6)

    # zero
    assert ros_node.set_parameters("/rne_controller", {"on_stale": "zero"})[0].successful
    ls.step(PUMA_J, q, qd)
    cmds = [ls.step() for _ in range(n_stale)]
    np.testing.assert_array_equal(cmds[-1], np.zeros(6))
    for _ in range(int(ramp * rate) + 3):
        ls.step(PUMA_J, q, qd)

    # stop: nothing is published while stale
    assert ros_node.set_parameters("/rne_controller", {"on_stale": "stop"})[0].successful
    ls.step(PUMA_J, q, qd)
    got = []
    for _ in range(n_stale):
        got.append(ls.step(expect=False))
    assert got[-1] is None and got[-2] is None
    # and it resumes with fresh states
    cmd = ls.step(PUMA_J, q, qd)
    assert cmd is not None and np.all(np.isfinite(cmd))
    assert ctl.alive()
    assert ctl.log().count("no valid joint state") >= 3


def test_bad_input_counted_output_finite_and_limited(ros_procs, ros_node, puma):
    """Real time; the model comes from the /robot_description topic (transient local)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray, String
    from pathlib import Path

    limits = [5.0, 20.0, 5.0, 2.0, 2.0, 2.0]
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    desc_pub = ros_node.node.create_publisher(String, "/robot_description", qos)
    desc_pub.publish(String(data=Path(config("puma560.yaml")).parent.parent.joinpath("urdf", "puma560.urdf")
                            .read_text()))
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands", keep=2000)
    diags = ros_node.collect(DiagnosticArray, "/diagnostics")
    ctl = ros_procs.start("rne_controller", params={"rate": 250.0, "effort_limits": limits, "gc_freeze": False,
                                                    "mode": "gravity_coriolis"})
    # up and running (diagnostics come at 1 Hz), but no joint state yet: nothing is published
    assert ros_node.wait_for(lambda: len(diags) > 1, 40.0, procs=[ctl]), ctl.log()
    d0 = {kv.key: kv.value for kv in diags.last().status[0].values}
    assert d0["state"] == "waiting for /joint_states"
    assert len(cmds) == 0
    js = ros_node.publisher(JointState, "/joint_states", 1000)   # deep: no drop when the node is starved
    good = joint_state(PUMA_J, [0.1, 0.8, -0.3, 0.2, 0.4, 0.1], [0.5, -3.0, 4.0, 2.0, -1.0, 8.0])
    timer = ros_node.node.create_timer(0.004, lambda: js.publish(good))
    assert ros_node.wait_for(lambda: len(cmds) > 20, 40.0, procs=[ctl]), ctl.log()
    bad = [
        joint_state(PUMA_J, [0.1, float("nan"), 0, 0, 0, 0], [0.0] * 6),
        joint_state(PUMA_J, [0.1, 0, 0, 0, 0, 0], [0.0, float("inf"), 0, 0, 0, 0]),
        joint_state(PUMA_J, [0.1, 0, 0, 0, 0], [0.0] * 6),                  # wrong length
        joint_state(PUMA_J, [0.1] * 6, [0.0] * 5),                          # wrong length
        joint_state(PUMA_J[:5] + ["joint1"], [0.0] * 6, [0.0] * 6),         # duplicate
    ]
    nan_effort = joint_state(PUMA_J, [0.1, 0.8, -0.3, 0.2, 0.4, 0.1], [0.5, -3.0, 4.0, 2.0, -1.0, 8.0])
    nan_effort.effort = [float("nan")] * 6
    not_errors = [
        joint_state(["a", "b"], [0.0, 1.0], [0.0, 0.0]),                    # no needed joint: ignored
        joint_state(PUMA_J[:4], [0.1, 0.8, -0.3, 0.2], [0.5, -3.0, 4.0, 2.0]),  # some joints: merged
        nan_effort,                                                         # efforts are not used
    ]
    for _ in range(3):
        for m in bad + not_errors:
            js.publish(m)
            time.sleep(0.01)
    n0 = len(cmds)
    assert ros_node.wait_for(lambda: len(cmds) > n0 + 50, 10.0, procs=[ctl])
    ros_node.node.destroy_timer(timer)
    msgs, _ = cmds.snapshot()
    out = np.array([m.data for m in msgs])
    assert np.all(np.isfinite(out))
    assert np.all(np.abs(out) <= np.array(limits) + 1e-12)
    assert np.any(np.abs(np.abs(out[-1]) - limits) < 1e-12)         # this state saturates some joints

    def diag_values():
        m = diags.last()
        return {kv.key: kv.value for kv in m.status[0].values} if m else {}

    assert ros_node.wait_for(lambda: int(diag_values().get("rejected_joint_states", 0)) >= 15
                             and int(diag_values().get("ignored_joint_states", 0)) >= 3, 5.0), str(diag_values())
    d = diag_values()
    assert int(d["rejected_joint_states"]) == 15
    assert int(d["ignored_joint_states"]) == 3
    for key in ("rate_achieved_hz", "period_jitter_p99_us", "period_jitter_max_us", "compute_time_p99_us",
                "late_cycles", "state_age_ms", "stale_events", "saturated_joints", "mode", "base"):
        assert key in d
    assert d["mode"] == "gravity_coriolis" and d["base"] == "fixed"
    assert ctl.alive()
    assert "rejected /joint_states" in ctl.log()
