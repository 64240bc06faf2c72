"""``rne_demo --cartesian``: the 7-DOF arm (config/arm7_controller.yaml, 1 kHz) in ``rne_controller``'s
``cartesian_impedance`` mode, rne_sim in lockstep with it (sim time, deterministic), the task frame
``arm7_flange`` (``end_effector_frame``), the commanded stiffness ``K`` (N/m, N m/rad, base axes; the
controller's default, set explicitly) and ``max_cartesian_velocity`` ``V_MAX`` (the default, likewise):

1. the arm holds the pose it starts in while rne_sim pushes the flange with a constant wrench (``PUSH``: N
   and N m, base axes at the start pose, sent on ``~/applied_wrench`` in the flange's axes) for ``HOLD`` s,
   then releases it: the stiffness per axis is the wrench over the deflection it leaves in steady state;
2. one ``~/target_pose`` moves the target ``STEP_DP`` (0.3 m) and ``STEP_ANGLE`` (90 deg about the base's z
   axis) from the controller's held target: the shaped path, no faster than ``V_MAX``; the settling time,
   the peak tool speed and sigma_min(J) along the way. Before it is sent, the straight path is followed by
   inverse kinematics from the measured configuration (:func:`path_reach`): reachable, within the joint
   limits, sigma_min(J) along it;
3. the target goes ``F_PRESS / PLANE_STIFFNESS`` behind the contact plane under the flange (rne_sim's
   ``contact.*``: a horizontal plane ``GAP`` under the step's target, stiffness ``PLANE_STIFFNESS`` and damping
   ``PLANE_DAMPING``), then ``~/target_wrench`` asks for F_d = ``F_PRESS`` N into it (a force at the flange's
   origin, in its axes): with the target where the plane's spring holds F_d, the impedance's spring adds nothing
   at rest and the force on the plane is F_d (in general (F_d + K_n d) / (1 + K_n / k), the target d behind a
   plane of stiffness k, K_n the impedance's along its normal).

Recorded: ``/joint_states`` (the analysis' poses, twists J(q) qd and sigma_min(J) come from them and the
model), the controller's ``~/task_state`` (state_publish_rate 0: every cycle) and rne_sim's
``~/contact_wrench``. The analysis, the report and the plot: :mod:`.cartesian_report`.
"""
from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np

from .cartesian_report import analyse, plot_cartesian, print_cartesian_report
from .node import start_contact_loop, stop_contact_loop, wait_until
from .session import Session, log
from .robots import demo_setup

ROBOTS = ("arm7",)
FRAME = "arm7_flange"
K = np.array([200.0, 200.0, 200.0, 20.0, 20.0, 20.0])    # N/m, N m/rad: cartesian_stiffness (base axes)
V_MAX = (0.25, 1.0)                                       # m/s, rad/s: max_cartesian_velocity
PUSH = np.array([6.0, -4.0, 5.0, 0.4, -0.3, 0.35])        # N, N m: the constant wrench, base axes at the start
SETTLE0 = 0.8                                             # s: after the loop runs (the activation ramp: 0.5 s)
HOLD, RELEASE = 2.5, 1.5                                  # s: the wrench held; the rest after its release
STEP_DP = np.array([0.1, 0.2, -0.2])                      # m, base axes: |STEP_DP| = 0.3
STEP_AXIS, STEP_ANGLE = np.array([0.0, 0.0, 1.0]), math.pi / 2   # the step's rotation (base axes), rad
STEP_RUN = 5.0                                            # s: recorded from sending the step
GAP = 0.02                                                # m: the plane under the step's target
PLANE_STIFFNESS, PLANE_DAMPING = 10000.0, 100.0           # N/m, N s/m (rne_sim's contact defaults)
F_PRESS = 10.0                                            # N: F_d into the plane
APPROACH, PRESS = 0.7, 2.0                                # s: the target behind the plane; then F_d
PATH_SAMPLES = 51                                         # poses along the step at which path_reach solves


def rotation_step():
    """The step's rotation (3x3, base axes): ``STEP_ANGLE`` about ``STEP_AXIS``."""
    from ...control.task.rotation import exp

    return exp(STEP_AXIS * STEP_ANGLE)


