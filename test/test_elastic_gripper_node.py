"""rne_controller + rne_sim in lockstep on the Panda with its hand and elastic joints (issue 37): both
nodes start, and computed torque on the elastic model tracks a min-jerk motion as well as it does on the
same arm without its hand (the hand folded into link 7, panda_gripper.py): RMS within 10 %.

The URDF is the unedited example-robot-data description, made elastic by parameters only:
``passive_2_4``: ``elastic.panda_joint2.*`` and ``elastic.panda_joint4.*`` (stiffness, damping, rest position)
make those joints springs, joints 1, 3, 5, 6, 7 controlled; ``series_2_4`` (the issue's scenario): with
``rotor_inertia`` too, joints 2 and 4 are series-elastic drives, ``joints`` the seven arm joints, the
deflections ``panda_joint2_deflection`` and ``panda_joint4_deflection`` published by rne_sim;
``series_all``: all seven joints series-elastic. The fingers are uncontrolled, at
``locked.panda_finger_joint1``, the second by its <mimic> rule. Stiffnesses: config/arm7_elastic.yaml's
(panda_gripper.py).
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
AMP = {"passive_2_4": [0.3, -0.3, 0.4, -0.3, 0.4], "series_2_4": [0.3, 0.25, -0.3, 0.3, 0.4, -0.3, 0.4],
       "series_all": [0.3, 0.25, -0.3, 0.3, 0.4, -0.3, 0.4]}


def config(tmp_path, name, hand):
    """A parameter file for both nodes (modelled on config/arm7_elastic_controller.yaml): with the hand the
    description as the wheel ships it, without it the handless URDF beside the file."""
    xml, elastic, joints = case(name, hand)
    tag = f"{name}_{'hand' if hand else 'handless'}"
    if hand:
        assert xml == hand_xml()
        urdf = PANDA
    else:
        urdf = tmp_path / f"{tag}.urdf"
        urdf.write_text(xml)
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
        elastic = case(name, hand)[1]
        q0 = [READY[ARM.index(j)] for j in joints]
        rms[hand], C, last, loop = run_motion(ros_procs, name, cfg, joints, q0, np.array(AMP[name]))
        assert C.shape[1] == len(joints) and np.all(np.isfinite(C)), C.shape
        assert np.abs(C).max() <= 87.0, np.abs(C).max(axis=0)
        # rne_sim publishes the controlled and the elastic joints (a drive's deflection), not the held fingers
        springs = [j + "_deflection" for j, spec in elastic.items() if "rotor_inertia" in spec] or list(elastic)
        assert FINGER not in last.name and all(j in last.name for j in joints + springs), last.name
        assert "fatal" not in loop.ctl.log() and "fatal" not in loop.sim.log()
    total = {h: float(np.sqrt(np.mean(r**2))) for h, r in rms.items()}
    print(f"\n{name}: tracking RMS with the hand {rms[True]} (total {total[True]:.3e} rad)\n"
          f"{' ' * len(name)}  without the hand {rms[False]} (total {total[False]:.3e} rad); "
          f"ratio {total[True] / total[False]:.4f}")
    assert total[True] < 1e-3, rms[True]
    assert abs(total[True] / total[False] - 1.0) <= 0.10, total


def _gravity_command(ros_procs, ros_node, params, names, q, log_name, incomplete=None):
    """rne_controller alone in gravity mode on the unedited Panda: (its command once ``names`` are published
    at ``q``, at rest; the controller). With ``incomplete`` (a joint), the arm joints alone are published
    first, until the controller logs that the state lacks that joint: it must not have commanded."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    ctl = ros_procs.start("rne_controller", params=dict({
        "model_file": str(PANDA), "joints": ARM, "mode": "gravity", "gc_freeze": False,
        "locked." + FINGER: FINGER_LOCKED}, **params), log_name=log_name)
    pub = ros_node.publisher(JointState, "/joint_states", 100)
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands", qos=1000)
    assert ros_node.wait_for_subscribers(pub, 1, 60.0)
    if incomplete:
        m = JointState(name=list(ARM), position=list(READY), velocity=[0.0] * 7)
        said = f"joint state incomplete: no {incomplete}"
        assert ros_node.wait_for(lambda: (pub.publish(m), said in ctl.log())[1], 60.0, procs=[ctl]), ctl.log()
        assert len(cmds) == 0, "commanded without the deflections"
    m = JointState(name=list(names), position=list(q), velocity=[0.0] * len(q))
    assert ros_node.wait_for(lambda: (pub.publish(m), len(cmds) > 20)[1], 60.0, procs=[ctl]), ctl.log()
    return np.array(cmds.last().data), ctl


