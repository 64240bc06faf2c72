"""rne_controller + rne_sim in lockstep on the other kinds of model: the node runs them through the
same Plant interface as a tree (console scripts with the shipped --params-file configs).

Each tracking test runs one min-jerk motion twice: computed torque on the model's own dynamics, then
gravity compensation + PD with gains matched to the mass matrix at the start (the PUMA test's yardstick).
"""
import numpy as np

import rne_control as rc
import ros_util
from test_closed_loop import Loop, _cfg, min_jerk_traj, tracking_error

REPO = ros_util.REPO
PAL_CFG = ros_util.config("palletizer_controller.yaml")


def model_joints(cfg):
    return _cfg(cfg, "rne_controller")["joints"]


def run_motion(ros_procs, ros_node, cfg, amp, T, ctl):
    joints = _cfg(cfg, "rne_controller")["joints"]
    q0 = np.array(_cfg(cfg)["initial_positions"])
    loop = Loop(ros_procs, ros_node, cfg, ctl=ctl, n=len(joints))
    loop.names = joints
    loop.wait_running()
    f = min_jerk_traj(q0, amp, T)
    t_start = loop.send_trajectory(joints, f, T)
    loop.wait_sim_time(t_start + T + 0.6, wall_timeout=120.0)
    rms, emax = tracking_error(loop, f, t_start, T)
    msgs, _ = loop.states.snapshot()
    for p in (loop.ctl, loop.sim):
        assert p.stop() == 0, f"{p.name} did not exit cleanly on SIGINT:\n{p.log()[-3000:]}"
    return rms, emax, msgs[-1], loop


def compare_ct_with_gravity_pd(ros_procs, ros_node, cfg, amp, T, mass_diag, kp=100.0, kd=20.0):
    rms_ct, max_ct, last, loop = run_motion(ros_procs, ros_node, cfg, amp, T,
                                            {"mode": "computed_torque", "kp": [kp] * len(amp), "kd": [kd] * len(amp)})
    print(f"{cfg}: computed torque rms {rms_ct} max {max_ct}")
    for c in (loop.states, loop.cmds, loop.clock):
        c.clear()
    rms_g, max_g, _, _ = run_motion(ros_procs, ros_node, cfg, amp, T,
                                    {"mode": "gravity", "hold_kp": (mass_diag * kp).tolist(),
                                     "hold_kd": (mass_diag * kd).tolist()})
    print(f"{cfg}: gravity + PD rms {rms_g} max {max_g}")
    total_ct, total_g = np.sqrt(np.mean(rms_ct**2)), np.sqrt(np.mean(rms_g**2))
    print(f"{cfg}: gravity+PD / computed torque = {total_g / total_ct:.1f}")
    return rms_ct, total_ct, total_g, last


# ----------------------------------------------------------------------------- closed loop (issue 7)
def test_palletizer_computed_torque_tracks_and_gravity_pd_is_worse(ros_procs, ros_node):
    model = rc.load_model(str(REPO / "config" / "palletizer.yaml"))
    q0 = np.array(_cfg(PAL_CFG)["initial_positions"])
    amp = np.array([0.6, 0.25, -0.3])
    mdiag = np.diag(rc.closed_loop_mass_matrix(model, q0))
    rms_ct, total_ct, total_g, last = compare_ct_with_gravity_pd(ros_procs, ros_node, PAL_CFG, amp, 2.0, mdiag)
    assert np.all(rms_ct < 1e-3), rms_ct
    assert total_g >= 5.0 * total_ct, (total_g, total_ct)
    # rne_sim publishes the active and the passive joints, on the closed loop
    assert list(last.name) == ["joint1", "joint2", "joint3", "elbow", "rod"]
    q = np.array(last.position)
    q_tree = np.zeros(model.n)
    q_tree[[model.joint_names.index(j) for j in last.name]] = q
    np.testing.assert_allclose(rc.solve_loops(model, q[:3], q_tree), q_tree, atol=1e-9)


