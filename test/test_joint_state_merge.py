"""/joint_states from several publishers (real time): merged by name, freshness per joint.

The controller runs the ``gravity`` mode without hold gains, so each command is exactly the gravity
torque g(q) of the merged state, which the library computes independently here.
"""
import numpy as np

import rne_control as rc
from ros_util import config
from test_controller_node import PUMA, PUMA_J, joint_state


def _values(diags):
    m = diags.last()
    return ({kv.key: kv.value for kv in m.status[0].values}, m.status[0].message) if m else ({}, "")


def test_several_publishers_merged_and_one_stale_joint_named(ros_procs, ros_node):
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    puma = rc.load_model(PUMA)
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands", keep=200)
    diags = ros_node.collect(DiagnosticArray, "/diagnostics")
    ctl = ros_procs.start("rne_controller", params={
        "model_file": config("puma560.yaml"), "rate": 200.0, "mode": "gravity", "gc_freeze": False,
        "state_timeout": 0.2, "on_stale": "hold", "effort_limits": [1e6] * 6})
    pubs = [ros_node.publisher(JointState, "/joint_states", 50) for _ in range(3)]
    timers = []

    def every(period, fn):
        timers.append(ros_node.node.create_timer(period, fn))

    def stop_timers():
        for t in timers:
            ros_node.node.destroy_timer(t)
        timers.clear()

    def law_reaches(q):
        g = rc.gravity_torques(puma, q)
        return ros_node.wait_for(lambda: len(cmds) and np.allclose(cmds.last().data, g, rtol=1e-12, atol=1e-12),
                                 60.0, procs=[ctl])

    def diag_after(pred, timeout=10.0):
        n0 = len(diags)
        return ros_node.wait_for(lambda: len(diags) > n0 and pred(*_values(diags)), timeout, procs=[ctl])

    # 1. an arm driver (joints 1-4, velocities, 250 Hz) and a gripper driver (joints 5-6, no velocities,
    #    with a joint the model does not know, 40 Hz)
    q1 = np.array([0.1, 0.7, -0.4, 0.3, 0.5, -0.2])
    arm = joint_state(PUMA_J[:4], q1[:4], [0.0] * 4)
    grip = joint_state(["gripper_finger", "joint5", "joint6"], [0.01, *q1[4:]])
    every(0.004, lambda: pubs[0].publish(arm))
    every(0.025, lambda: pubs[1].publish(grip))
    assert law_reaches(q1), ctl.log()[-3000:]
    assert diag_after(lambda d, msg: d["state"] == "fresh" and d["stale_joints"] == ""), _values(diags)
    d, _ = _values(diags)
    assert d["rejected_joint_states"] == "0" and d["rejected_messages"] == "0"
    assert d["refused_samples"] == "0"
    stop_timers()

    # 2. one joint per message (round robin, 300 messages/s)
    q2 = np.array([-0.3, 0.2, 0.6, -0.1, 0.9, 0.4])
    singles = [joint_state([j], [q2[i]], [0.0]) for i, j in enumerate(PUMA_J)]
    k = [0]

    def one_joint():
        pubs[2].publish(singles[k[0] % 6])
        k[0] += 1

    every(1.0 / 300.0, one_joint)
    assert law_reaches(q2), ctl.log()[-3000:]
    assert diag_after(lambda d, msg: d["state"] == "fresh"), _values(diags)
    stop_timers()

    # 3. the arm and gripper drivers again, but joint5 stops updating while the others continue
    q3 = np.array([0.2, 0.4, -0.2, 0.1, -0.3, 0.3])
    arm = joint_state(PUMA_J[:4], q3[:4], [0.0] * 4)
    grip = joint_state(["joint5", "joint6"], q3[4:], [0.0, 0.0])
    every(0.004, lambda: pubs[0].publish(arm))
    every(0.025, lambda: pubs[1].publish(grip))
    assert law_reaches(q3)
    stop_timers()
    grip6 = joint_state(["joint6"], q3[5:], [0.0])
    every(0.004, lambda: pubs[0].publish(arm))
    every(0.025, lambda: pubs[1].publish(grip6))
    assert diag_after(lambda d, msg: d["state"] == "stale"), _values(diags)
    d, msg = _values(diags)
    assert d["stale_joints"] == "joint5" and "joint5" in msg and "joint6" not in msg, (d, msg)
    assert "from joint5: hold" in ctl.log()
    # on_stale hold: the gravity torque of the last valid configuration
    np.testing.assert_allclose(cmds.last().data, rc.gravity_torques(puma, q3), rtol=1e-12, atol=1e-12)
    # joint5 comes back: fresh again
    stop_timers()
    every(0.004, lambda: pubs[0].publish(arm))
    every(0.025, lambda: pubs[1].publish(grip))
    assert diag_after(lambda d, msg: d["state"] == "fresh"), _values(diags)
    stop_timers()
    d, _ = _values(diags)
    assert d["rejected_joint_states"] == "0" and d["stale_events"] == "1"
    assert ctl.alive()
