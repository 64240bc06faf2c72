"""rne_sim applies the commands it reads from their serialised bytes (rne_control.ros.wire): a JointState
command's efforts go to the joints they are named for, in any order, and a Float64MultiArray's in
``joints`` order; a command it cannot use is refused with a warning and the simulation goes on. In lockstep
with one semi-implicit Euler step per control period, the velocity after a step is h * qdd, and qdd is
the library's forward dynamics at the published state under the applied efforts."""
import numpy as np
import pytest

import rne_control as rc
from ros_util import REPO, config, stamp_to_sec, wrench_msg

PUMA = config("puma560.yaml")
J = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
RATE = 200.0


class Sim:
    """rne_sim in lockstep as the only process; the test is its controller."""

    def __init__(self, ros_procs, tn, command_type, model_file=PUMA, joints=J,
                 initial=(0.1, 0.7, -0.6, 0.2, 0.5, 0.1), extra=None):
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        self.joints = list(joints)
        self.type = JointState if command_type == "joint_state" else Float64MultiArray
        self.tn = tn
        self.states = tn.collect(JointState, "/joint_states", qos=1000)
        self.pub = tn.publisher(self.type, "/efforts", 10)
        self.proc = ros_procs.start("rne_sim", params={
            "model_file": model_file, "lockstep": True, "control_rate": RATE, "sim_rate": RATE, "integrator": "semi_implicit",
            "friction": False, "command_type": command_type, "command_topic": "/efforts",
            "lockstep_idle_timeout": 5.0, "lockstep_timeout": 5.0,
            "initial_positions": [float(x) for x in initial], **(extra or {})})
        assert tn.wait_for(lambda: len(self.states) > 0 and self.pub.get_subscription_count() > 0, 60.0,
                           procs=[self.proc]), self.proc.log()

    def state(self):
        m = self.states.last()
        idx = [list(m.name).index(j) for j in self.joints]
        return stamp_to_sec(m.header.stamp), np.array(m.position)[idx], np.array(m.velocity)[idx]

    def step(self, msg):
        """Send ``msg`` answering the newest state; return (state before, state after)."""
        before = self.state()
        self.pub.publish(msg)
        assert self.tn.wait_for(lambda: self.state()[0] > before[0], 10.0, procs=[self.proc]), self.proc.log()
        return before, self.state()


@pytest.mark.parametrize("command_type", ["joint_state", "float64_multi_array"])
def test_sim_applies_efforts_by_name(ros_procs, ros_node, command_type):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    model = rc.load_model(PUMA)
    sim = Sim(ros_procs, ros_node, command_type)
    h = 1.0 / RATE
    rng = np.random.default_rng(11)
    for _ in range(5):
        tau = rc.gravity_torques(model, sim.state()[1]) + rng.uniform(-5.0, 5.0, 6)
        if command_type == "joint_state":
            order = rng.permutation(6)                              # any order: mapped by name
            msg = JointState(name=[J[k] for k in order], effort=[float(tau[k]) for k in order])
        else:
            msg = Float64MultiArray(data=tau.tolist())
        (_, q0, qd0), (_, q1, qd1) = sim.step(msg)
        qdd = rc.forward_dynamics(model, q0, qd0, tau, friction=False)
        np.testing.assert_allclose(qd1, qd0 + h * qdd, rtol=0, atol=1e-9)
        np.testing.assert_allclose(q1, q0 + h * qd1, rtol=0, atol=1e-9)
    # a command it cannot use: refused with a warning, nothing applied, the next one is
    bad = (JointState(name=J[:5], effort=[0.0] * 5) if command_type == "joint_state"
           else Float64MultiArray(data=[0.0] * 5))
    n = len(sim.states)
    sim.pub.publish(bad)
    ros_node.sleep(0.3)
    assert len(sim.states) == n and sim.proc.alive()
    assert "ignoring command" in sim.proc.log()
    tau = rc.gravity_torques(model, sim.state()[1])
    msg = (JointState(name=J, effort=tau.tolist()) if command_type == "joint_state"
           else Float64MultiArray(data=tau.tolist()))
    (_, q0, qd0), (_, q1, qd1) = sim.step(msg)
    np.testing.assert_allclose(qd1, qd0 + h * rc.forward_dynamics(model, q0, qd0, tau, friction=False), atol=1e-9)
    assert sim.proc.stop() == 0