def test_series_drives_through_parameters(ros_procs, ros_node):
    """The issue's parameters on the unedited Panda with its hand: ``joints`` the seven arm joints and
    ``elastic.panda_joint{2,4}.{stiffness,damping,rotor_inertia}``. The controller waits for the deflections
    (it commands nothing from the arm joints alone), then commands, at rest, the plant's elastic gravity
    torques, at a drive the spring's torque -K delta (its gear body is massless: truth by statics, Spong's
    u = Ia theta'' - K delta); ``ignore_elasticity`` controls the unsplit URDF; a passive spring named in
    ``joints`` is refused with how to make it a drive."""
    import rne_control as rc
    from rne_control.control import make_plant

    _, elastic, joints = case("series_2_4")
    params = {f"elastic.{j}.{k}": v for j, spec in elastic.items() for k, v in spec.items()}
    delta = {"panda_joint2_deflection": 4e-4, "panda_joint4_deflection": -3e-4}
    names, q = ARM + list(delta), READY + list(delta.values())
    cmd, ctl = _gravity_command(ros_procs, ros_node, params, names, q, "series", "panda_joint2_deflection")
    assert ctl.stop() == 0
    model = rc.load_urdf(PANDA, elastic=elastic)
    plant = make_plant(model, joints, locked={FINGER: FINGER_LOCKED})
    state = dict(zip(names, q))
    plant.set_state(np.array([state.get(j, np.nan) for j in plant.state_names]), np.zeros(len(plant.state_names)))
    np.testing.assert_allclose(cmd, plant.gravity_torques(np.zeros(7)), rtol=0, atol=1e-9)
    for j, d in delta.items():
        K = elastic[j.removesuffix("_deflection")]["stiffness"]
        assert abs(cmd[ARM.index(j.removesuffix("_deflection"))] + K * d) <= 1e-9, (j, cmd, -K * d)
    print(f"\nseries drives 2 and 4 at rest: command {np.array2string(cmd, precision=4)} N m "
          f"(-K delta: {[-elastic[j[:-11]]['stiffness'] * d for j, d in delta.items()]})")
    # ignore_elasticity: the unsplit URDF (the rotor inertia does not enter gravity), the arm joints suffice
    cmd, ctl = _gravity_command(ros_procs, ros_node, dict(params, ignore_elasticity=True), ARM, READY, "rigid")
    assert ctl.stop() == 0
    rigid = make_plant(rc.load_urdf(PANDA), ARM, locked={FINGER: FINGER_LOCKED})
    rigid.set_state(np.array([dict(zip(ARM, READY)).get(j, np.nan) for j in rigid.state_names]),
                    np.zeros(len(rigid.state_names)))
    np.testing.assert_allclose(cmd, rigid.gravity_torques(np.zeros(7)), rtol=0, atol=1e-9)
    # passive springs (no rotor_inertia) cannot be controlled: the refusal says how to make them drives
    passive = {k: v for k, v in params.items() if not k.endswith("rotor_inertia")}
    ctl = ros_procs.start("rne_controller", params=dict(passive, model_file=str(PANDA), joints=ARM),
                          log_name="refused")
    assert ros_node.wait_for(lambda: not ctl.alive(), 120.0), ctl.log()
    assert ctl.returncode != 0 and "elastic.panda_joint2.rotor_inertia" in ctl.log(), ctl.log()[-3000:]
