"""``rne_demo --collision``: the 7-DOF arm (config/arm7_controller.yaml, 1 kHz) tracks a trajectory of its flange
into a contact plane, once with ``collision.reaction: none`` (report only: computed torque keeps pressing)
and once with ``collision.reaction: damp`` (it detects, floats damped and stops pressing), rne_sim in
lockstep with rne_controller (sim time, deterministic).

The scene (:func:`scene`): ``rne_sim``'s contact plane stops the origin of ``arm7_flange``; it is horizontal,
``PLANE_BELOW`` under the flange's start, and the trajectory (a min-jerk of ``T_MOVE`` s in joint space,
computed to lower the flange by ``PLANE_BELOW + DEPTH`` with its orientation held) ends ``DEPTH`` behind it.
The plane is compliant (``STIFFNESS``, ``DAMPING``: a padded surface) and the approach slow, so that the
force is the controller's push rather than an impact the reaction comes too late for.

The thresholds (``THRESHOLD_FRACTION`` of the effort limits, 5 %: 4.35 N m on joints 1-4, 0.6 N m on
joints 5-7) sit 2.5x above the free-motion bound of the observer, |r| <= 2 % of the limits, and below the
contact's torques (when the no-reaction run presses with 15 N: 1.2x, 1.8x and 3.3x the thresholds of joints
2, 4 and 6; the others carry almost none).

Before the two runs, the arm at rest takes a constant wrench at the flange whose joint torque is
``WRENCH_RATIO`` (2) times the threshold on its most loaded joint, for ``WRENCH_HOLD`` s (report only):
the detection delay from its onset against the goal ln 2 / K_O + 2 cycles. The wrench's onset (and end) are found
by replaying each recorded step of the simulation without it (with it): :func:`replay_change`; the contact's
onset is the first state with a nonzero contact force.

Recorded: ``/joint_states``, the controller's ``~/external_torque`` (state_publish_rate 0: every cycle) and
``~/collision``, rne_sim's ``~/contact_wrench``. The analysis, the report and the plot:
:mod:`.collision_report`.
"""
from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np

from ...control.profiles import min_jerk
from .collision_report import analyse, plot_collision, print_collision_report
from .motions import frame_moved
from .node import start_contact_loop, stop_contact_loop, wait_until
from .robots import config_plant, demo_setup
from .session import Session, log, return_to

ROBOTS = ("arm7",)
FRAME = "arm7_flange"
PLANE_BELOW = 0.04         # m: the plane under the flange's start
DEPTH = 0.08               # m: how far behind the plane the trajectory ends
T_MOVE = 2.0               # s: the min-jerk into the plane
LEAD, RUN = 0.3, 3.0       # s: from sending to the start of the motion; recorded from the start
STIFFNESS, DAMPING = 3000.0, 30.0    # N/m, N s/m
THRESHOLD_FRACTION = 0.05
K_O = 50.0                 # 1/s, the controller's default
WRENCH_RATIO = 2.0         # the constant wrench's joint torque / the threshold, on its most loaded joint
WRENCH_HOLD = 0.2          # s


def scene(model, q0):
    """(q1, plane point, plane normal): the joint positions that put the flange ``PLANE_BELOW + DEPTH`` under
    its start at ``q0``, orientation held, and the horizontal plane ``PLANE_BELOW`` under it (base frame)."""
    import rne_control as rc

    p0 = rc.frame_pose(model, q0, FRAME)[:3, 3]
    q1 = frame_moved(model, q0, FRAME, [0.0, 0.0, -(PLANE_BELOW + DEPTH)])
    return q1, p0 - np.array([0.0, 0.0, PLANE_BELOW]), np.array([0.0, 0.0, 1.0])


def step_wrench(model, q0, thresholds):
    """The constant wrench [f; m] at ``FRAME``, in its axes: a force along its z axis (the tool's, pointing
    down at the start: a push upward), scaled so that its largest joint torque at ``q0`` relative to the
    thresholds is ``WRENCH_RATIO``; and those torques."""
    w = np.array([0.0, 0.0, -1.0, 0.0, 0.0, 0.0])
    tau = wrench_torques(model, q0[None], w)[0]
    w *= WRENCH_RATIO / float(np.max(np.abs(tau) / thresholds))
    return w, wrench_torques(model, q0[None], w)[0]


def wrench_torques(model, q, w):
    """J^T [R f; R m] per row of ``q``: the joint torques of the wrench ``w`` at ``FRAME`` in its axes."""
    import rne_control as rc

    T = rc.frame_pose(model, q, FRAME)
    J = rc.frame_jacobian(model, q, FRAME)
    Rw = np.concatenate([T[:, :3, :3] @ w[:3], T[:, :3, :3] @ w[3:]], axis=1)
    return np.einsum("kij,ki->kj", J, Rw)


