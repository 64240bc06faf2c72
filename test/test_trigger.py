"""``trigger: state``: each new joint state is answered by one command computed from it (real time, over
DDS). The in-test node is the driver; commands are matched to the states they answer by the law itself."""
import threading
import time

import numpy as np
import pytest

import rne_control as rc
from rne_control.control import ControlLaw
from rne_control.ros.runner import EXECUTORS
from ros_util import config

PUMA = config("puma560.yaml")
J = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
BIG = [1e6] * 6


def _msgs():
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    return JointState, Float64MultiArray, DiagnosticArray


def js(names, q, qd):
    JointState, _, _ = _msgs()
    m = JointState()
    m.name = list(names)
    m.position = [float(x) for x in q]
    m.velocity = [float(x) for x in qd]
    return m


def start(ros_procs, **params):
    base = {"model_file": PUMA, "trigger": "state", "rate": 100.0, "effort_limits": BIG, "ramp_time": 0.0,
            "state_timeout": 1.0, "gc_freeze": False, "mode": "computed_torque"}
    base.update(params)
    return ros_procs.start("rne_controller", params=base)


class Driver:
    def __init__(self, tn):
        JointState, Float64MultiArray, DiagnosticArray = _msgs()
        self.tn = tn
        self.pub = tn.publisher(JointState, "/joint_states", 1000)
        self.cmds = tn.collect(Float64MultiArray, "/effort_controller/commands", qos=1000)
        self.diags = tn.collect(DiagnosticArray, "/diagnostics", qos=10)

    def diag(self):
        m = self.diags.last()
        return {kv.key: kv.value for kv in m.status[0].values} if m else {}

    def connect(self, ctl, q):
        """Publish q until the controller answers (discovery, start-up); then wait until nothing more comes."""
        assert self.tn.wait_for_subscribers(self.pub, 1, timeout=40.0), ctl.log()
        deadline = time.monotonic() + 60.0
        while not len(self.cmds) and time.monotonic() < deadline:
            self.pub.publish(js(J, q, np.zeros(6)))
            self.tn.wait_for(lambda: len(self.cmds) > 0, 0.2, procs=[ctl])
        assert len(self.cmds), ctl.log()


def expected_law(model, q_hold):
    law = ControlLaw(model)
    law.set_mode("computed_torque")
    q_hold = np.array(q_hold, float)
    z = np.zeros(6)
    return lambda q, qd: np.array(law.compute(q, qd, q_hold, z, z, 1.0))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_one_command_per_state_computed_from_it(ros_procs, ros_node, executor):
    model = rc.load_model(PUMA)
    ctl = start(ros_procs, state_timeout=30.0, executor=executor)   # no stale hold within the test
    d = Driver(ros_node)
    q0 = np.array([0.1, 0.7, -0.4, 0.2, 0.3, 0.1])
    d.connect(ctl, q0)
    time.sleep(0.3)          # timer at 100 Hz, state_timeout 1 s: nothing comes without a new state
    n_connect = len(d.cmds)
    time.sleep(0.3)
    assert len(d.cmds) == n_connect, "commands without a new joint state"
    law = expected_law(model, q0)          # activation held the first state's position
    rng = np.random.default_rng(3)
    states = [(q0 + rng.uniform(-0.3, 0.3, 6), rng.uniform(-1, 1, 6)) for _ in range(40)]
    d.cmds.clear()
    for k, (q, qd) in enumerate(states):      # one at a time: each answered before the next is sent
        d.pub.publish(js(J, q, qd))
        assert ros_node.wait_for(lambda: len(d.cmds) >= k + 1, 10.0), f"no command for state {k}"
        time.sleep(0.01)
        assert len(d.cmds) == k + 1, f"{len(d.cmds)} commands after {k + 1} states"
    time.sleep(0.3)
    msgs, _ = d.cmds.snapshot()
    assert len(msgs) == len(states), f"{len(msgs)} commands for {len(states)} states"
    for (q, qd), m in zip(states, msgs):
        np.testing.assert_allclose(np.array(m.data), law(q, qd), rtol=0, atol=1e-12)
    # the node's latency figures exist and are plausible (arrival to publish, microseconds)
    assert ros_node.wait_for(lambda: float(d.diag().get("latency_p50_us", 0)) > 0, 3.0), d.diag()
    dg = d.diag()
    assert dg["trigger"] == "state"
    assert 0 < float(dg["latency_p50_us"]) <= float(dg["latency_max_us"])
    assert ctl.stop() == 0