def path_reach(model, q, p0, R0, p1, R1, samples=PATH_SAMPLES):
    """Follow the straight path from the pose (p0 (3,) m, R0) to (p1, R1) of ``FRAME`` (base frame; the
    rotation about the constant axis of log(R1 R0^T), as the shaped target moves) by damped Gauss-Newton from
    the joint positions ``q`` (rad), ``samples`` poses; return dict(q=the joint positions at the end,
    sigma_min=the smallest singular value of J (6 x n, [m/s; rad/s] per rad/s) along it, within_limits=whether
    every solution keeps to the model's position limits). ValueError if a pose does not converge to 1e-10."""
    import rne_control as rc
    from ...control.task.rotation import exp, log

    phi = log(np.asarray(R1, float) @ np.asarray(R0, float).T)
    lo, hi = np.asarray(model.position_limits, float).T
    q = np.array(q, dtype=float)
    sigma, within = math.inf, True
    for s in np.linspace(0.0, 1.0, samples):
        p_goal, R_goal = (1 - s) * np.asarray(p0, float) + s * np.asarray(p1, float), exp(s * phi) @ R0
        for _ in range(200):
            T = rc.frame_pose(model, q, FRAME)
            e = np.r_[p_goal - T[:3, 3], log(R_goal @ T[:3, :3].T)]
            if np.linalg.norm(e) < 1e-10:
                break
            J = rc.frame_jacobian(model, q, FRAME)
            q += J.T @ np.linalg.solve(J @ J.T + 1e-9 * np.eye(6), e)
        else:
            raise ValueError(f"{FRAME} cannot follow the step: no inverse kinematics at {100 * s:.0f} % of it")
        sigma = min(sigma, float(np.linalg.svd(rc.frame_jacobian(model, q, FRAME), compute_uv=False)[-1]))
        within &= bool(np.all((q >= lo) & (q <= hi)))
    return dict(q=q, sigma_min=sigma, within_limits=within)