def test_sim_applies_a_wrench_at_a_frame_in_its_axes(ros_procs, ros_node):
    """~/applied_wrench on the 7-DOF arm's URDF: the joint torques after one step are the command plus
    J_local^T F, J_local Pinocchio's Jacobian of that frame in its own axes (pinocchio.LOCAL); a zero wrench
    removes it, and a message naming no frame, or an unknown one, is refused with the reason."""
    import pinocchio as pin
    from geometry_msgs.msg import WrenchStamped
    from std_msgs.msg import Float64MultiArray
    from oracle import Oracle

    urdf = str(REPO / "urdf" / "arm7.urdf")
    model = rc.load_urdf(urdf, friction=False)
    o = Oracle(urdf, model)
    joints = list(model.joint_names)
    sim = Sim(ros_procs, ros_node, "float64_multi_array", model_file=urdf, joints=joints,
              initial=[0.2, -0.3, 0.4, -1.2, 0.3, 0.8, -0.2])
    wrench_pub = ros_node.publisher(WrenchStamped, "/rne_sim/applied_wrench", 10)
    assert ros_node.wait_for_subscribers(wrench_pub, 1, timeout=20.0)
    h = 1.0 / RATE

    def expect_step(tau_ext):
        tau = rc.gravity_torques(model, sim.state()[1])
        (_, q0, qd0), (_, q1, qd1) = sim.step(Float64MultiArray(data=tau.tolist()))
        qdd = rc.forward_dynamics(model, q0, qd0, tau + tau_ext(q0), friction=False)
        np.testing.assert_allclose(qd1, qd0 + h * qdd, rtol=0, atol=1e-9)

    for frame, F in (("arm7_link4", [10.0, -5.0, 3.0, 0.5, -1.0, 2.0]), ("arm7_flange", [0.0, 0.0, -20.0, 0.0, 1.0, 0.0])):
        wrench_pub.publish(wrench_msg(frame, F))
        assert ros_node.wait_for(lambda: f"applying a wrench at '{frame}'" in sim.proc.log(), 5.0), sim.proc.log()
        fid = o.pm.getFrameId(frame)

        def tau_ext(q, fid=fid, F=np.array(F)):
            J = pin.computeFrameJacobian(o.pm, o.pd, o.q(q), fid, pin.LOCAL)
            return (J.T @ F)[o.iv]
        for _ in range(3):
            expect_step(tau_ext)
    wrench_pub.publish(wrench_msg("arm7_flange", np.zeros(6)))
    assert ros_node.wait_for(lambda: "applied wrench removed" in sim.proc.log(), 5.0)
    expect_step(lambda q: np.zeros(model.n))
    for bad, why in (("", "frame_id"), ("no_such_link", "unknown frame")):
        wrench_pub.publish(wrench_msg(bad, np.ones(6)))
        assert ros_node.wait_for(lambda: why in sim.proc.log(), 5.0), sim.proc.log()[-2000:]
    expect_step(lambda q: np.zeros(model.n))     # refused: nothing applied
    assert sim.proc.stop() == 0


def test_sim_contact_plane_pushes_back_with_a_spring_damper(ros_procs, ros_node):
    """contact.frame on the arm's flange, its origin 5 mm behind a plane: each step's torques are the command
    plus J^T n max(0, k d - c n.v), with the flange's position and Jacobian from Pinocchio
    (LOCAL_WORLD_ALIGNED); the force is published on ~/contact_wrench."""
    import pinocchio as pin
    from geometry_msgs.msg import WrenchStamped
    from std_msgs.msg import Float64MultiArray
    from oracle import Oracle

    urdf = str(REPO / "urdf" / "arm7.urdf")
    model = rc.load_urdf(urdf, friction=False)
    o = Oracle(urdf, model)
    q_init = np.array([0.2, -0.3, 0.4, -1.2, 0.3, 0.8, -0.2])
    fid = o.pm.getFrameId("arm7_flange")

    def flange(q):
        pin.framesForwardKinematics(o.pm, o.pd, o.q(q))
        J = pin.computeFrameJacobian(o.pm, o.pd, o.q(q), fid, pin.LOCAL_WORLD_ALIGNED)[:3]
        return o.pd.oMf[fid].translation.copy(), J[:, o.iv]

    n = np.array([0.3, -0.2, 0.9])
    n /= np.linalg.norm(n)
    k, c = 2.0e4, 150.0
    point = flange(q_init)[0] + 0.005 * n          # the flange 5 mm behind the plane
    contacts = ros_node.collect(WrenchStamped, "/rne_sim/contact_wrench")
    extra = {"contact.frame": "arm7_flange", "contact.point": point.tolist(), "contact.normal": n.tolist(),
             "contact.stiffness": k, "contact.damping": c}
    sim = Sim(ros_procs, ros_node, "float64_multi_array", model_file=urdf, joints=model.joint_names,
              initial=q_init, extra=extra)
    h = 1.0 / RATE
    for step in range(4):
        _, q0, qd0 = sim.state()
        p, J = flange(q0)
        depth = n @ (point - p)
        F = n * max(0.0, k * depth - c * (n @ (J @ qd0))) if depth > 0 else np.zeros(3)
        if step == 0:
            assert abs(depth - 0.005) < 1e-12 and np.linalg.norm(F) > 50.0
        tau = rc.gravity_torques(model, q0)
        (_, q0, qd0), (_, q1, qd1) = sim.step(Float64MultiArray(data=tau.tolist()))
        qdd = rc.forward_dynamics(model, q0, qd0, tau + J.T @ F, friction=False)
        np.testing.assert_allclose(qd1, qd0 + h * qdd, rtol=0, atol=1e-9)
    assert ros_node.wait_for(lambda: len(contacts) > 0, 5.0)
    forces = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z] for m in contacts.snapshot()[0]])
    assert np.linalg.norm(forces, axis=1).max() > 50.0                    # pushed while in contact
    np.testing.assert_allclose(forces @ n, np.linalg.norm(forces, axis=1), atol=1e-9)   # along n, never pulling
    assert sim.proc.stop() == 0