def test_palletizer_off_loop_passive_joint_rejected_and_counted(ros_procs, ros_node):
    """Real time, the in-test node as the driver: a passive joint off the loop by more than
    loop_tolerance is rejected and counted, the node holds; without passive joints the state is
    complete (they are solved for); a consistent one is accepted."""
    import time

    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    model = rc.load_model(str(REPO / "config" / "palletizer.yaml"))
    ctl = ros_procs.start("rne_controller", params_file=PAL_CFG,
                          params={"mode": "gravity", "state_timeout": 5.0, "gc_freeze": False})
    pub = ros_node.publisher(JointState, "/joint_states", 100)
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands", qos=1000)
    diags = ros_node.collect(DiagnosticArray, "/diagnostics", qos=10)

    def diag():
        m = diags.last()
        return {kv.key: kv.value for kv in m.status[0].values} if m else {}

    def state(names, q):
        m = JointState()
        m.name, m.position, m.velocity = list(names), [float(x) for x in q], [0.0] * len(q)
        return m

    qa = np.array([0.1, 0.2, -0.25])
    q_tree = rc.solve_loops(model, qa)
    order = [model.joint_names.index(j) for j in ("joint1", "joint2", "joint3", "elbow", "rod")]
    closed = q_tree[order]
    assert ros_node.wait_for_subscribers(pub, 1, 40.0)
    deadline = time.monotonic() + 60
    while not len(cmds) and time.monotonic() < deadline:      # active joints only: complete
        pub.publish(state(["joint1", "joint2", "joint3"], qa))
        ros_node.wait_for(lambda: len(cmds) > 0, 0.2, procs=[ctl])
    assert len(cmds), ctl.log()
    g = rc.closed_loop_gravity_torques(model, qa)
    ros_node.wait_for(lambda: np.allclose(cmds.last().data, g, atol=1e-9), 2.0)
    np.testing.assert_allclose(cmds.last().data, g, atol=1e-9)
    pub.publish(state(["joint1", "joint2", "joint3", "elbow", "rod"], closed))   # consistent: accepted
    time.sleep(0.3)
    assert int(diag().get("rejected_joint_states", 0)) == 0, diag()
    bad = closed.copy()
    bad[3] += 0.05                                                # elbow 0.05 rad off (> 0.01)
    qa2 = qa + np.array([0.0, 0.05, 0.0])
    bad[:3] = qa2
    for _ in range(4):
        pub.publish(state(["joint1", "joint2", "joint3", "elbow", "rod"], bad))
        time.sleep(0.05)
    assert ros_node.wait_for(lambda: int(diag().get("rejected_joint_states", 0)) >= 4, 5.0), diag()
    time.sleep(1.2)
    assert int(diag()["rejected_joint_states"]) == 4, diag()      # once per state, not per cycle
    assert "rejected /joint_states" in ctl.log()
    np.testing.assert_allclose(cmds.last().data, g, atol=1e-9)  # held: the last accepted state's gravity
    assert ctl.alive() and ctl.stop() == 0


# ----------------------------------------------------------------------------- elastic joints (issue 9)
SEA_CFG = ros_util.config("arm7_sea_controller.yaml")


def test_elastic_arm_computed_torque_beats_the_rigid_model(ros_procs, ros_node):
    """arm7_sea in lockstep: computed torque on the elastic model (rigid and elastic joints measured)
    against computed torque on the rigid model (ignore_elasticity: springs assumed at rest)."""
    amp = np.array([0.3, 0.25, -0.3, 0.3, 0.4, -0.3, 0.4])
    T = 2.0
    rms_el, _, last, loop = run_motion(ros_procs, ros_node, SEA_CFG, amp, T, {"mode": "computed_torque"})
    for c in (loop.states, loop.cmds, loop.clock):
        c.clear()
    rms_rig, _, _, _ = run_motion(ros_procs, ros_node, SEA_CFG, amp, T,
                                  {"mode": "computed_torque", "ignore_elasticity": True})
    el, rig = np.sqrt(np.mean(rms_el**2)), np.sqrt(np.mean(rms_rig**2))
    print(f"arm7_sea: elastic model rms {rms_el}\n          rigid model rms {rms_rig}\n          ratio {rig / el:.1f}")
    assert rig >= 5.0 * el, (rig, el)
    # rne_sim publishes the rigid and the elastic joints
    model = rc.load_model(str(REPO / "config" / "arm7_sea.yaml"))
    assert sorted(last.name) == sorted(model.joint_names)