class Recorder:
    """Raw recordings on the demo node ``dn`` of the controller's ``~/task_state`` (with the demo's sim time
    on arrival: it has no stamp) and rne_sim's ``~/contact_wrench``; publishers of ``~/target_pose``,
    ``~/target_wrench`` (rne_controller) and ``~/applied_wrench`` (rne_sim)."""

    def __init__(self, dn):
        from geometry_msgs.msg import PoseStamped, WrenchStamped
        from std_msgs.msg import Float64MultiArray

        self.dn = dn
        self.lock = threading.Lock()
        self.task, self.F = [], []
        node = dn.node
        node.create_subscription(Float64MultiArray, "/rne_controller/task_state", self._on_task, 20000, raw=True)
        node.create_subscription(WrenchStamped, "/rne_sim/contact_wrench", self._on_contact, 20000, raw=True)
        self.target_pub = node.create_publisher(PoseStamped, "/rne_controller/target_pose", 10)
        self.target_wrench_pub = node.create_publisher(WrenchStamped, "/rne_controller/target_wrench", 10)
        self.applied_pub = node.create_publisher(WrenchStamped, "/rne_sim/applied_wrench", 10)

    def _on_task(self, b):
        t = self.dn.now()
        with self.lock:
            self.task.append((t, b))

    def _on_contact(self, b):
        with self.lock:
            self.F.append(b)

    def ready(self):
        """Whether every publisher has its reader and ~/task_state and ~/contact_wrench come."""
        return (self.target_pub.get_subscription_count() > 0 and self.target_wrench_pub.get_subscription_count() > 0
                and self.applied_pub.get_subscription_count() > 0 and len(self.task) > 0 and len(self.F) > 0)

    @staticmethod
    def _wrench(frame, w):
        from geometry_msgs.msg import WrenchStamped

        m = WrenchStamped()
        m.header.frame_id = frame
        (m.wrench.force.x, m.wrench.force.y, m.wrench.force.z,
         m.wrench.torque.x, m.wrench.torque.y, m.wrench.torque.z) = (float(x) for x in w)
        return m

    def apply_wrench(self, w):
        """rne_sim's ~/applied_wrench: ``w`` = [force (N); moment (N m)] at ``FRAME``'s origin, in its axes."""
        self.applied_pub.publish(self._wrench(FRAME, w))

    def target_wrench(self, w):
        """The controller's ~/target_wrench: F_d = [force (N); moment (N m)] at ``FRAME``'s origin, in its axes
        (converted to base axes at the state the controller has when it arrives). Not "": that is a wrench at the
        base's origin, whose force the conversion to the end effector gives a moment (o_base - o_ee) x f."""
        self.target_wrench_pub.publish(self._wrench(FRAME, w))

    def target_pose(self, p, R):
        """The controller's ~/target_pose: position ``p`` (m) and rotation ``R`` (3x3), base frame."""
        from geometry_msgs.msg import PoseStamped

        from ...control.task.rotation import matrix_quaternion

        m = PoseStamped()
        m.pose.position.x, m.pose.position.y, m.pose.position.z = (float(x) for x in p)
        o = m.pose.orientation
        o.x, o.y, o.z, o.w = (float(x) for x in matrix_quaternion(R))
        self.target_pub.publish(m)

    @staticmethod
    def _fields(b):
        from rclpy.serialization import deserialize_message
        from std_msgs.msg import Float64MultiArray

        m = deserialize_message(b, Float64MultiArray)
        out, at = {}, 0
        for d in m.layout.dim:
            out[d.label] = np.array(m.data[at:at + d.size])
            at += d.size
        return out

    def last_task(self):
        """The fields of the last ~/task_state received ({label: values})."""
        with self.lock:
            b = self.task[-1][1]
        return self._fields(b)

    def task_series(self):
        """(arrival sim times (s), {label: (N, size) values}) of every ~/task_state received."""
        with self.lock:
            rows = list(self.task)
        fields = [self._fields(b) for _, b in rows]
        labels = list(fields[0]) if fields else []
        return np.array([t for t, _ in rows]), {k: np.array([f[k] for f in fields]) for k in labels}

    def contact_series(self):
        """(stamps (s), forces (N, 3): on the flange, base axes) of ~/contact_wrench."""
        from geometry_msgs.msg import WrenchStamped
        from rclpy.serialization import deserialize_message

        from ..conversions import stamp_to_sec

        with self.lock:
            raw = list(self.F)
        ms = [deserialize_message(b, WrenchStamped) for b in raw]
        return (np.array([stamp_to_sec(m.header.stamp) for m in ms]),
                np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z] for m in ms], float).reshape(-1, 3))

    def last_contact_stamp(self):
        """The stamp (s) of the last ~/contact_wrench recorded (-inf: none)."""
        from geometry_msgs.msg import WrenchStamped
        from rclpy.serialization import deserialize_message

        from ..conversions import stamp_to_sec

        with self.lock:
            b = self.F[-1] if self.F else None
        return -math.inf if b is None else stamp_to_sec(deserialize_message(b, WrenchStamped).header.stamp)