def replay_change(sim, period, substeps, states, t_from, wrench=None):
    """The stamp of the first recorded state after ``t_from`` whose step the simulation does not reproduce
    with the wrench ``wrench`` at ``FRAME`` (None: without one), or None: without it, the first step under the
    wrench (its onset); with it, the first step after it was removed. ``sim``: a Simulation like rne_sim's,
    whose steps (``period`` s) are ``substeps`` RK4 steps; ``states``: (t, q, qd, effort) in time order; the
    replay of each step starts from the recorded state before it and applies the recorded effort (the torque
    rne_sim applied over the step). None also if fewer than 10 steps before it were reproduced (then the
    replay is not rne_sim's)."""
    from ...dynamics.integrate import State

    sim.set_wrench(None if wrench is None else FRAME, wrench)
    h = period / substeps
    agreed = 0
    for (t_a, qa, qda, _), (t_b, qb, qdb, tau) in zip(states, states[1:]):
        if t_b <= t_from or abs(t_b - t_a - period) > 1e-6:
            continue
        sim.state = State(qa.copy(), qda.copy())
        for _ in range(substeps):
            sim.step(tau, h, True)
        err = max(np.abs(sim.state.q - qb).max(), np.abs(sim.state.qd - qdb).max())
        if err > 1e-9:
            return t_b if agreed >= 10 else None
        agreed += 1
    return None


class Recorder:
    """Raw recordings on the demo node ``node`` of ``~/external_torque``, ``~/contact_wrench`` and
    ``~/collision`` (its values, with the demo's sim time on arrival: the Bool has no stamp)."""

    def __init__(self, dn):
        from geometry_msgs.msg import WrenchStamped
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool

        self.dn = dn
        self.lock = threading.Lock()
        self.raw = {"r": [], "F": []}
        self.collision = []
        node = dn.node
        node.create_subscription(JointState, "/rne_controller/external_torque",
                                 lambda b: self._keep("r", b), 20000, raw=True)
        node.create_subscription(WrenchStamped, "/rne_sim/contact_wrench", lambda b: self._keep("F", b), 20000,
                                 raw=True)
        latched = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(Bool, "/rne_controller/collision", self._on_collision, latched)
        self.wrench_pub = node.create_publisher(WrenchStamped, "/rne_sim/applied_wrench", 10)

    def _keep(self, key, b):
        with self.lock:
            self.raw[key].append(b)

    def _on_collision(self, m):
        with self.lock:
            self.collision.append((self.dn.now(), bool(m.data)))

    def publish_wrench(self, w):
        from geometry_msgs.msg import WrenchStamped

        m = WrenchStamped()
        m.header.frame_id = FRAME
        (m.wrench.force.x, m.wrench.force.y, m.wrench.force.z,
         m.wrench.torque.x, m.wrench.torque.y, m.wrench.torque.z) = (float(x) for x in w)
        self.wrench_pub.publish(m)

    def series(self):
        """(t_r, r), (t_F, F): the stamps (s) and values of ~/external_torque and ~/contact_wrench so far."""
        from geometry_msgs.msg import WrenchStamped
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState

        from ..conversions import stamp_to_sec

        with self.lock:
            raw_r, raw_F = list(self.raw["r"]), list(self.raw["F"])
        rs = [deserialize_message(b, JointState) for b in raw_r]
        Fs = [deserialize_message(b, WrenchStamped) for b in raw_F]
        t_r = np.array([stamp_to_sec(m.header.stamp) for m in rs])
        r = np.array([m.effort for m in rs], float).reshape(len(rs), -1)
        t_F = np.array([stamp_to_sec(m.header.stamp) for m in Fs])
        F = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z] for m in Fs], float).reshape(-1, 3)
        return (t_r, r), (t_F, F)

    def last_stamps(self):
        """The stamps (s) of the last ~/external_torque and ~/contact_wrench messages recorded (-inf: none)."""
        from geometry_msgs.msg import WrenchStamped
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState

        from ..conversions import stamp_to_sec

        with self.lock:
            last = [(b[-1] if b else None) for b in (self.raw["r"], self.raw["F"])]
        return tuple(-math.inf if b is None else stamp_to_sec(deserialize_message(b, typ).header.stamp)
                     for b, typ in zip(last, (JointState, WrenchStamped)))