def test_elastic_joints_missing_from_joint_states_are_not_controlled_with(ros_procs, ros_node):
    import time

    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    model = rc.load_model(str(REPO / "config" / "arm7_sea.yaml"))
    ctl = ros_procs.start("rne_controller", params_file=SEA_CFG, params={"gc_freeze": False, "trigger": "timer"})
    pub = ros_node.publisher(JointState, "/joint_states", 100)
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands", qos=1000)
    diags = ros_node.collect(DiagnosticArray, "/diagnostics", qos=10)
    rigid = list(model.rigid_joint_names)
    m = JointState()
    m.name, m.position, m.velocity = rigid, [0.1] * 7, [0.0] * 7
    assert ros_node.wait_for_subscribers(pub, 1, 40.0)
    deadline = time.monotonic() + 8.0
    while time.monotonic() < deadline:
        pub.publish(m)
        time.sleep(0.01)
    assert len(cmds) == 0, "commanded from a state without the elastic joints"
    d = {kv.key: kv.value for kv in diags.last().status[0].values}
    assert d["state"] == "waiting for /joint_states"
    assert set(d["stale_joints"].split(",")) == set(model.elastic_joint_names), d["stale_joints"]
    assert "joint state incomplete: no arm7_joint1_deflection" in ctl.log()
    m.name = list(model.joint_names)                      # complete: control starts
    m.position, m.velocity = [0.0] * 14, [0.0] * 14
    assert ros_node.wait_for(lambda: (pub.publish(m), len(cmds) > 0)[1], 10.0, procs=[ctl])
    assert ctl.stop() == 0


TWO_LINK_URDF = """<robot name="two_link_sea">
  <link name="base"/>
  <link name="l1"><inertial><mass value="2.0"/><origin xyz="0.2 0 0"/>
    <inertia ixx="0.01" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><mass value="1.0"/><origin xyz="0.2 0 0"/>
    <inertia ixx="0.01" iyy="0.03" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
    <limit effort="50" velocity="2" lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.4 0 0"/>
    <axis xyz="0 1 0"/><limit effort="50" velocity="2" lower="-3" upper="3"/></joint>
</robot>"""


def test_urdf_elastic_parameters_make_a_joint_elastic(ros_procs, ros_node):
    """elastic.<joint>.* parameters: j2 of a URDF becomes an elastic joint, required from /joint_states
    and no longer controlled; the gravity command equals the library's elastic gravity torques."""
    import time

    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    ctl = ros_procs.start("rne_controller", params={
        "robot_description": TWO_LINK_URDF, "mode": "gravity", "gc_freeze": False, "effort_limits": [1e3],
        "elastic.j2.stiffness": 300, "elastic.j2.rest_position": 0.05, "elastic.j2.damping": 0.5})
    pub = ros_node.publisher(JointState, "/joint_states", 100)
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands", qos=1000)
    diags = ros_node.collect(DiagnosticArray, "/diagnostics", qos=10)
    m = JointState()
    m.name, m.position, m.velocity = ["j1"], [0.3], [0.0]
    assert ros_node.wait_for_subscribers(pub, 1, 40.0)
    deadline = time.monotonic() + 4.0
    while time.monotonic() < deadline:
        pub.publish(m)
        time.sleep(0.01)
    assert len(cmds) == 0
    assert ros_node.wait_for(lambda: diags.last() is not None, 5.0)
    d = {kv.key: kv.value for kv in diags.last().status[0].values}
    assert d["stale_joints"] == "j2", d
    model = rc.load_urdf(TWO_LINK_URDF, elastic={"j2": {"stiffness": 300.0, "rest_position": 0.05, "damping": 0.5}})
    q = np.array([0.3, 0.12])
    m.name, m.position, m.velocity = ["j1", "j2"], q.tolist(), [0.0, 0.0]
    assert ros_node.wait_for(lambda: (pub.publish(m), len(cmds) > 0)[1], 10.0, procs=[ctl])
    time.sleep(0.2)
    assert len(cmds.last().data) == 1
    np.testing.assert_allclose(cmds.last().data, rc.elastic_gravity_torques(model, q), atol=1e-9)
    assert ctl.stop() == 0