def run(args, spec, cfg_path, cfg):
    """The Cartesian demo (see the module docstring); returns the exit code."""
    ctl_cfg, sim_cfg, joints, model = demo_setup(args, cfg, "--cartesian", ROBOTS, "with the contact plane")
    import rne_control as rc
    from ...control.settings import DEFAULTS
    from ...control.task.rotation import log as rotation_log
    from ...control.task.rotation import quaternion_matrix

    t_begin = time.monotonic()
    rate = float(ctl_cfg["rate"])
    q0 = np.asarray(sim_cfg["initial_positions"], float)
    # the plane: horizontal, GAP under where the step takes the flange from its start pose
    T0 = rc.frame_pose(model, q0, FRAME)
    normal = np.array([0.0, 0.0, 1.0])
    point = T0[:3, 3] + STEP_DP - GAP * normal
    depth = F_PRESS / PLANE_STIFFNESS      # m: the target behind the plane, where its spring holds F_d

    ctl = {"use_sim_time": True, "state_publish_rate": 0.0, "mode": "cartesian_impedance",
           "end_effector_frame": FRAME, "cartesian_stiffness": K, "max_cartesian_velocity": list(V_MAX)}
    log(f"robot {args.robot} in lockstep at {rate:.0f} Hz, cartesian_impedance at {FRAME}: K = "
        f"{K[:3].tolist()} N/m, {K[3:].tolist()} N m/rad; a plane {GAP * 100:.0f} cm under the step's target "
        f"(k = {PLANE_STIFFNESS:.0f} N/m, c = {PLANE_DAMPING:.0f} N s/m)")
    with Session() as session:
        procs = session.procs
        dn, rec = start_contact_loop(
            session, cfg_path, joints, rate, ctl, (FRAME, point, normal, PLANE_STIFFNESS, PLANE_DAMPING), Recorder,
            Recorder.ready, "no ~/task_state or ~/contact_wrench, or no reader of the demo's commands")
        log(f"loop running ({time.monotonic() - t_begin:.1f} s after start)")

        # 1. the constant wrench at the held pose, given in the flange's axes
        wait_until(dn, dn.now() + SETTLE0, procs)
        R_now = rc.frame_pose(model, dn.last_state[1], FRAME)[:3, :3]
        w_flange = np.r_[R_now.T @ PUSH[:3], R_now.T @ PUSH[3:]]
        t_push = dn.now()
        rec.apply_wrench(w_flange)
        log(f"constant wrench at {FRAME}: {PUSH[:3].tolist()} N, {PUSH[3:].tolist()} N m (base axes), {HOLD:g} s")
        wait_until(dn, t_push + HOLD, procs)
        rec.apply_wrench(np.zeros(6))
        t_release = dn.now()
        wait_until(dn, t_release + RELEASE, procs)

        # 2. the step, from the controller's held target
        held = rec.last_task()
        p_a = held["target_position"]
        R_a = quaternion_matrix(*held["target_orientation"])
        p_b, R_b = p_a + STEP_DP, rotation_step() @ R_a
        size = (float(np.linalg.norm(p_b - p_a)), float(np.linalg.norm(rotation_log(R_b @ R_a.T))))
        reach = path_reach(model, dn.last_state[1], p_a, R_a, p_b, R_b)
        if not reach["within_limits"]:
            raise RuntimeError("the step's straight path leaves the joint limits")
        t_step = dn.now()
        rec.target_pose(p_b, R_b)
        log(f"step of the target sent: {size[0]:.4f} m and {math.degrees(size[1]):.2f} deg "
            f"(sigma_min along it by inverse kinematics: {reach['sigma_min']:.3f})")
        wait_until(dn, t_step + STEP_RUN, procs)

        # 3. the target behind the plane, then F_d into it
        p_c = p_b.copy()
        p_c[2] = point[2] - depth
        t_touch = dn.now()
        rec.target_pose(p_c, R_b)
        wait_until(dn, t_touch + APPROACH, procs)
        R_now = rc.frame_pose(model, dn.last_state[1], FRAME)[:3, :3]
        t_press = dn.now()
        rec.target_wrench(np.r_[R_now.T @ (-F_PRESS * normal), 0.0, 0.0, 0.0])   # into the plane, flange axes
        log(f"pressing: target {1e3 * depth:.1f} mm behind the plane, F_d = {F_PRESS:g} N into it")
        end = t_press + PRESS
        wait_until(dn, end, procs)
        states = stop_contact_loop(session, end, rec.last_contact_stamp,
                                   "the recordings did not reach the end of the run")
        task = rec.task_series()
        contact = rec.contact_series()

        log("analysing")
        res = analyse(model, FRAME, states, task, contact,
                      push=dict(t=t_push, t_release=t_release, w=w_flange, wrench=PUSH, K=K, rest=RELEASE),
                      step=dict(t=t_step, p_a=p_a, R_a=R_a, p_b=p_b, R_b=R_b, size=size, limits=V_MAX,
                                run=STEP_RUN, reach=reach),
                      press=dict(t_touch=t_touch, t=t_press, end=end, F_d=F_PRESS, point=point, normal=normal,
                                 k=PLANE_STIFFNESS, c=PLANE_DAMPING, depth=depth, K=K, p_c=p_c, R_c=R_b))
        scene = dict(robot=args.robot, frame=FRAME, rate=rate, K=K, hold=HOLD, gap=GAP,
                     singular_damping=DEFAULTS["singular_damping"], design=DEFAULTS["damping_design"],
                     zeta=DEFAULTS["cartesian_damping_ratio"][0])
        print_cartesian_report(res, scene)
        out = Path(args.output).resolve()
        plot_cartesian(res, out)
        log(f"plot written to {out}")
        log(f"done in {time.monotonic() - t_begin:.1f} s")
    return session.code