@pytest.mark.parametrize("executor", EXECUTORS)
def test_driver_stops_watchdog_fires_and_restart_ramps(ros_procs, ros_node, executor):
    """The watchdog's timer (its period switching between WATCH_FRACTION of state_timeout and 1/rate) on each executor."""
    model = rc.load_model(PUMA)
    timeout, ramp = 0.05, 0.4
    ctl = start(ros_procs, rate=200.0, state_timeout=timeout, ramp_time=ramp, on_stale="hold", executor=executor)
    d = Driver(ros_node)
    q0 = np.array([0.0, 0.8, -0.5, 0.0, 0.4, 0.0])
    d.connect(ctl, q0)
    for _ in range(100):                           # 200 Hz for 0.5 s
        d.pub.publish(js(J, q0, np.zeros(6)))
        time.sleep(0.005)
    t_stop = time.monotonic()
    time.sleep(0.5)                                # stopped: the watchdog's timer holds at `rate`
    msgs, times = d.cmds.snapshot()
    hold = [(m, t) for m, t in zip(msgs, times) if t > t_stop]
    assert "no valid joint state" in ctl.log()
    assert 0.5 * 200 * (0.5 - timeout) < len(hold) < 1.5 * 200 * 0.5, len(hold)
    first_hold = hold[0][1] - t_stop
    assert timeout * 0.8 < first_hold < timeout + 0.1, first_hold
    g0 = rc.gravity_torques(model, q0)
    np.testing.assert_allclose(np.array(hold[-1][0].data), g0, atol=1e-9)      # hold: gravity of the last state
    # restart displaced and moving: control resumes, blended from the hold command over ramp_time
    q1 = q0 + np.array([0.0, 0.1, 0.0, 0.0, 0.0, 0.0])
    qd1 = np.array([0.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    d.cmds.clear()
    t_restart = time.monotonic()
    for _ in range(200):
        d.pub.publish(js(J, q1, qd1))
        time.sleep(0.005)
    msgs, times = d.cmds.snapshot()
    u = np.array([m.data for m in msgs])
    law = expected_law(model, q1)(q1, qd1)
    assert np.abs(u[0] - g0).max() < 0.2 * np.abs(law - g0).max(), (u[0], g0, law)   # no step at recovery
    late = [k for k, t in enumerate(times) if t > t_restart + ramp + 0.1]
    np.testing.assert_allclose(u[late[-1]], law, atol=1e-9)                          # ramped fully in
    assert ctl.stop() == 0


def test_two_drivers_rate_rule_and_no_stale_joint(ros_procs, ros_node):
    """arm (joint1..5) at 1 kHz and 'gripper' (joint6) at 50 Hz, ``trigger_joints`` = the arm's: a message
    carrying a trigger joint starts a cycle, one carrying only others is merged and waits for the next;
    each cycle uses the newest value of every joint, none older than state_timeout."""
    _, Float64MultiArray, _ = _msgs()
    timeout = 0.5
    ctl = start(ros_procs, trigger_joints=J[:5], state_timeout=timeout, state_publish_rate=0.0, mode="gravity")
    d = Driver(ros_node)
    q0 = np.array([0.0, 0.8, -0.5, 0.0, 0.4, 0.0])
    d.connect(ctl, q0)
    states = ros_node.collect(Float64MultiArray, "/rne_controller/controller_state", qos=5000)
    # the rule, step by step: gripper messages alone start nothing; the next arm message uses the newest
    d.pub.publish(js(J, q0, np.zeros(6)))
    time.sleep(0.1)
    d.cmds.clear()
    for k in range(5):
        d.pub.publish(js(J[5:], [0.01 * (k + 1)], [0.0]))
        time.sleep(0.005)
    time.sleep(0.1)
    assert len(d.cmds) == 0, "a message without a trigger joint started a cycle"
    d.pub.publish(js(J[:5], q0[:5], np.zeros(5)))
    assert ros_node.wait_for(lambda: len(d.cmds) == 1, 2.0)
    assert ros_node.wait_for(lambda: len(states) and np.array(states.last().data).reshape(-1, 6)[3][5] == 0.05, 2.0)
    # both drivers at their rates
    arm, sent_grip = [0], {}
    stop = threading.Event()

    def arm_loop():
        t = time.perf_counter()
        while not stop.is_set():
            d.pub.publish(js(J[:5], q0[:5], np.zeros(5)))
            arm[0] += 1
            t += 0.001
            time.sleep(max(0.0, t - time.perf_counter()))

    def grip_loop():
        k = 100
        while not stop.is_set():
            k += 1
            sent_grip[1e-3 * k] = time.monotonic()
            d.pub.publish(js(J[5:], [1e-3 * k], [0.0]))
            time.sleep(0.02)

    d.cmds.clear()
    states.clear()
    threads = [threading.Thread(target=arm_loop), threading.Thread(target=grip_loop)]
    for th in threads:
        th.start()
    time.sleep(2.0)
    stop.set()
    for th in threads:
        th.join()
    time.sleep(0.3)
    n_cmd = len(d.cmds)
    print(f"two drivers: {arm[0]} arm and {len(sent_grip)} gripper messages -> {n_cmd} commands")
    assert 0 < n_cmd <= arm[0] + 1, (n_cmd, arm[0])    # at most one per arm message (the newest wins)
    msgs, times = states.snapshot()
    used = [np.array(m.data).reshape(-1, 6)[3][5] for m in msgs]
    ages = [t - sent_grip[v] for v, t in zip(used, times) if v in sent_grip]
    assert len(ages) > 0.9 * len(used), "the cycles used gripper values that were never sent"
    assert max(ages) < timeout, max(ages)               # never older than state_timeout
    assert sorted(used) == used                         # never an older gripper value than before
    assert int(d.diag().get("stale_events", 0)) == 0
    assert ctl.stop() == 0


def _rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def test_flood_newest_state_wins_memory_flat(ros_procs, ros_node):
    model = rc.load_model(PUMA)
    ctl = start(ros_procs, mode="gravity_coriolis", state_timeout=10.0)
    d = Driver(ros_node)
    q0 = np.array([0.0, 0.8, -0.5, 0.0, 0.4, 0.0])
    d.connect(ctl, q0)
    pid = ctl.proc.pid

    def flood(n, offset):
        for k in range(n):
            d.pub.publish(js(J, q0 + offset + 1e-5 * k, np.full(6, 0.1)))

    flood(3000, 0.0)
    time.sleep(1.0)
    rss0 = _rss_kb(pid)
    d.cmds.clear()
    n = 20000
    flood(n, 0.01)
    last_q = q0 + 0.01 + 1e-5 * (n - 1)
    time.sleep(2.0)
    rss1 = _rss_kb(pid)
    n_cmd = len(d.cmds)
    assert 0 < n_cmd <= n
    expect = rc.gravity_torques(model, last_q) + rc.coriolis_torques(model, last_q, np.full(6, 0.1))
    np.testing.assert_allclose(np.array(d.cmds.last().data), expect, atol=1e-9)   # the newest state's command
    print(f"flood: {n} states -> {n_cmd} commands; RSS {rss0} -> {rss1} kB")
    assert rss1 - rss0 < 2048, (rss0, rss1)
    assert ctl.alive() and ctl.stop() == 0