# ----------------------------------------------------------------------------- parallel platform (issue 8)
GS_CFG = ros_util.config("gough_stewart_controller.yaml")
HOME = np.array([0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0])
# surge (x), heave (z) and yaw over a min-jerk profile: m, m, rad
MOTION = np.array([0.15, 0.0, 0.1, 0.0, 0.0, 0.12])


def platform_motion(t, T):
    """Desired platform pose [p; quat], twist [v; w] and acceleration (base frame) at t from the start."""
    s, sd, sdd = ros_util.min_jerk(t, T)
    x = MOTION * s
    yaw = x[5]
    pose = np.r_[HOME[:3] + x[:3], 0.0, 0.0, np.sin(yaw / 2), np.cos(yaw / 2)]
    return pose, MOTION * sd, MOTION * sdd


def platform_trajectory_msg(T, start_sec, dt=0.02):
    from builtin_interfaces.msg import Duration
    from geometry_msgs.msg import Transform, Twist
    from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint

    msg = MultiDOFJointTrajectory()
    msg.header.stamp = ros_util.sec_to_stamp(start_sec)
    msg.joint_names = ["platform"]
    for k in range(1, int(round(T / dt)) + 1):
        t = k * dt
        pose, tw, ac = platform_motion(t, T)
        pt = MultiDOFJointTrajectoryPoint()
        tr = Transform()
        tr.translation.x, tr.translation.y, tr.translation.z = (float(v) for v in pose[:3])
        tr.rotation.x, tr.rotation.y, tr.rotation.z, tr.rotation.w = (float(v) for v in pose[3:])
        v, a = Twist(), Twist()
        v.linear.x, v.linear.y, v.linear.z, v.angular.x, v.angular.y, v.angular.z = (float(x) for x in tw)
        a.linear.x, a.linear.y, a.linear.z, a.angular.x, a.angular.y, a.angular.z = (float(x) for x in ac)
        pt.transforms, pt.velocities, pt.accelerations = [tr], [v], [a]
        pt.time_from_start = Duration(sec=int(t), nanosec=int(round((t - int(t)) * 1e9)) % 1000000000)
        msg.points.append(pt)
    return msg


def pose_error(model, msgs, t_start, T, tail=0.5):
    """RMS position error (m) and rotation error (rad) of the platform, from the forward kinematics of the
    recorded leg lengths, against the desired motion."""
    ep, er = [], []
    guess = HOME
    for m in msgs:
        t = ros_util.stamp_to_sec(m.header.stamp)
        if not (t_start <= t <= t_start + T + tail):
            continue
        at = dict(zip(m.name, m.position))
        pose = rc.platform_forward_kinematics(model, np.array([at[j] for j in model.joint_names]), guess)
        guess = pose
        want = platform_motion(t - t_start, T)[0]
        ep.append(np.linalg.norm(pose[:3] - want[:3]))
        er.append(2 * np.arccos(min(1.0, abs(float(pose[3:] @ want[3:])))))
    assert len(ep) > 0.8 * (T + tail) * 1000, len(ep)
    return float(np.sqrt(np.mean(np.square(ep)))), float(np.sqrt(np.mean(np.square(er))))


