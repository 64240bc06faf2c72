"""rne_controller + rne_sim in lockstep on the Panda with its hand and elastic joints (issue 37): both
nodes start, and computed torque on the elastic model tracks a min-jerk motion as well as it does on the
same arm without its hand (the hand folded into link 7, panda_gripper.py): RMS within 10 %.

The URDF is the unedited example-robot-data description (``passive_2_4``: ``elastic.panda_joint2.*`` and
``elastic.panda_joint4.*`` make those joints springs, joints 1, 3, 5, 6, 7 controlled) or the same with a
series-elastic transmission in all seven joints (``series_all``: ``joints`` the seven arm joints, their
deflections elastic); the fingers are uncontrolled, at ``locked.panda_finger_joint1``, the second by its
<mimic> rule. Stiffnesses: config/arm7_elastic.yaml's (panda_gripper.py).
"""
import copy

import numpy as np
import pytest
import yaml

import ros_util
from panda_gripper import ARM, FINGER, FINGER_LOCKED, PANDA, READY, case, hand_xml
from test_closed_loop import Loop, min_jerk_traj, tracking_error

T = 2.0
LEAD = 1.0   # s of sim time between sending the trajectory and its start
AMP = {"passive_2_4": [0.3, -0.3, 0.4, -0.3, 0.4], "series_all": [0.3, 0.25, -0.3, 0.3, 0.4, -0.3, 0.4]}


def config(tmp_path, name, hand):
    """A parameter file for both nodes (modelled on config/arm7_elastic_controller.yaml), the URDF beside it."""
    xml, elastic, joints = case(name, hand)
    tag = f"{name}_{'hand' if hand else 'handless'}"
    urdf = tmp_path / f"{tag}.urdf"
    urdf.write_text(xml)
    if xml == hand_xml():
        urdf = PANDA                    # the description as the wheel ships it
    n = len(joints)
    common = {"model_file": str(urdf), "joints": joints, "elastic": elastic,
              "command_topic": "/effort_controller/commands"}
    if hand:
        common["locked"] = {FINGER: FINGER_LOCKED}
    ctl = dict(copy.deepcopy(common), rate=1000.0, trigger="state", mode="computed_torque", kp=[100.0] * n,
               kd=[20.0] * n, friction_compensation=False, state_timeout=0.05, on_stale="hold", ramp_time=0.5,
               command_type="float64_multi_array")
    sim = dict(copy.deepcopy(common), initial_positions=[READY[ARM.index(j)] for j in joints], sim_rate=2000.0,
               integrator="rk4", publish_rate=1000.0, command_timeout=0.1, control_rate=1000.0,
               # never advance without the controller's command: a step braked because a loaded machine
               # delayed the command would put the load into the comparison, not the dynamics
               lockstep_timeout=30.0)
    path = tmp_path / f"{tag}.yaml"
    path.write_text(yaml.safe_dump({"/**/rne_controller": {"ros__parameters": ctl},
                                    "/**/rne_sim": {"ros__parameters": sim}}))
    return str(path), joints


def run_motion(ros_procs, name, cfg, joints, q0, amp):
    """One lockstep run of the min-jerk motion: (RMS tracking error per joint, the commands, the last joint
    state, the loop). Its own in-test node, so that a run's recorders do not load the next one's."""
    node = ros_util.TestNode(f"rne_test_elastic_gripper_{name}")
    try:
        loop = Loop(ros_procs, node, cfg, ctl={"mode": "computed_torque"}, n=len(joints))
        loop.names = joints
        loop.wait_running()
        f = min_jerk_traj(q0, amp, T)
        t_start = loop.send_trajectory(joints, f, T, lead=LEAD)
        loop.wait_sim_time(t_start + T + 0.6, wall_timeout=180.0)
        rms, _ = tracking_error(loop, f, t_start, T)
        cmds, _ = loop.cmds.snapshot()
        last = loop.states.last()
        timeouts = loop.lockstep_timeouts()    # before the stop: the sim then waits for commands in vain
        for p in (loop.ctl, loop.sim):
            assert p.stop() == 0, f"{p.name} did not exit cleanly on SIGINT:\n{p.log()[-3000:]}"
    finally:
        node.shutdown()
    assert timeouts == 0, loop.sim.log()[-3000:]
    return rms, np.array([m.data for m in cmds]), last, loop


@pytest.mark.parametrize("name", list(AMP))
def test_elastic_arm_with_its_gripper_tracks_as_the_handless_arm(ros_procs, tmp_path, name):
    rms = {}
    for hand in (True, False):
        cfg, joints = config(tmp_path, name, hand)
        q0 = [READY[ARM.index(j)] for j in joints]
        rms[hand], C, last, loop = run_motion(ros_procs, name, cfg, joints, q0, np.array(AMP[name]))
        assert C.shape[1] == len(joints) and np.all(np.isfinite(C)), C.shape
        assert np.abs(C).max() <= 87.0, np.abs(C).max(axis=0)
        # rne_sim publishes the controlled and the elastic joints, not the held fingers
        assert FINGER not in last.name and all(j in last.name for j in joints), last.name
        assert "fatal" not in loop.ctl.log() and "fatal" not in loop.sim.log()
    total = {h: float(np.sqrt(np.mean(r**2))) for h, r in rms.items()}
    print(f"\n{name}: tracking RMS with the hand {rms[True]} (total {total[True]:.3e} rad)\n"
          f"{' ' * len(name)}  without the hand {rms[False]} (total {total[False]:.3e} rad); "
          f"ratio {total[True] / total[False]:.4f}")
    assert total[True] < 1e-3, rms[True]
    assert abs(total[True] / total[False] - 1.0) <= 0.10, total