def run(args, spec, cfg_path, cfg):
    """The collision demo (see the module docstring); returns the exit code."""
    ctl_cfg, sim_cfg, joints, model = demo_setup(args, cfg, "--collision", ROBOTS, "with the contact plane")
    from ...control.simulation import Simulation

    t_begin = time.monotonic()
    limits = np.asarray(ctl_cfg["effort_limits"], float)
    thresholds = THRESHOLD_FRACTION * limits
    rate = float(ctl_cfg["rate"])
    q0 = np.asarray(sim_cfg["initial_positions"], float)
    q1, point, normal = scene(model, q0)
    wrench, wrench_tau = step_wrench(model, q0, thresholds)

    # a Simulation like rne_sim's, to find the wrench's onset by replaying the recorded steps
    sim = Simulation(config_plant(model, sim_cfg), q0, np.zeros_like(q0), friction=bool(sim_cfg.get("friction", True)),
                     damping=sim_cfg.get("joint_damping"))
    substeps = max(1, int(round(float(sim_cfg.get("sim_rate", 2000.0)) / rate)))
    plane = (FRAME, point, normal, STIFFNESS, DAMPING)     # as Simulation.set_contact keeps it (a unit normal)

    ctl = {"use_sim_time": True, "state_publish_rate": 0.0, "observer.gain": [K_O],
           "collision.thresholds": thresholds, "collision.reaction": "none"}
    log(f"robot {args.robot} in lockstep at {rate:.0f} Hz: a plane {PLANE_BELOW * 100:.0f} cm under {FRAME} "
        f"(k = {STIFFNESS:.0f} N/m, c = {DAMPING:.0f} N s/m), a trajectory {DEPTH * 100:.0f} cm behind it")
    with Session() as session:
        procs = session.procs
        # the controller's and rne_sim's outputs other than /joint_states keep only 10 messages for the demo
        dn, rec = start_contact_loop(
            session, cfg_path, joints, rate, ctl, plane, Recorder,
            lambda rec: rec.wrench_pub.get_subscription_count() > 0 and bool(rec.raw["r"]),
            "no ~/external_torque from rne_controller or no ~/applied_wrench reader in rne_sim")
        log(f"loop running ({time.monotonic() - t_begin:.1f} s after start)")

        # the constant wrench, the arm at rest, reaction none
        wait_until(dn, dn.now() + 0.5, procs)
        t_pub = dn.now()
        rec.publish_wrench(wrench)
        log(f"constant wrench: {abs(wrench[2]):.2f} N along {FRAME}'s z at {WRENCH_RATIO:g}x the threshold of "
            f"{joints[int(np.argmax(np.abs(wrench_tau) / thresholds))]}, for {WRENCH_HOLD:g} s")
        wait_until(dn, t_pub + WRENCH_HOLD, procs)
        rec.publish_wrench(np.zeros(6))
        wait_until(dn, dn.now() + 0.6, procs)

        into = lambda t: min_jerk(t, T_MOVE, q0, q1)  # noqa: E731
        starts = []
        for i, reaction in enumerate(("none", "damp")):
            if i > 0:
                return_to(dn, q0, 1.5)
                dn.set_params({"collision.reaction": reaction})
                wait_until(dn, dn.now() + 0.5, procs)
            start = dn.now() + LEAD
            dn.send(into, T_MOVE, start)
            log(f"collision.reaction {reaction}: trajectory into the plane sent ({T_MOVE:g} s)")
            wait_until(dn, start + RUN, procs)
            starts.append(start)
        states = stop_contact_loop(session, starts[-1] + RUN, lambda: min(rec.last_stamps()),
                                   "the recordings did not reach the end of the last run")
        (t_r, r), (t_F, F) = rec.series()
        with rec.lock:
            collision = list(rec.collision)

        log("analysing")
        res = analyse(model, FRAME, joints, thresholds, limits, K_O, 1.0 / rate, states, (t_r, r), (t_F, F),
                      collision, runs=[("reaction none", starts[0]), ("reaction damp", starts[1])], run_length=RUN,
                      wrench=dict(w=wrench, t_pub=t_pub, hold=WRENCH_HOLD, ratio=WRENCH_RATIO,
                                  torques=lambda q: wrench_torques(model, q, wrench),
                                  change=lambda st, t0, w: replay_change(sim, 1.0 / rate, substeps, st, t0, w)),
                      contact=lambda q, qd: sim.contact_force(q, qd, plane)[0])
        scene_text = dict(frame=FRAME, below=PLANE_BELOW, depth=DEPTH, stiffness=STIFFNESS, damping=DAMPING,
                          fraction=THRESHOLD_FRACTION, T=T_MOVE, rate=rate)
        print_collision_report(res, scene_text)
        out = Path(args.output).resolve()
        plot_collision(res, out)
        log(f"plot written to {out}")
        log(f"done in {time.monotonic() - t_begin:.1f} s")
    return session.code