def run_platform(ros_procs, ros_node, ctl, T=2.0):
    from nav_msgs.msg import Odometry
    from trajectory_msgs.msg import MultiDOFJointTrajectory

    loop = Loop(ros_procs, ros_node, GS_CFG, ctl=ctl, n=6)
    loop.names = list(model_joints(GS_CFG))
    odom = ros_node.collect(Odometry, "/rne_controller/platform_state", qos=100)
    pub = ros_node.publisher(MultiDOFJointTrajectory, "/rne_controller/platform_trajectory", 10)
    loop.wait_running()
    assert ros_node.wait_for_subscribers(pub, 1, 20.0)
    assert ros_node.wait_for(lambda: loop.clock.last() is not None, 10.0)
    t_start = loop.sim_now() + 0.5
    pub.publish(platform_trajectory_msg(T, t_start))
    loop.wait_sim_time(t_start + T + 0.6, wall_timeout=120.0)
    loop.wait_states(t_start + T + 0.5)          # the states pose_error reads
    msgs, _ = loop.states.snapshot()
    return loop, odom, pub, msgs, t_start


def test_platform_trajectory_tracks_in_task_space(ros_procs, ros_node):
    model = rc.load_model(str(REPO / "config" / "gough_stewart.yaml"))
    T = 2.0
    loop, odom, pub, msgs, t_start = run_platform(ros_procs, ros_node, {"mode": "computed_torque"}, T)
    ep, er = pose_error(model, msgs, t_start, T)
    print(f"gough_stewart computed torque: pose rms {ep:.3g} m, {er:.3g} rad")
    # ~/platform_state: the forward kinematics of the measured legs
    assert len(odom) > 10
    o = odom.last().pose.pose
    at = dict(zip(msgs[-1].name, msgs[-1].position))
    last_pose = rc.platform_forward_kinematics(model, np.array([at[j] for j in model.joint_names]), HOME)
    np.testing.assert_allclose([o.position.x, o.position.y, o.position.z], last_pose[:3], atol=2e-3)
    # bad platform trajectories are rejected and counted; the node runs on
    from diagnostic_msgs.msg import DiagnosticArray
    diags = ros_node.collect(DiagnosticArray, "/diagnostics", qos=10)
    bad = []
    m = platform_trajectory_msg(0.2, 0.0)
    m.joint_names = ["leg1"]
    bad.append(m)
    m = platform_trajectory_msg(0.2, 0.0)
    m.points[-1].transforms[0].translation.z = 4.5                  # out of stroke
    bad.append(m)
    m = platform_trajectory_msg(0.2, 0.0)
    m.points[0].transforms[0].translation.x = float("nan")
    bad.append(m)
    m = platform_trajectory_msg(0.2, 0.0)
    m.points[1].velocities = []                                     # velocities on some points only
    bad.append(m)
    m = platform_trajectory_msg(0.2, 0.0)
    m.points[0].transforms[0].rotation.w = 0.0                      # zero quaternion
    bad.append(m)
    for b in bad:
        pub.publish(b)
    t0 = loop.sim_now()
    loop.wait_sim_time(t0 + 2.5, wall_timeout=60.0)

    def diag():
        d = diags.last()
        return {kv.key: kv.value for kv in d.status[0].values} if d else {}

    assert ros_node.wait_for(lambda: diag().get("rejected_platform_trajectory") == "5", 20.0), diag()
    assert "rejected ~/platform_trajectory" in loop.ctl.log()
    for p in (loop.ctl, loop.sim):
        assert p.stop() == 0
    for c in (loop.states, loop.cmds, loop.clock):
        c.clear()
    plant_mass = rc.parallel_mass_matrix(model, rc.platform_inverse_kinematics(model, HOME))
    mdiag = np.diag(plant_mass)
    kp, kd = 400.0, 40.0
    _, _, _, msgs_g, t_g = run_platform(ros_procs, ros_node, {"mode": "gravity", "hold_kp": (mdiag * kp).tolist(),
                                                               "hold_kd": (mdiag * kd).tolist()}, T)
    ep_g, er_g = pose_error(model, msgs_g, t_g, T)
    print(f"gough_stewart gravity + PD: pose rms {ep_g:.3g} m, {er_g:.3g} rad; ratios {ep_g / ep:.1f}, {er_g / er:.1f}")
    assert ep < 1e-4 and er < 1e-3, (ep, er)
    assert ep_g >= 5 * ep and er_g >= 5 * er, (ep, ep_g, er, er_g)
